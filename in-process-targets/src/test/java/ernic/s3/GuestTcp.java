package ernic.s3;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A minimal TCP client standing in for the guest's stack: active open with MSS and window-scale options,
 * in-order receive with immediate ACKs, sending within the store's window, go-back-N retransmit on its own
 * timer, FIN. Written from RFC 9293 for the tests, independent of the endpoint.
 */
final class GuestTcp {
    static final int SYN = 2, FIN = 1, RST = 4, PSH = 8, ACK = 16;
    static final int OUR_SHIFT = 6, OUR_WINDOW = 1 << 20, MSS = 1460;
    static final long RTO = 300_000_000L;

    private final Rig rig;
    final int port;
    final int iss;
    int sndUna, sndNxt, rcvNxt, peerWindow, peerShift = -1, peerMss = 536;
    boolean established, reset, peerFin, finQueued, finSent;
    private long rtoAt;
    /** What arrived in order, and its length (grown as needed, not copied per look). */
    byte[] in = new byte[1 << 16];
    int inLen;
    private byte[] out = new byte[1 << 16];
    private int outLen;
    /** Bytes of outbox before SND.UNA already acknowledged. */
    private int acked;
    GuestFrames.Segment synAck;
    int segmentsSent, dupAcksSent;
    /** Whether to advertise window scaling in the SYN. */
    boolean offerWindowScale = true;

    GuestTcp(Rig rig, int port) {
        this.rig = rig;
        this.port = port;
        this.iss = 0x10000 * port + 77;
    }

    void connect() {
        sndUna = iss;
        sndNxt = iss + 1;
        sendSyn();
    }

    private void sendSyn() {
        byte[] opts = offerWindowScale ? new byte[] {2, 4, (byte) (MSS >> 8), (byte) MSS, 1, 3, 3, OUR_SHIFT}
                : new byte[] {2, 4, (byte) (MSS >> 8), (byte) MSS};
        rig.send(GuestFrames.tcp(port, 9000, iss, 0, SYN, 65535, opts, new byte[0]));
        rtoAt = rig.ticker.nanoTime() + RTO;
    }

    void write(byte[] b) {
        if (outLen + b.length > out.length) {
            out = Arrays.copyOf(out, Math.max(out.length * 2, outLen + b.length));
        }
        System.arraycopy(b, 0, out, outLen, b.length);
        outLen += b.length;
    }

    int receivedSize() {
        return inLen;
    }

    void close() {
        finQueued = true;
    }

    private int windowField() {
        return (offerWindowScale && peerShift >= 0) ? OUR_WINDOW >> OUR_SHIFT : 65535;
    }

    private void sendSegment(int seq, int flags, byte[] data) {
        segmentsSent++;
        rig.send(GuestFrames.tcp(port, 9000, seq, rcvNxt, flags, windowField(), new byte[0], data));
    }

    void onSegment(GuestFrames.Segment s) {
        if (s.has(RST)) {
            reset = true;
            return;
        }
        if (!established) {
            if (s.has(SYN) && s.has(ACK) && s.ack() == iss + 1) {
                synAck = s;
                parseOptions(s.options());
                rcvNxt = s.seq() + 1;
                sndUna = iss + 1;
                peerWindow = s.window(); // never scaled in a SYN
                established = true;
                rtoAt = 0;
                sendSegment(sndNxt, ACK, new byte[0]);
            }
            return;
        }
        if (s.has(ACK) && s.ack() - sndUna > 0 && s.ack() - sndNxt <= 0) {
            int n = s.ack() - sndUna;
            int dataAcked = Math.min(n, outLen - acked);
            acked += dataAcked;
            sndUna = s.ack();
            rtoAt = sndUna == sndNxt ? 0 : rig.ticker.nanoTime() + RTO;
        }
        if (s.has(ACK)) {
            peerWindow = s.window() << Math.max(0, peerShift);
        }
        int len = s.data().length + (s.has(FIN) ? 1 : 0);
        if (len == 0) {
            return;
        }
        if (s.seq() == rcvNxt && !peerFin) {
            byte[] d = s.data();
            if (inLen + d.length > in.length) {
                in = Arrays.copyOf(in, Math.max(in.length * 2, inLen + d.length));
            }
            System.arraycopy(d, 0, in, inLen, d.length);
            inLen += d.length;
            rcvNxt += s.data().length;
            if (s.has(FIN)) {
                rcvNxt++;
                peerFin = true;
            }
        } else {
            dupAcksSent++;
        }
        sendSegment(sndNxt, ACK, new byte[0]);
    }

    private void parseOptions(byte[] o) {
        for (int i = 0; i < o.length; ) {
            int kind = o[i] & 0xff;
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                i++;
                continue;
            }
            int len = o[i + 1] & 0xff;
            if (kind == 2) {
                peerMss = (o[i + 2] & 0xff) << 8 | o[i + 3] & 0xff;
            } else if (kind == 3) {
                peerShift = o[i + 2] & 0xff;
            }
            i += len;
        }
        if (!offerWindowScale) {
            peerShift = -1;
        }
    }

    /** Sends what the store's window allows; true if anything went. */
    boolean pump() {
        if (!established || reset) {
            return false;
        }
        boolean sent = false;
        while (true) {
            int offset = acked + (sndNxt - sndUna);
            int avail = outLen - offset;
            int room = sndUna + peerWindow - sndNxt;
            int n = Math.min(Math.min(avail, Math.min(peerMss, MSS)), room);
            if (n <= 0 || finSent) {
                break;
            }
            sendSegment(sndNxt, ACK | PSH, Arrays.copyOfRange(out, offset, offset + n));
            sndNxt += n;
            sent = true;
        }
        if (finQueued && !finSent && acked + (sndNxt - sndUna) == outLen) {
            sendSegment(sndNxt, FIN | ACK, new byte[0]);
            sndNxt++;
            finSent = true;
            sent = true;
        }
        if (sent && rtoAt == 0) {
            rtoAt = rig.ticker.nanoTime() + RTO;
        }
        return sent;
    }

    void tick(long now) {
        if (rtoAt == 0 || now < rtoAt) {
            return;
        }
        if (!established) {
            sendSyn();
            return;
        }
        // go-back-N from SND.UNA
        sndNxt = sndUna;
        finSent = false;
        rtoAt = now + RTO;
        if (peerWindow == 0 && outLen > acked) {
            sendSegment(sndNxt, ACK, Arrays.copyOfRange(out, acked, acked + 1)); // window probe
            sndNxt++;
        }
    }

    boolean allAcked() {
        return sndUna == sndNxt && acked == outLen;
    }

    byte[] receivedBytes() {
        return Arrays.copyOf(in, inLen);
    }

    /** A bare segment with chosen fields, for refusal tests. */
    byte[] raw(int seq, int ack, int flags, byte[] data) {
        return GuestFrames.tcp(port, 9000, seq, ack, flags, windowField(), new byte[0], data);
    }

    static int u16(byte[] b, int at) {
        return ByteBuffer.wrap(b).getShort(at) & 0xffff;
    }
}
