package ernic.ipstack;

import ernic.attach.FrameClaimer;

import ernic.common.InternetChecksum;

import static ernic.ipstack.Net.*;

import ernic.counters.Counters;
import io.netty.util.concurrent.Ticker;

import java.util.HexFormat;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The store as a host on the guest's Ethernet segment: it takes the frames the guest transmits, claims
 * those addressed to its IPv4 address, and answers ARP, ICMP echo and TCP on one port. Every field of a
 * claimed frame is checked; a bad one drops the frame with a counter, nothing throws. Replies leave through
 * a {@link GuestLink}. Owned by the device thread; time comes from the injected ticker, and {@link #tick()}
 * runs the TCP timers.
 */
public final class IpEndpoint implements FrameClaimer {
    /** Connections at once (the C original had 8; aws cli opens 10). */
    public static final int MAX_CONNECTIONS = 128;
    /** The largest frame taken: a 9000-byte MTU and an Ethernet header. */
    static final int MAX_FRAME = 9014;
    static final int TTL = 64;

    private final int ip, port;
    private final byte[] mac;
    private final GuestLink sink;
    private final Ticker ticker;
    private final Counters<NetCounter> counters;
    private final Function<TcpConnection, StreamHandler> acceptor;
    private final Map<Long, TcpConnection> connections = new HashMap<>();
    private final List<TcpConnection> scratch = new ArrayList<>();
    /** Connections that took segments in this TX batch, answered by {@link #endOfBatch}. */
    private final List<TcpConnection> unsettled = new ArrayList<>();
    /** Connections that stopped sending data for lack of room in the sink, oldest first; see {@link #roomAgain}. */
    private final ArrayDeque<TcpConnection> waitingForRoom = new ArrayDeque<>(MAX_CONNECTIONS);
    private final byte[] rx = new byte[MAX_FRAME], tx = new byte[MAX_FRAME];
    private final MemorySegment rxSeg = MemorySegment.ofArray(rx), txSeg = MemorySegment.ofArray(tx);
    private int ipId;

    /**
     * @param ip       the store's IPv4 address
     * @param port     its TCP port
     * @param acceptor makes the application side of a new connection (null refuses it with RST)
     */
    /** The MAC an endpoint at {@code ip} answers ARP with, as text (aa:bb:...). */
    public static String macOf(int ip) {
        return HexFormat.ofDelimiter(":").formatHex(endpointMac(ip));
    }

    public IpEndpoint(int ip, int port, GuestLink sink, Ticker ticker, Counters<NetCounter> counters,
                      Function<TcpConnection, StreamHandler> acceptor) {
        this.ip = ip;
        this.port = port;
        this.mac = endpointMac(ip);
        this.sink = sink;
        this.ticker = ticker;
        this.counters = counters;
        this.acceptor = acceptor;
    }

    public byte[] mac() {
        return mac.clone();
    }

    public int address() {
        return ip;
    }

    Counters<NetCounter> counters() {
        return counters;
    }

    /** Live connections (TIME-WAIT included). */
    public int connectionCount() {
        return connections.size();
    }

    /** Offers a frame the guest transmitted; true when it was the store's (answered or dropped). */
    /** The guest's frame, offered before the TAP: true when it was this endpoint's (see {@link #receive}). */
    @Override
    public boolean claim(MemorySegment frame) {
        return receive(frame);
    }

    @Override
    public void guestQueueDrained() {
        roomAgain();
    }

    public boolean receive(MemorySegment frame) {
        long size = frame.byteSize();
        int n = (int) Math.min(size, rx.length);
        MemorySegment.copy(frame, 0, rxSeg, 0, n);
        return receive(rx, n, size);
    }

    /** Offers a frame in {@code b[0..len)}; true when it was the store's. */
    public boolean receive(byte[] b, int len) {
        int size = Math.min(len, b.length);
        int n = Math.min(size, rx.length);
        System.arraycopy(b, 0, rx, 0, n);
        return receive(rx, n, size);
    }

    private boolean receive(byte[] b, int n, long size) {
        if (n < ETH_HLEN) {
            return false;
        }
        int type = u16(b, ETH_TYPE);
        if (type == ETHERTYPE_ARP) {
            if (n < ARP_END || u32(b, ARP_TPA) != ip) {
                return false;
            }
            counters.inc(NetCounter.FRAMES);
            if (size > n) {
                counters.inc(NetCounter.DROP_LENGTH);
            } else {
                arp(b);
            }
            return true;
        }
        if (type != ETHERTYPE_IPV4 || n < IP + IP_HLEN || u32(b, IP_DST) != ip) {
            return false;
        }
        counters.inc(NetCounter.FRAMES);
        if (size > n) {
            counters.inc(NetCounter.DROP_LENGTH);
        } else {
            ipv4(b, n);
        }
        return true;
    }

    private void arp(byte[] b) {
        if (u16(b, ARP_HTYPE) != 1 || u16(b, ARP_PTYPE) != ETHERTYPE_IPV4 || u8(b, ARP_HLEN) != 6
                || u8(b, ARP_PLEN) != 4 || (b[ARP_SHA] & 1) != 0 || (b[ETH_SRC] & 1) != 0) {
            counters.inc(NetCounter.DROP_ARP);
            return;
        }
        int op = u16(b, ARP_OP);
        if (op == ARP_REPLY) {
            return; // nothing to learn: replies go to the source MAC of each frame
        }
        if (op != ARP_REQUEST) {
            counters.inc(NetCounter.DROP_ARP);
            return;
        }
        System.arraycopy(b, ARP_SHA, tx, ETH_DST, 6);
        System.arraycopy(mac, 0, tx, ETH_SRC, 6);
        put16(tx, ETH_TYPE, ETHERTYPE_ARP);
        put16(tx, ARP_HTYPE, 1);
        put16(tx, ARP_PTYPE, ETHERTYPE_IPV4);
        tx[ARP_HLEN] = 6;
        tx[ARP_PLEN] = 4;
        put16(tx, ARP_OP, ARP_REPLY);
        System.arraycopy(mac, 0, tx, ARP_SHA, 6);
        put32(tx, ARP_SPA, ip);
        System.arraycopy(b, ARP_SHA, tx, ARP_THA, 6);
        System.arraycopy(b, ARP_SPA, tx, ARP_TPA, 4);
        java.util.Arrays.fill(tx, ARP_END, 60, (byte) 0);
        counters.inc(NetCounter.ARP_REPLIES);
        send(60);
    }

    private void ipv4(byte[] b, int n) {
        int vihl = u8(b, IP_VIHL);
        int ihl = (vihl & 0xf) * 4;
        int total = u16(b, IP_TOTLEN);
        if (vihl >>> 4 != 4 || ihl < IP_HLEN || total < ihl || IP + total > n) {
            counters.inc(NetCounter.DROP_IP_HEADER);
            return;
        }
        if (InternetChecksum.of(b, IP, ihl, 0) != 0) {
            counters.inc(NetCounter.DROP_IP_CHECKSUM);
            return;
        }
        int frag = u16(b, IP_FRAG);
        if ((frag & 0x8000) != 0) {
            counters.inc(NetCounter.DROP_IP_HEADER); // the reserved flag
            return;
        }
        if ((frag & (IP_MF | IP_OFFSET_MASK)) != 0) {
            counters.inc(NetCounter.DROP_FRAGMENT);
            return;
        }
        int src = u32(b, IP_SRC);
        int top = src >>> 24;
        if (src == 0 || src == -1 || src == ip || top == 127 || top >= 224 || (b[ETH_SRC] & 1) != 0) {
            counters.inc(NetCounter.DROP_ADDRESS);
            return;
        }
        int l4 = IP + ihl, l4len = total - ihl;
        switch (u8(b, IP_PROTO)) {
            case PROTO_ICMP -> icmp(b, src, l4, l4len);
            case PROTO_TCP -> tcp(b, src, l4, l4len);
            default -> counters.inc(NetCounter.DROP_PROTOCOL);
        }
    }

    private void icmp(byte[] b, int src, int l4, int len) {
        if (len < ICMP_HLEN || InternetChecksum.of(b, l4, len, 0) != 0 || u8(b, l4 + ICMP_TYPE) != ICMP_ECHO_REQUEST
                || u8(b, l4 + 1) != 0) {
            counters.inc(NetCounter.DROP_ICMP);
            return;
        }
        int at = ipHeader(b, ETH_SRC, src, PROTO_ICMP, len);
        System.arraycopy(b, l4, tx, at, len);
        tx[at + ICMP_TYPE] = ICMP_ECHO_REPLY;
        put16(tx, at + ICMP_CSUM, 0);
        put16(tx, at + ICMP_CSUM, InternetChecksum.of(tx, at, len, 0));
        counters.inc(NetCounter.ICMP_ECHO_REPLIES);
        send(at + len);
    }

    private void tcp(byte[] b, int src, int l4, int len) {
        if (len < TCP_HLEN) {
            counters.inc(NetCounter.DROP_TCP_HEADER);
            return;
        }
        if (InternetChecksum.of(b, l4, len, InternetChecksum.pseudoSum(src, ip, PROTO_TCP, len)) != 0) {
            counters.inc(NetCounter.DROP_TCP_CHECKSUM);
            return;
        }
        int hlen = (u8(b, l4 + TCP_OFF) >>> 4) * 4;
        int flags = u8(b, l4 + TCP_FLAGS);
        int sport = u16(b, l4 + TCP_SPORT), dport = u16(b, l4 + TCP_DPORT);
        if (hlen < TCP_HLEN || hlen > len) {
            counters.inc(NetCounter.DROP_TCP_HEADER);
            return;
        }
        if ((flags & 0x3f) == 0 || (flags & (SYN | FIN)) == (SYN | FIN) || (flags & (SYN | RST)) == (SYN | RST)) {
            counters.inc(NetCounter.DROP_TCP_FLAGS);
            return;
        }
        if (sport == 0) {
            counters.inc(NetCounter.DROP_ADDRESS);
            return;
        }
        counters.inc(NetCounter.SEGMENTS_IN);
        int seq = u32(b, l4 + TCP_SEQ), ack = u32(b, l4 + TCP_ACK), window = u16(b, l4 + TCP_WINDOW);
        int data = l4 + hlen, dlen = len - hlen;
        long key = (long) src << 32 | (long) sport << 16 | dport;
        TcpConnection c = connections.get(key);
        if (c != null && (flags & (SYN | ACK)) == SYN && c.state == TcpConnection.State.TIME_WAIT) {
            close(c); // a new connection from the same port ends TIME-WAIT (RFC 9293 3.6.1)
            c = null;
        }
        long now = ticker.nanoTime();
        if (c == null) {
            if ((flags & (SYN | ACK)) == SYN && dport == port) {
                open(b, key, src, sport, dport, seq, l4, hlen, now);
            } else {
                refuse(b, src, sport, dport, flags, seq, ack, dlen);
            }
            return;
        }
        c.segment(flags, seq, ack, window, b, data, dlen, now);
        afterSegment(c);
    }

    private void open(byte[] b, long key, int src, int sport, int dport, int seq, int l4, int hlen, long now) {
        int peerMss = 536, peerShift = -1; // RFC 9293 3.7.1: 536 when the SYN carries no MSS
        for (int at = l4 + TCP_HLEN, end = l4 + hlen; at < end; ) {
            int kind = u8(b, at);
            if (kind == OPT_END) {
                break;
            }
            if (kind == OPT_NOP) {
                at++;
                continue;
            }
            int olen = at + 1 < end ? u8(b, at + 1) : 0;
            if (olen < 2 || at + olen > end) {
                counters.inc(NetCounter.DROP_TCP_HEADER);
                return;
            }
            if (kind == OPT_MSS && olen == 4) {
                peerMss = u16(b, at + 2);
            } else if (kind == OPT_WSCALE && olen == 3) {
                peerShift = u8(b, at + 2);
            } else if (kind == OPT_MSS || kind == OPT_WSCALE) {
                counters.inc(NetCounter.DROP_TCP_HEADER);
                return;
            }
            at += olen;
        }
        if (connections.size() >= MAX_CONNECTIONS) {
            counters.inc(NetCounter.CONNECTIONS_REFUSED);
            refuse(b, src, sport, dport, SYN, seq, 0, 0);
            return;
        }
        byte[] peerMac = new byte[6];
        System.arraycopy(b, ETH_SRC, peerMac, 0, 6);
        TcpConnection c = new TcpConnection(this, key, src, sport, dport, peerMac,
                ThreadLocalRandom.current().nextInt(), seq, peerMss, peerShift);
        StreamHandler h = acceptor.apply(c);
        if (h == null) {
            counters.inc(NetCounter.CONNECTIONS_REFUSED);
            refuse(b, src, sport, dport, SYN, seq, 0, 0);
            return;
        }
        c.handler = h;
        connections.put(key, c);
        counters.inc(NetCounter.CONNECTIONS);
        counters.set(NetCounter.CONNECTIONS_OPEN, connections.size());
        c.sendSynAck();
        c.scheduleSynAckRetransmit(now);
    }

    /** RST for a segment no connection takes (RFC 9293 3.10.7.1); never in answer to an RST. */
    private void refuse(byte[] b, int src, int sport, int dport, int flags, int seq, int ack, int dlen) {
        if ((flags & SYN) == 0) {
            counters.inc(NetCounter.DROP_TCP_NO_CONNECTION);
        }
        if ((flags & RST) != 0) {
            return;
        }
        int len = dlen + ((flags & SYN) != 0 ? 1 : 0) + ((flags & FIN) != 0 ? 1 : 0);
        int at = ipHeader(b, ETH_SRC, src, PROTO_TCP, TCP_HLEN);
        if ((flags & ACK) != 0) {
            tcpHeader(at, dport, sport, ack, 0, RST, 0, TCP_HLEN);
        } else {
            tcpHeader(at, dport, sport, 0, seq + len, RST | ACK, 0, TCP_HLEN);
        }
        finishTcp(at, src, TCP_HLEN);
        counters.inc(NetCounter.RESETS_OUT);
        send(at + TCP_HLEN);
    }

    private void afterSegment(TcpConnection c) {
        if (!c.closed() && (c.readable() > 0 || c.atEof())) {
            c.handler.onReadable();
        }
        if (!c.closed() && c.takeFreed()) {
            c.handler.onWritable();
        }
        if (!c.unsettled) {
            c.unsettled = true;
            unsettled.add(c);
        }
    }

    /**
     * The end of one TX doorbell's frames: each connection that took segments sends its data and one
     * cumulative ACK now. A guest under TCG pays for every frame it receives; one ACK per segment
     * (what a 1,460-byte PUT stream got before) doubled the frames of an upload.
     */
    @Override
    public void endOfBatch() {
        if (unsettled.isEmpty()) {
            return;
        }
        long now = ticker.nanoTime();
        for (int i = 0; i < unsettled.size(); i++) {
            TcpConnection c = unsettled.get(i);
            c.unsettled = false;
            settle(c, now);
        }
        unsettled.clear();
    }

    /** Sends what the handler queued, or retires the connection once it is closed. */
    private void settle(TcpConnection c, long now) {
        c.flush(now);
        if (c.closed()) {
            close(c);
        }
    }

    private void close(TcpConnection c) {
        c.state = TcpConnection.State.CLOSED;
        if (c.waitingForRoom) {
            c.waitingForRoom = false;
            waitingForRoom.remove(c);
        }
        if (connections.remove(c.key) != null) {
            counters.set(NetCounter.CONNECTIONS_OPEN, connections.size());
            c.handler.onClosed();
        }
    }

    /** Drops every connection without a word to the guest (device reset: its stack is gone too). */
    public void reset() {
        for (TcpConnection c : unsettled) {
            c.unsettled = false;
        }
        unsettled.clear();
        for (TcpConnection c : waitingForRoom) {
            c.waitingForRoom = false;
        }
        waitingForRoom.clear();
        scratch.clear();
        scratch.addAll(connections.values());
        for (TcpConnection c : scratch) {
            close(c);
        }
        scratch.clear();
    }

    /** {@code c} stopped sending data because the sink had no room: {@link #roomAgain} resumes it. */
    void waitForRoom(TcpConnection c) {
        if (!c.waitingForRoom) {
            c.waitingForRoom = true;
            waitingForRoom.addLast(c);
        }
    }

    /**
     * The sink has room again (the guest posted RX buffers and the device delivered its backlog into them):
     * each connection that stopped for lack of room sends what it can now, oldest first, instead of waiting
     * for the guest's next segment or the 50 ms tick. One pass: a connection that fills the sink again
     * goes to the back and waits for the next call, the ones not reached keep their place.
     */
    public void roomAgain() {
        if (waitingForRoom.isEmpty()) {
            return;
        }
        long now = ticker.nanoTime();
        for (int n = waitingForRoom.size(); n > 0 && roomForData(); n--) {
            TcpConnection c = waitingForRoom.pollFirst();
            c.waitingForRoom = false;
            counters.inc(NetCounter.ROOM_WAKES);
            settle(c, now);
        }
    }

    /** Runs every connection's timers at the ticker's present time. */
    public void tick() {
        long now = ticker.nanoTime();
        scratch.clear();
        scratch.addAll(connections.values());
        for (TcpConnection c : scratch) {
            c.tick(now);
            settle(c, now);
        }
        scratch.clear();
    }

    // ---- frame building ----

    void emitSynAck(TcpConnection c) {
        int opts = c.rcvShift > 0 || c.sndShift > 0 ? 8 : 4;
        boolean ws = opts == 8;
        int at = ipHeader(c.peerMac, 0, c.peerIp, PROTO_TCP, TCP_HLEN + opts);
        // The window in a SYN-ACK is never scaled (RFC 7323 2.2).
        tcpHeader(at, c.localPort, c.peerPort, c.iss, c.rcvNxt, SYN | ACK, Math.min(0xffff, c.rcvBuf.free()),
                TCP_HLEN + opts);
        int o = at + TCP_HLEN;
        tx[o] = OPT_MSS;
        tx[o + 1] = 4;
        put16(tx, o + 2, TcpConnection.OUR_MSS);
        if (ws) {
            tx[o + 4] = OPT_NOP;
            tx[o + 5] = OPT_WSCALE;
            tx[o + 6] = 3;
            tx[o + 7] = (byte) c.rcvShift;
        }
        finishTcp(at, c.peerIp, TCP_HLEN + opts);
        counters.inc(NetCounter.SEGMENTS_OUT);
        send(at + TCP_HLEN + opts);
    }

    /** A segment without payload. */
    void emit(TcpConnection c, int flags, int seq) {
        emit(c, flags, seq, 0, 0);
    }

    /** A segment carrying {@code len} bytes from the send buffer at {@code offset} past SND.UNA. */
    void emit(TcpConnection c, int flags, int seq, int offset, int len) {
        int at = ipHeader(c.peerMac, 0, c.peerIp, PROTO_TCP, TCP_HLEN + len);
        int ack = (flags & ACK) != 0 ? c.rcvNxt : 0;
        tcpHeader(at, c.localPort, c.peerPort, seq, ack, flags, c.windowField(), TCP_HLEN);
        if (len > 0) {
            c.sndBuf.peek(offset, tx, at + TCP_HLEN, len);
        }
        finishTcp(at, c.peerIp, TCP_HLEN + len);
        counters.inc(NetCounter.SEGMENTS_OUT);
        send(at + TCP_HLEN + len);
    }

    /** Ethernet and IPv4 headers to {@code dst}; returns where the L4 header goes. */
    private int ipHeader(byte[] macSrc, int macAt, int dst, int proto, int l4len) {
        System.arraycopy(macSrc, macAt, tx, ETH_DST, 6);
        System.arraycopy(mac, 0, tx, ETH_SRC, 6);
        put16(tx, ETH_TYPE, ETHERTYPE_IPV4);
        tx[IP_VIHL] = 0x45;
        tx[IP_VIHL + 1] = 0;
        put16(tx, IP_TOTLEN, IP_HLEN + l4len);
        put16(tx, IP_ID, ipId++);
        put16(tx, IP_FRAG, 0x4000); // DF
        tx[IP_TTL] = TTL;
        tx[IP_PROTO] = (byte) proto;
        put16(tx, IP_CSUM, 0);
        put32(tx, IP_SRC, ip);
        put32(tx, IP_DST, dst);
        put16(tx, IP_CSUM, InternetChecksum.of(tx, IP, IP_HLEN, 0));
        return IP + IP_HLEN;
    }

    private void tcpHeader(int at, int sport, int dport, int seq, int ack, int flags, int window, int hlen) {
        put16(tx, at + TCP_SPORT, sport);
        put16(tx, at + TCP_DPORT, dport);
        put32(tx, at + TCP_SEQ, seq);
        put32(tx, at + TCP_ACK, ack);
        tx[at + TCP_OFF] = (byte) (hlen / 4 << 4);
        tx[at + TCP_FLAGS] = (byte) flags;
        put16(tx, at + TCP_WINDOW, window);
        put16(tx, at + TCP_CSUM, 0);
        put16(tx, at + TCP_URG, 0);
    }

    private void finishTcp(int at, int dst, int len) {
        put16(tx, at + TCP_CSUM, InternetChecksum.of(tx, at, len, InternetChecksum.pseudoSum(ip, dst, PROTO_TCP, len)));
    }

    /** Frames kept free for ACKs and control segments when data stops for lack of room. */
    public static final int CONTROL_RESERVE = 8;

    /** Whether the sink has room for another data segment (it always takes control segments). */
    boolean roomForData() {
        return sink.room() > CONTROL_RESERVE;
    }

    private void send(int len) {
        if (len < 60) {
            java.util.Arrays.fill(tx, len, 60, (byte) 0); // Ethernet minimum, zero padding
            len = 60;
        }
        counters.inc(NetCounter.FRAMES_OUT);
        sink.send(txSeg.asSlice(0, len));
    }
}
