package ernic.ipstack;

import static ernic.ipstack.Net.ACK;
import static ernic.ipstack.Net.FIN;
import static ernic.ipstack.Net.PSH;
import static ernic.ipstack.Net.RST;
import static ernic.ipstack.Net.SYN;
import static ernic.ipstack.Net.before;

/**
 * One TCP connection of the store, passive open only (RFC 9293): handshake, in-order data with cumulative
 * ACKs, a retransmit timer (go-back-N from the oldest unacknowledged byte, doubling), fast retransmit on
 * three duplicate ACKs, zero-window probes, FIN in both directions, RST. Out-of-order segments are dropped
 * and answered with a duplicate ACK (no reassembly). Both buffers are bounded; the advertised window is
 * the free receive buffer, so an application that stops reading stops the sender.
 */
public final class TcpConnection {
    enum State { SYN_RECEIVED, ESTABLISHED, TIME_WAIT, CLOSED }

    static final int OUR_MSS = 1460, MIN_MSS = 536;
    /**
     * Each direction's buffer limit: the window the store offers and what it keeps in flight. A guest under
     * TCG acknowledges a batch several milliseconds later, so 256 KiB in flight could stall a stream between
     * acknowledgements; 1 MiB (with one ACK per doorbell) took 64 MiB PUTs from about 0.65 of iperf3 to 0.9-1.2
     * (docs/performance.md, section 7).
     */
    public static final int BUFFER = 1024 * 1024;
    /** Our window scale: BUFFER >> RCV_SHIFT fits the 16-bit window field. */
    public static final int RCV_SHIFT = 5;
    static final long RTO_NANOS = 200_000_000L, RTO_MAX_NANOS = 6_400_000_000L;
    public static final int MAX_RETRIES = 8;
    static final long TIME_WAIT_NANOS = 2_000_000_000L, FIN_WAIT_NANOS = 60_000_000_000L;
    /** A connection that carried nothing this long is dropped (a guest that rebooted sends no FIN). */
    public static final long IDLE_NANOS = 15L * 60 * 1_000_000_000L;

    private final IpEndpoint endpoint;
    final long key;
    final int peerIp, peerPort, localPort;
    final byte[] peerMac;
    State state = State.SYN_RECEIVED;
    StreamHandler handler;

    final ByteRing sndBuf = new ByteRing(BUFFER), rcvBuf = new ByteRing(BUFFER);
    final int iss;
    int sndUna, sndNxt, sndWnd, sndShift, mss;
    int rcvNxt, rcvShift;
    /** The right edge of the window we last advertised. */
    private int rcvAdvertised;
    private boolean closeRequested, finSent, finAcked, peerFin, ackNow, freed;
    /** Taken segments since the endpoint's last end of batch (it answers once per batch). */
    boolean unsettled;
    /** Stopped sending data for lack of room in the sink: the endpoint's {@link IpEndpoint#roomAgain} resumes it. */
    boolean waitingForRoom;
    private int dupAcks, retries;
    private long rtoNanos = RTO_NANOS, timerAt, lingerUntil, lastHeard;

    TcpConnection(IpEndpoint endpoint, long key, int peerIp, int peerPort, int localPort, byte[] peerMac,
                  int iss, int irs, int peerMss, int peerShift) {
        this.endpoint = endpoint;
        this.key = key;
        this.peerIp = peerIp;
        this.peerPort = peerPort;
        this.localPort = localPort;
        this.peerMac = peerMac;
        this.iss = iss;
        this.sndUna = iss;
        this.sndNxt = iss + 1;
        this.rcvNxt = irs + 1;
        this.mss = Math.max(MIN_MSS, Math.min(OUR_MSS, peerMss));
        // RFC 7323: scaling only when both sides offered it; shifts above 14 are taken as 14.
        this.sndShift = peerShift < 0 ? 0 : Math.min(peerShift, 14);
        this.rcvShift = peerShift < 0 ? 0 : RCV_SHIFT;
    }

    // ---- the application's side ----

    /** Bytes waiting to be read. */
    public int readable() {
        return rcvBuf.size();
    }

    /** Whether the peer sent FIN and every byte before it was read. */
    public boolean atEof() {
        return peerFin && rcvBuf.size() == 0;
    }

    public int read(byte[] dst, int off, int len) {
        return rcvBuf.read(dst, off, len);
    }

    /** Room in the send buffer. */
    public int writable() {
        return closeRequested || state == State.CLOSED ? 0 : sndBuf.free();
    }

    /** Queues up to {@code len} bytes for sending; returns how many fitted. Sent when the handler returns. */
    public int write(byte[] src, int off, int len) {
        return writable() == 0 ? 0 : sndBuf.write(src, off, len);
    }

    /** Sends FIN once everything written is sent. */
    public void close() {
        closeRequested = true;
    }

    /** Resets the connection now. */
    public void abort() {
        if (state != State.CLOSED) {
            endpoint.emit(this, RST | ACK, sndNxt);
            endpoint.counters().inc(NetCounter.RESETS_OUT);
            state = State.CLOSED;
        }
    }

    public int peerAddress() {
        return peerIp;
    }

    public int peerPort() {
        return peerPort;
    }

    // ---- the wire's side ----

    void sendSynAck() {
        endpoint.emitSynAck(this);
    }

    /** One segment for this connection, header already checked. */
    void segment(int flags, int seq, int ack, int window, byte[] b, int data, int len, long now) {
        lastHeard = now;
        if ((flags & RST) != 0) {
            // RFC 5961 3.2: only an RST at exactly RCV.NXT resets; one elsewhere in the window gets a challenge ACK.
            if (seq == rcvNxt) {
                endpoint.counters().inc(NetCounter.RESETS_IN);
                state = State.CLOSED;
            } else if (inWindow(seq)) {
                ackNow = true;
            } else {
                endpoint.counters().inc(NetCounter.DROP_TCP_SEQUENCE);
            }
            return;
        }
        if ((flags & SYN) != 0) {
            if (state == State.SYN_RECEIVED && seq == rcvNxt - 1) {
                sendSynAck(); // the SYN again: our SYN-ACK was lost
            } else {
                ackNow = true; // RFC 5961 4.2: challenge ACK
            }
            return;
        }
        if ((flags & ACK) == 0) {
            endpoint.counters().inc(NetCounter.DROP_TCP_FLAGS);
            return;
        }
        if (state == State.SYN_RECEIVED) {
            if (ack != iss + 1) {
                endpoint.emit(this, RST, ack);
                endpoint.counters().inc(NetCounter.RESETS_OUT);
                endpoint.counters().inc(NetCounter.DROP_TCP_SEQUENCE);
                return;
            }
            state = State.ESTABLISHED;
            sndUna = iss + 1;
            sndWnd = window << sndShift;
            timerAt = 0;
            retries = 0;
            rtoNanos = RTO_NANOS;
            rcvAdvertised = rcvNxt + advertisedWindow();
        }
        acknowledge(ack, window, len, (flags & FIN) != 0, now);
        receive(seq, flags, b, data, len, now);
    }

    private boolean inWindow(int seq) {
        return !before(seq, rcvNxt) && before(seq, rcvNxt + Math.max(1, rcvBuf.free()));
    }

    private void acknowledge(int ack, int window, int len, boolean fin, long now) {
        if (before(sndNxt, ack)) {
            ackNow = true; // acknowledges something never sent
            endpoint.counters().inc(NetCounter.DROP_TCP_SEQUENCE);
            return;
        }
        int wnd = window << sndShift;
        if (before(sndUna, ack)) {
            int acked = ack - sndUna;
            int dataAcked = Math.min(acked, sndBuf.size());
            sndBuf.discard(dataAcked);
            freed |= dataAcked > 0;
            if (finSent && ack == sndNxt) {
                finAcked = true;
            }
            sndUna = ack;
            dupAcks = 0;
            retries = 0;
            rtoNanos = RTO_NANOS;
            timerAt = sndUna == sndNxt ? 0 : now + rtoNanos;
        } else if (ack == sndUna && sndNxt != sndUna && len == 0 && !fin && wnd == sndWnd) {
            if (++dupAcks == 3) {
                endpoint.counters().inc(NetCounter.FAST_RETRANSMITS);
                retransmitFromUna(now);
            }
        }
        sndWnd = wnd;
    }

    private void receive(int seq, int flags, byte[] b, int data, int len, long now) {
        boolean fin = (flags & FIN) != 0;
        if (len == 0 && !fin) {
            return;
        }
        if (peerFin) {
            ackNow = true; // a retransmitted FIN or data after it: ACK again
            return;
        }
        int skip = rcvNxt - seq;
        if (skip < 0) {
            endpoint.counters().inc(NetCounter.OUT_OF_ORDER);
            ackNow = true; // duplicate ACK tells the sender where we are
            return;
        }
        ackNow = true;
        if (skip > len) {
            return; // entirely old (len + FIN already seen is covered by peerFin)
        }
        int fresh = len - skip;
        int take = Math.min(fresh, rcvBuf.free());
        if (closeRequested && state != State.SYN_RECEIVED) {
            take = fresh; // the application is done reading: accept and discard
        } else {
            rcvBuf.write(b, data + skip, take);
        }
        rcvNxt += take;
        if (fin && take == fresh) {
            rcvNxt++;
            peerFin = true;
            if (finAcked) {
                state = State.TIME_WAIT; // we closed first: linger to ACK a retransmitted FIN
                lingerUntil = now + TIME_WAIT_NANOS;
            }
        }
    }

    /** After the handler ran: send what the window allows, FIN when due, and an ACK if one is owed. */
    void flush(long now) {
        if (state == State.CLOSED || state == State.SYN_RECEIVED) {
            return;
        }
        boolean sent = false;
        while (true) {
            int offset = sndNxt - sndUna;
            int avail = sndBuf.size() - offset;
            int room = sndUna + sndWnd - sndNxt;
            int n = Math.min(Math.min(avail, mss), room);
            if (n <= 0 || finSent) {
                break;
            }
            if (!endpoint.roomForData()) {
                // the guest's queue is full: room again (the guest posting RX buffers), its next ACK or the
                // endpoint's tick brings us back here
                endpoint.counters().inc(NetCounter.SINK_FULL);
                endpoint.waitForRoom(this);
                break;
            }
            // no Nagle: the store answers requests, and a response's last segment should not wait
            endpoint.emit(this, ACK | (n == avail ? PSH : 0), sndNxt, offset, n);
            sndNxt += n;
            sent = true;
        }
        if (closeRequested && !finSent && sndNxt - sndUna == sndBuf.size()) {
            endpoint.emit(this, FIN | ACK, sndNxt);
            sndNxt++;
            finSent = true;
            sent = true;
        }
        if (sent && timerAt == 0) {
            timerAt = now + rtoNanos;
        }
        if (!sent && sndBuf.size() > sndNxt - sndUna && sndWnd == 0 && timerAt == 0) {
            timerAt = now + rtoNanos; // persist timer: probe the zero window
        }
        int edge = rcvNxt + advertisedWindow();
        // A window update once the application has freed a worthwhile amount (RFC 9293 3.8.6.2.2).
        if (!sent && before(rcvAdvertised, edge) && edge - rcvAdvertised >= Math.min(BUFFER / 4, 4 * mss)) {
            ackNow = true;
        }
        if (ackNow && !sent) {
            endpoint.emit(this, ACK, sndNxt);
        }
        ackNow = false;
        rcvAdvertised = rcvNxt + advertisedWindow();
        if (peerFin && finAcked && state == State.ESTABLISHED) {
            state = State.CLOSED; // LAST-ACK done: the peer closed first, no TIME-WAIT here
        }
        if (finAcked && !peerFin && lingerUntil == 0) {
            lingerUntil = now + FIN_WAIT_NANOS; // FIN-WAIT-2 does not last forever
        }
    }

    /** The window field we advertise (already shifted). */
    int windowField() {
        return Math.min(0xffff, advertisedWindow() >>> rcvShift);
    }

    private int advertisedWindow() {
        int w = rcvBuf.free();
        return rcvShift == 0 ? Math.min(w, 0xffff) : w & -(1 << rcvShift);
    }

    /** The retransmit, persist, TIME-WAIT and FIN-WAIT-2 timers. */
    void tick(long now) {
        if (lingerUntil != 0 && now - lingerUntil >= 0) {
            state = State.CLOSED;
            return;
        }
        if (now - lastHeard >= IDLE_NANOS) {
            endpoint.counters().inc(NetCounter.IDLE_TIMEOUTS);
            abort();
            return;
        }
        if (timerAt == 0 || now - timerAt < 0) {
            return;
        }
        if (++retries > MAX_RETRIES) {
            endpoint.counters().inc(NetCounter.TIMEOUTS);
            abort();
            return;
        }
        rtoNanos = Math.min(rtoNanos * 2, RTO_MAX_NANOS);
        if (state == State.SYN_RECEIVED) {
            endpoint.counters().inc(NetCounter.RETRANSMITS);
            sendSynAck();
            timerAt = now + rtoNanos;
            return;
        }
        if (sndUna == sndNxt && sndWnd == 0 && sndBuf.size() > 0) {
            // Window probe: one byte beyond the closed window, to learn when it opens.
            endpoint.counters().inc(NetCounter.WINDOW_PROBES);
            endpoint.emit(this, ACK, sndNxt, 0, 1);
            sndNxt++;
            timerAt = now + rtoNanos;
            return;
        }
        if (sndUna != sndNxt) {
            retransmitFromUna(now);
        } else {
            timerAt = 0;
        }
    }

    private void retransmitFromUna(long now) {
        endpoint.counters().inc(NetCounter.RETRANSMITS);
        // go-back-N: everything after SND.UNA goes again, within the window (at least one segment).
        sndNxt = sndUna;
        finSent = false;
        int saved = sndWnd;
        sndWnd = Math.max(sndWnd, Math.min(mss, Math.max(1, sndBuf.size())));
        flush(now);
        sndWnd = saved;
        timerAt = now + rtoNanos;
    }

    void scheduleSynAckRetransmit(long now) {
        lastHeard = now;
        timerAt = now + rtoNanos;
    }

    /** Whether ACKs freed send-buffer room since the last call. */
    boolean takeFreed() {
        boolean f = freed;
        freed = false;
        return f;
    }

    boolean closed() {
        return state == State.CLOSED;
    }
}
