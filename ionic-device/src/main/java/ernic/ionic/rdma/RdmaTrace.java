package ernic.ionic.rdma;

import ernic.roce.IbOpcode;
import ernic.ionic.trace.PcapTrace;
import ernic.roce.RoceFrame;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.LongSupplier;

import static ernic.roce.TransportHeader.AETH_ACK;
import static ernic.roce.TransportHeader.AETH_NAK_INVALID_REQUEST;
import static ernic.roce.TransportHeader.AETH_NAK_REMOTE_ACCESS;
import static ernic.roce.TransportHeader.AETH_NAK_REMOTE_OPERATIONAL;
import static ernic.common.Endian.LE;

/**
 * {@code --trace-rdma}: each RDMA operation the requester carries out, written as the RoCEv2 frames a wire
 * would have carried (docs/monitoring.md, "Seeing the traffic"). Called at two points: {@link #issued} after
 * the requester handed a WQE to its end (the request; and the responder's answer when the end answered at
 * once: this guest, an in-process target), and {@link #replied} when a peer server's answer comes back.
 *
 * <p>The device keeps no PSNs of its own, so the trace numbers packets per QP from the QP's {@code sq_psn}
 * (MODIFY_QP) at its first traced operation, one PSN per packet, as the IBTA does; a response carries the PSN
 * of the request it answers (a READ response the PSNs from the request's on). Messages are cut into packets
 * of the QP's path MTU (FIRST / MIDDLE / LAST). Addresses come from the QP's address vector (the AH for UD):
 * IPv4 from IPv4-mapped GIDs, else {@link #PLACEHOLDER_SRC_IP} / {@link #PLACEHOLDER_DST_IP}; MACs from the
 * header template, else {@link #PLACEHOLDER_SRC_MAC} / {@link #PLACEHOLDER_DST_MAC}. Device thread only; no
 * allocation per operation (a QP's first remote operation makes its PSN slots).
 */
final class RdmaTrace {
    /** 192.0.2.1 and 192.0.2.2 (TEST-NET-1, RFC 5737): requester and responder when a GID is not IPv4-mapped. */
    static final int PLACEHOLDER_SRC_IP = 0xc000_0201, PLACEHOLDER_DST_IP = 0xc000_0202;
    /** Locally administered placeholders when no header template is known. */
    static final long PLACEHOLDER_SRC_MAC = 0x02_00_00_00_00_01L, PLACEHOLDER_DST_MAC = 0x02_00_00_00_00_02L;
    /** The path MTU when a QP has none recorded (QUERY_QP answers 1024 too). */
    static final int DEFAULT_MTU_SHIFT = 10;

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final LongSupplier clock;
    final PcapTrace out;
    private final RoceFrame f = new RoceFrame();
    private final Spans into = new Spans();
    private final MemorySegment word = Arena.ofAuto().allocate(8, 8);
    private final Spans wordSpan = new Spans();
    /** Per QP id: the generation traced, the next PSN, the responder's MSN, remote requests' PSNs by SQ slot. */
    private final int[] generation, psn, msn, startPsn;
    private final boolean[] seen;
    private final int[][] slotPsn;

    RdmaTrace(RdmaLif lif, KeyedMemory memory, LongSupplier clock, PcapTrace out) {
        this.lif = lif;
        this.memory = memory;
        this.clock = clock;
        this.out = out;
        int n = lif.queuePairs.count();
        generation = new int[n];
        psn = new int[n];
        msn = new int[n];
        startPsn = new int[n];
        seen = new boolean[n];
        slotPsn = new int[n][];
    }

    /** The QP's trace state, started afresh for a new QP under an id, and when MODIFY_QP gave a new sq_psn. */
    private void know(QueuePair qp) {
        int id = qp.id;
        if (!seen[id] || generation[id] != qp.generation || startPsn[id] != qp.sqPsn) {
            seen[id] = true;
            generation[id] = qp.generation;
            startPsn[id] = qp.sqPsn;
            psn[id] = qp.sqPsn & 0xff_ffff;
            msn[id] = 0;
            slotPsn[id] = null;
        }
    }

    private static int mtu(QueuePair qp) {
        int shift = qp.pmtu >= 8 && qp.pmtu <= 12 ? qp.pmtu : DEFAULT_MTU_SHIFT;
        return 1 << shift;
    }

    private static int transport(QueuePair qp) {
        return qp.datagram() ? IbOpcode.UD : qp.type == V1.QPT_UC ? IbOpcode.UC : IbOpcode.RC;
    }

    /** The RC opcode {@code rc} on transport {@code t}; the RC one where {@code t} has no such operation. */
    private static IbOpcode on(IbOpcode rc, int t) {
        IbOpcode o = rc.on(t);
        return o != null ? o : rc;
    }

    private static int ipv4(byte[] gid, int placeholder) {
        if (gid == null) {
            return placeholder;
        }
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return placeholder;
            }
        }
        if (gid[10] != (byte) 0xff || gid[11] != (byte) 0xff) {
            return placeholder;
        }
        return (gid[12] & 0xff) << 24 | (gid[13] & 0xff) << 16 | (gid[14] & 0xff) << 8 | gid[15] & 0xff;
    }

    /** Addresses of a frame from the requester ({@code forward}) or back to it, by the requester's address vector. */
    private void address(AddressHandle av, boolean forward, int senderQpn) {
        long smac = av != null && av.smac != 0 ? av.smac : PLACEHOLDER_SRC_MAC;
        long dmac = av != null && av.dmac != 0 ? av.dmac : PLACEHOLDER_DST_MAC;
        int sip = ipv4(av == null ? null : av.sgid, PLACEHOLDER_SRC_IP);
        int dip = ipv4(av == null ? null : av.dgid, PLACEHOLDER_DST_IP);
        f.smac = forward ? smac : dmac;
        f.dmac = forward ? dmac : smac;
        f.srcIp = forward ? sip : dip;
        f.dstIp = forward ? dip : sip;
        f.ttl = av != null && av.hopLimit > 0 ? av.hopLimit : 64;
        f.tos = av != null ? av.trafficClass : 0;
        f.srcPort = 0xc000 | senderQpn & 0x3fff; // RoCEv2 leaves the source port to the sender: one per QP here
        f.bth.solicited = false;
        f.bth.ackReq = false;
    }

    // ---------------------------------------------------------------------------------------------
    // Hook points

    /**
     * The requester handed {@code r} to its end, which answered {@code status} (or {@link Requester#PENDING}).
     * Nothing is traced for local operations, nor for a WQE that failed before it left (a local error).
     */
    void issued(Request r, int status) {
        if (status != V1.STS_OK && status != Requester.PENDING && status < V1.STS_REMOTE_INV_REQ_ERR) {
            return; // a local error: nothing went out
        }
        QueuePair qp = r.qp;
        WqeOpcode op = r.opcode;
        if (op == null || op.local || qp.wire != null || r.wire) {
            return; // local, or on the wire, whose real packets the wire end writes
        }
        know(qp);
        long now = clock.getAsLong();
        if (qp.datagram()) {
            datagram(r, now);
            return;
        }
        int first = psn[qp.id];
        int last = request(r, op, now);
        if (status == Requester.PENDING) {
            if (slotPsn[qp.id] == null) {
                slotPsn[qp.id] = new int[qp.sq.mask() + 1];
            }
            slotPsn[qp.id][r.slot] = last;
            return;
        }
        if (qp.type != V1.QPT_RC) {
            return; // UC: no acknowledgements
        }
        response(qp, op, status, first, last, r.local, r.length, now);
    }

    /** A peer server answered the remote WQE in {@code slot}: {@code data} a READ's, {@code old} an atomic's. */
    void replied(QueuePair qp, int slot, int status, Spans data, long length, long old) {
        if (qp.type != V1.QPT_RC || qp.outstanding == null) {
            return;
        }
        know(qp);
        int[] slots = slotPsn[qp.id];
        int last = slots != null ? slots[slot] : psn[qp.id];
        WqeOpcode op = WqeOpcode.of(qp.outstanding.op[slot]);
        if (op == null || op.local) {
            return;
        }
        long now = clock.getAsLong();
        if (op.kind == WqeOpcode.Kind.ATOMIC) {
            if (status == V1.STS_OK) {
                address(qp.av, false, qp.destQpn);
                f.bth.opcode = op.response.code;
                f.bth.destQp = qp.id;
                f.bth.psn = last;
                f.bth.syndrome = AETH_ACK;
                f.bth.msn = ++msn[qp.id];
                f.bth.origData = old;
                frame(0, null, 0, now);
                return;
            }
        }
        response(qp, op, status, last, last, data, length, now);
    }

    // ---------------------------------------------------------------------------------------------
    // Frames

    /** The request packets of a connected QP's WQE; returns the PSN of its last packet. */
    private int request(Request r, WqeOpcode op, long now) {
        QueuePair qp = r.qp;
        V1.Wqe w = r.wqe;
        int t = transport(qp), mtu = mtu(qp);
        address(qp.av, true, qp.id);
        f.bth.destQp = qp.destQpn;
        IbOpcode only = on(op.request, t);
        switch (op.kind) {
            case READ, ATOMIC -> { // one request packet, acknowledged
                boolean read = op.kind == WqeOpcode.Kind.READ;
                f.bth.opcode = only.code;
                f.bth.psn = psn[qp.id];
                f.bth.ackReq = true;
                f.bth.va = w.remoteVa();
                f.bth.rkey = w.rkey();
                if (read) {
                    f.bth.dmaLength = (int) r.length;
                } else {
                    f.bth.swapAdd = w.swapAdd();
                    f.bth.compare = w.compare();
                }
                frame(0, null, 0, now);
                // a READ takes a PSN per response packet, an atomic one
                psn[qp.id] = (f.bth.psn + (read ? packets(r.length, mtu) : 1)) & 0xff_ffff;
                return f.bth.psn;
            }
            default -> {
                long total = r.payload.total;
                int n = packets(total, mtu);
                f.bth.imm = w.immDataKey();
                f.bth.invRkey = w.immDataKey();
                f.bth.va = w.remoteVa();
                f.bth.rkey = w.rkey();
                f.bth.dmaLength = (int) total;
                for (int i = 0; i < n; i++) {
                    boolean firstPacket = i == 0, lastPacket = i == n - 1;
                    f.bth.opcode = only.packet(i, n).code;
                    f.bth.psn = psn[qp.id];
                    f.bth.ackReq = lastPacket && t == IbOpcode.RC;
                    f.bth.solicited = lastPacket && r.solicited();
                    long at = (long) i * mtu;
                    frame((int) Math.min(mtu, total - at), r.payload, at, now);
                    psn[qp.id] = (f.bth.psn + 1) & 0xff_ffff;
                }
                return f.bth.psn;
            }
        }
    }

    /** The responder's answer on RC: ACK, NAK, READ response packets or atomic ACK. */
    private void response(QueuePair qp, WqeOpcode op, int status, int first, int last, Spans data, long length, long now) {
        if (status == V1.STS_RETRY_EXCEEDED || status == V1.STS_RNR_RETRY_EXCEEDED) {
            return; // nobody answered (no such QP there), or the receiver was never ready
        }
        address(qp.av, false, qp.destQpn);
        f.bth.destQp = qp.id;
        if (status != V1.STS_OK) {
            f.bth.opcode = IbOpcode.RC_ACKNOWLEDGE.code; // a NAK
            f.bth.psn = first;
            f.bth.msn = msn[qp.id];
            f.bth.syndrome = switch (status) {
                case V1.STS_REMOTE_ACC_ERR -> AETH_NAK_REMOTE_ACCESS;
                case V1.STS_REMOTE_OPER_ERR -> AETH_NAK_REMOTE_OPERATIONAL;
                default -> AETH_NAK_INVALID_REQUEST;
            };
            frame(0, null, 0, now);
            return;
        }
        int m = ++msn[qp.id];
        switch (op.kind) {
            case READ -> {
                int mtu = mtu(qp), n = packets(length, mtu);
                for (int i = 0; i < n; i++) {
                    f.bth.opcode = op.response.packet(i, n).code;
                    f.bth.psn = (first + i) & 0xff_ffff;
                    f.bth.syndrome = AETH_ACK;
                    f.bth.msn = m;
                    long at = (long) i * mtu;
                    frame((int) Math.min(mtu, length - at), data, at, now);
                }
            }
            case ATOMIC -> {
                f.bth.opcode = op.response.code;
                f.bth.psn = last;
                f.bth.syndrome = AETH_ACK;
                f.bth.msn = m;
                wordSpan.clear().addLocal(word, 0, 8);
                f.bth.origData = data != null && memory.peek(data, 0, wordSpan, 8) ? LE.u64(word, 0) : 0;
                frame(0, null, 0, now);
            }
            default -> {
                f.bth.opcode = op.response.code;
                f.bth.psn = last;
                f.bth.syndrome = AETH_ACK;
                f.bth.msn = m;
                frame(0, null, 0, now);
            }
        }
    }

    /** A UD datagram: SEND_ONLY (with ImmDt) and a DETH; the payload after its 40-byte GRH area. */
    private void datagram(Request r, long now) {
        QueuePair qp = r.qp;
        address(r.ah, true, qp.id);
        f.bth.opcode = (r.opcode.immediate ? IbOpcode.UD_SEND_ONLY_WITH_IMMEDIATE : IbOpcode.UD_SEND_ONLY).code;
        f.bth.destQp = r.destQpn;
        f.bth.psn = psn[qp.id];
        f.bth.solicited = r.solicited();
        f.bth.qkey = r.qkey;
        f.bth.srcQp = qp.id;
        f.bth.imm = r.wqe.immDataKey();
        frame((int) Math.max(0, r.payload.total - Grh.SIZE), r.payload, Grh.SIZE, now);
        psn[qp.id] = (f.bth.psn + 1) & 0xff_ffff;
    }

    private static int packets(long length, int mtu) {
        return (int) Math.max(1, (length + mtu - 1) / mtu);
    }

    /**
     * One record: the frame's headers, at most {@link PcapTrace#SNAPLEN_PAYLOAD} bytes of its payload (read from
     * {@code data} at {@code from}), and the pad and ICRC when the payload is whole. The record's length is the
     * frame's real one.
     */
    private void frame(int payload, Spans data, long from, long now) {
        byte[] b = out.reserve();
        if (b == null) {
            return; // counted as dropped
        }
        int at = out.frameOffset();
        int h = f.headers(b, at, payload);
        int keep = data == null ? 0 : Math.min(payload, PcapTrace.SNAPLEN_PAYLOAD);
        if (keep > 0 && !(into.clear().addLocal(out.segment(), at + h, keep) && memory.peek(data, from, into, keep))) {
            java.util.Arrays.fill(b, at + h, at + h + keep, (byte) 0);
        }
        int captured = h + keep;
        if (keep == payload) {
            captured += f.trailer(b, at, payload);
        }
        out.commit(captured, f.frameLength(payload), now);
    }
}
