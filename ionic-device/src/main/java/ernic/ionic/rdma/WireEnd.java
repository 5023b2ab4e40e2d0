package ernic.ionic.rdma;

import ernic.common.IpAddress;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.roce.IbOpcode;
import ernic.roce.RoceFrame;
import ernic.roce.RoceParser;
import ernic.roce.TransportHeader;
import ernic.roce.rc.ConnectedRequester;
import ernic.roce.rc.RcAttributes;
import ernic.roce.rc.RcCounter;
import ernic.roce.rc.RcOp;
import ernic.roce.rc.RcPayload;
import ernic.roce.rc.RcRequester;
import ernic.roce.rc.RcResponder;
import ernic.roce.rc.RcResponderHost;
import ernic.roce.rc.RcStatus;
import ernic.roce.rc.UcRequester;
import ernic.roce.rc.UcResponder;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

import static ernic.common.Endian.LE;

/**
 * RoCEv2 on the Ethernet port ({@code --roce}): the {@link End} of RC and UC QPs whose destination is neither this
 * guest, a mesh node nor an in-process peer. Each such QP ({@link WireQp}) runs the RC or UC transport of the
 * {@code roce} module: its requester cuts the WQEs the {@link Requester} hands here into packets, its responder
 * applies the packets that arrive to guest memory and the RQ. Packets leave through the port with the outer headers
 * of the driver's template (MODIFY_QP's address vector) and the ICRC; the frames the port receives are offered here
 * first ({@link #claim}): RoCEv2 to the port's MAC or an address of this guest is taken, as a RoCE NIC's engine
 * takes UDP port 4791 (so a RoCE stack in the guest, rxe on this port, gets none while {@code --roce} is on);
 * everything else stays Ethernet for the guest.
 * Time comes from the data path's clock; the engines' timers from its wake-ups and the RDMA tick. Device thread
 * only; nothing allocated per packet but the frame's slice for the port.
 */
final class WireEnd implements End {
    /** Packets a requester sends in one go before the others get a turn (a wake-up at once does the rest). */
    static final int POLL_BUDGET = 256;
    /** Addresses of this guest remembered (from what it sends and its QPs' templates). */
    static final int MAX_GIDS = 64;
    private static final int MAX_FRAME = 4096 + 256;
    /** The low half of ::ffff:0.0.0.0, the unspecified IPv4 address as a GID (a DHCP client's source). */
    private static final long V4_UNSPECIFIED = 0xffffL << 32;
    /** The largest datagram: one packet of the largest path MTU. */
    static final int MAX_DATAGRAM = 4096;

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Responder responder;
    private final Requester requester;
    private final QpErrors errors;
    private final Refusals refusals;
    private final LongSupplier clock;
    private final LongConsumer wakeAt;
    /** Where frames leave: the Ethernet port (the TAP), past the guest's claimers and the P4 program. */
    private final Consumer<MemorySegment> port;
    /** The port's MAC (the guest may change it): a RoCEv2 packet sent to it is for this device. */
    private final LongSupplier mac;
    /** {@code --inject roce-*}: packets lost, damaged, reordered or doubled on the wire, each way. */
    private final FaultPlan faults;
    /** {@code --trace-rdma}: the packets as they leave and arrive (the operations' synthetic frames are not written). */
    ernic.ionic.trace.PcapTrace trace;
    final Counters<WireCounter> counters = new Counters<>(WireCounter.class);
    final Counters<RcCounter> rc = new Counters<>(RcCounter.class);
    private final List<WireQp> qps = new ArrayList<>();
    private final RoceParser parser = new RoceParser();
    private final RoceFrame tx = new RoceFrame();
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment txBuf = arena.allocate(MAX_FRAME, 64);
    /** {@code roce-reorder}: a packet held back each way (its length; 0: none), and {@code roce-corrupt}'s copy. */
    private final MemorySegment txHeldBuf = arena.allocate(MAX_FRAME, 64), rxHeldBuf = arena.allocate(MAX_FRAME, 64);
    private final MemorySegment rxScratch = arena.allocate(MAX_FRAME, 64);
    private int txHeld, rxHeld;
    private final MemorySegment wqeBuf = arena.allocate(1 << ernic.ionic.base.RdmaIdentity.MAX_STRIDE, 8);
    private final MemorySegment word = arena.allocate(8, 8);
    private final MemorySegment grh = arena.allocate(Grh.SIZE, 8);
    private final V1.Wqe wqe = new V1.Wqe();
    private final Spans spans = new Spans(), into = new Spans();
    /** This guest's addresses as GIDs (two longs each), a ring: a packet to one of them is for this device. */
    private final long[] gidHi = new long[MAX_GIDS], gidLo = new long[MAX_GIDS];
    private int gidCount, gidNext;

    WireEnd(RdmaLif lif, KeyedMemory memory, Responder responder, Requester requester, QpErrors errors,
            Refusals refusals, LongSupplier clock, LongConsumer wakeAt, Consumer<MemorySegment> port, LongSupplier mac,
            FaultPlan faults) {
        this.lif = lif;
        this.memory = memory;
        this.responder = responder;
        this.requester = requester;
        this.errors = errors;
        this.refusals = refusals;
        this.clock = clock;
        this.wakeAt = wakeAt;
        this.port = port;
        this.mac = mac;
        this.faults = faults;
    }

    void registerCounters(CounterRegistry registry) {
        registry.register("roce.", counters);
        registry.register("roce.rc.", rc);
    }

    // ---------------------------------------------------------------------------------------------
    // Which QPs go on the wire

    /** The guest sent from {@code hi:lo} (an IP address as a GID): an address of this device. */
    void sourceSeen(long hi, long lo) {
        if (hi == 0 && (lo == 0 || lo == V4_UNSPECIFIED) || owns(hi, lo)) {
            return;
        }
        gidHi[gidNext] = hi;
        gidLo[gidNext] = lo;
        gidNext = (gidNext + 1) % MAX_GIDS;
        gidCount = Math.min(gidCount + 1, MAX_GIDS);
    }

    private boolean owns(long hi, long lo) {
        for (int i = 0; i < gidCount; i++) {
            if (gidHi[i] == hi && gidLo[i] == lo) {
                return true;
            }
        }
        return false;
    }

    private boolean owns(byte[] gid) {
        return owns(IpAddress.high(gid), IpAddress.low(gid));
    }

    /** Whether RC traffic to {@code av} goes on the wire: its destination is not an address of this guest. */
    boolean carries(AddressHandle av) {
        sourceSeen(IpAddress.high(av.sgid), IpAddress.low(av.sgid)); // what the guest sends RDMA from is its own
        return !Arrays.equals(av.sgid, av.dgid) && !owns(av.dgid);
    }

    /**
     * The QP's MODIFY_QP moved it to {@code state}: at RTR a QP placed on the wire ({@link QueuePair#onWire}) gets
     * its responder, at RTS its requester; RESET and ERROR end both.
     */
    void moved(QueuePair qp, int state) {
        if (!qp.onWire || qp.header == null) {
            return;
        }
        if (state == V1.QPS_RTR && qp.wire == null) {
            open(qp);
        } else if (state == V1.QPS_RTS && qp.wire != null && qp.wire.requester == null) {
            WireQp w = qp.wire;
            w.requester = qp.type == V1.QPT_UC ? new UcRequester(attributes(qp), qp.destQpn, qp.sqPsn, w, w, rc)
                    : new RcRequester(attributes(qp), qp.destQpn, qp.sqPsn, w, w, rc);
        }
    }

    private void open(QueuePair qp) {
        RoceFrame template = new RoceFrame();
        MemorySegment h = MemorySegment.ofArray(qp.header);
        template.srcPort = 0xc000 | qp.id & 0x3fff; // kept if the template has none (RoceParser.template)
        RoceParser.Refusal why = parser.template(h, 0, (int) h.byteSize(), template);
        if (why != RoceParser.Refusal.NONE) {
            // AdminCommands parsed it as an address vector already; a template the wire cannot use is refused here.
            refusals.refuse("roce-qp-template", "QP " + qp.id + ": header template refused (" + why + ")");
            qp.onWire = false;
            return;
        }
        WireQp w = new WireQp(qp, this, template);
        w.responder = qp.type == V1.QPT_UC ? new UcResponder(attributes(qp), qp.rqPsn, w, rc)
                : new RcResponder(attributes(qp), qp.destQpn, qp.rqPsn, w, w, rc);
        qp.wire = w;
        qp.end = this;
        qps.add(w);
        counters.inc(WireCounter.QPS_PLACED);
    }

    /** The QP's attributes as ionic's MODIFY_QP carries them (ionic_fw.h; log2 depths with a hole). */
    private static RcAttributes attributes(QueuePair qp) {
        int mtu = qp.pmtu >= 8 && qp.pmtu <= 12 ? 1 << qp.pmtu : 1024;
        int rd = Math.max(1, Math.min(255, (1 << Math.min(qp.rrqDepth, 8)) - 1));
        // rsq_depth 0: max_dest_rd_atomic 0 (the driver sends order_base_2(n + 1) only for n > 0), READs NAKed.
        int dest = Math.min(255, (1 << Math.min(qp.rsqDepth, 8)) - 1);
        int sqDepth = qp.sq == null ? 1 : qp.sq.mask() + 1;
        return new RcAttributes(mtu, qp.retryTimeout & 0x1f, qp.retry & 7, qp.retry >>> 4 & 7, rd, dest,
                qp.rnrTimer & 0x1f, 0, sqDepth);
    }

    /** The QP was reset, flushed or destroyed: its engines stop (answers still on the way are dropped). */
    void forget(QueuePair qp) {
        WireQp w = qp.wire;
        if (w == null) {
            return;
        }
        w.closed = true;
        qps.remove(w);
        qp.wire = null;
        if (qp.end == this) {
            qp.end = null;
        }
    }

    void reset() {
        for (WireQp w : qps) {
            w.closed = true;
            w.qp.wire = null;
        }
        qps.clear();
        gidCount = gidNext = 0;
        txHeld = rxHeld = 0;
    }

    // ---------------------------------------------------------------------------------------------
    // End: the requester's WQEs

    @Override
    public int send(Request r) {
        RcOp op = r.opcode == WqeOpcode.SEND_IMM ? RcOp.SEND_WITH_IMM
                : r.opcode == WqeOpcode.SEND_INV ? RcOp.SEND_WITH_INV : RcOp.SEND;
        return post(r, op, r.payload.total, 0, 0, r.wqe.immDataKey(), 0, 0);
    }

    @Override
    public int write(Request r) {
        RcOp op = r.opcode.immediate ? RcOp.RDMA_WRITE_WITH_IMM : RcOp.RDMA_WRITE;
        return post(r, op, r.payload.total, r.wqe.remoteVa(), r.wqe.rkey(), r.wqe.immDataKey(), 0, 0);
    }

    @Override
    public int read(Request r) {
        return post(r, RcOp.RDMA_READ, r.length, r.wqe.remoteVa(), r.wqe.rkey(), 0, 0, 0);
    }

    @Override
    public int atomic(Request r) {
        RcOp op = r.opcode == WqeOpcode.ATOMIC_CS ? RcOp.ATOMIC_CMP_AND_SWP : RcOp.ATOMIC_FETCH_AND_ADD;
        return post(r, op, 8, r.wqe.remoteVa(), r.wqe.rkey(), 0, r.wqe.swapAdd(), r.wqe.compare());
    }

    /**
     * A UD (or GSI) send to an address no one here owns: one RoCEv2 packet with a DETH (the resolved Q_Key, this
     * QP as the source), outer headers from the address handle. Completed at once, as a datagram is.
     */
    @Override
    public int datagram(Request r) {
        AddressHandle ah = r.ah;
        QueuePair qp = r.qp;
        long len = r.payload.total - Grh.SIZE;
        if (len > MAX_DATAGRAM) {
            return V1.STS_LOCAL_LEN_ERR; // more than one packet of the largest path MTU
        }
        int n = (int) len;
        RoceFrame f = tx;
        f.dmac = ah.dmac;
        f.smac = ah.smac;
        f.vlan = ah.vlan < 0 ? RoceFrame.NO_VLAN : ah.vlan;
        f.addresses(ah.sgid, ah.dgid);
        f.tos = ah.trafficClass;
        f.ecn = -1;
        f.ttl = ah.hopLimit;
        f.flowLabel = 0;
        f.srcPort = 0xc000 | qp.id & 0x3fff;
        TransportHeader h = f.bth;
        h.opcode = (r.opcode.immediate ? IbOpcode.UD_SEND_ONLY_WITH_IMMEDIATE : IbOpcode.UD_SEND_ONLY).code;
        h.solicited = r.solicited();
        h.migReq = h.ackReq = h.fecn = h.becn = false;
        h.pkey = TransportHeader.DEFAULT_PKEY;
        h.destQp = r.destQpn;
        h.psn = qp.wirePsn;
        qp.wirePsn = qp.wirePsn + 1 & 0xff_ffff;
        h.qkey = r.qkey;
        h.srcQp = qp.id;
        h.imm = r.wqe.immDataKey();
        int at = f.headers(txBuf, 0, n);
        into.clear().addLocal(txBuf, at, n);
        if (!memory.copy(r.payload, Grh.SIZE, into, n)) {
            return V1.STS_LOCAL_PROT_ERR;
        }
        send(at + n + f.trailer(txBuf, 0, n));
        r.moved = len;
        r.wire = true;
        return V1.STS_OK;
    }

    /** A UD packet for QP {@code destQpn}: into its next receive, with the GRH made from the packet's IP header. */
    private void datagramReceived(RoceFrame f, IbOpcode o, MemorySegment frame) {
        TransportHeader h = f.bth;
        QueuePair qp = lif.queuePairs.get(h.destQp & 0xff_ffff);
        if (qp == null || !qp.datagram()) {
            counters.inc(WireCounter.RX_UNKNOWN_QP);
            refusals.refuse("roce-rx-ud-qp", "a RoCEv2 datagram for QP " + (h.destQp & 0xff_ffff)
                    + ", which is not a UD QP: dropped");
            return;
        }
        counters.inc(WireCounter.RX_FRAMES);
        counters.add(WireCounter.RX_BYTES, frame.byteSize());
        int len = parser.payloadLength;
        Grh.fill(grh, !f.ipv6, f.srcGid, f.dstGid, f.tos, f.ttl, len);
        spans.clear().addLocal(grh, 0, Grh.SIZE);
        spans.addLocal(frame, parser.payloadOffset, len);
        int flags = h.srcQp & 0xff_ffff | (f.ipv6 ? 0 : V1.Cqe.RECV_IS_IPV4)
                | (f.vlan != RoceFrame.NO_VLAN ? V1.Cqe.RECV_IS_VLAN : 0);
        responder.datagram(qp.id, h.qkey, flags, o.immediate(), h.imm, spans, f.smac,
                f.vlan != RoceFrame.NO_VLAN ? f.vlan : 0, h.solicited);
    }

    private int post(Request r, RcOp op, long length, long va, int rkey, int immOrInv, long swapAdd, long compare) {
        WireQp w = r.qp.wire;
        if (w == null || w.requester == null) {
            return V1.STS_LOCAL_QP_OPER_ERR; // not in RTS: nothing can be sent
        }
        boolean uc = r.qp.type == V1.QPT_UC;
        if (uc && (op.readOrAtomic() || op == RcOp.SEND_WITH_INV)) {
            return V1.STS_LOCAL_QP_OPER_ERR; // UC has no such opcode (rxe: IB_WC_LOC_QP_OP_ERR)
        }
        if (w.requester.failed()) {
            return V1.STS_WQE_FLUSHED_ERR;
        }
        if (length > Integer.MAX_VALUE) {
            return memory.tooLong(r.qp, length);
        }
        w.posted(r.slot);
        int flags = (r.solicited() ? ConnectedRequester.SOLICITED : 0) | (r.fenced() ? ConnectedRequester.FENCE : 0);
        if (!w.requester.post(r.slot, op, flags, (int) length, va, rkey, immOrInv, swapAdd, compare)) {
            return Requester.WAIT_ROOM;
        }
        r.moved = length;
        if (uc) {
            return sendNow(w, r.slot);
        }
        pump(w, clock.getAsLong());
        return Requester.PENDING;
    }

    /**
     * A UC message completes as its last packet goes out. Alone in the queue, it goes now, and its status is the
     * WQE's answer (the Requester is still issuing it: a completion through {@link Requester#answered} would be
     * lost); one longer than the poll budget, or behind another, completes at a later wake-up.
     */
    private int sendNow(WireQp w, int slot) {
        if (w.requester.outstanding() > 1) {
            return Requester.PENDING; // the message before it asked for the wake-up that sends it
        }
        w.capture = slot;
        pump(w, clock.getAsLong());
        int st = w.capture < 0 ? w.captured : Requester.PENDING;
        w.capture = -1;
        return st;
    }

    /** Lets the QP's requester send what it may, then asks for a wake-up at its next deadline. */
    private void pump(WireQp w, long now) {
        ConnectedRequester q = w.requester;
        if (q == null || w.closed) {
            return;
        }
        if (q.poll(now, POLL_BUDGET) == POLL_BUDGET) {
            wakeAt.accept(now); // more to send: after what else the loop has to do
        }
        long next = q.nextDeadline();
        if (next != Long.MAX_VALUE) {
            wakeAt.accept(next);
        }
    }

    /** Timers due by {@code now} fire and every requester sends what it may (a wake-up, the RDMA tick). */
    void wake(long now) {
        releaseHeldTx();
        releaseHeldRx();
        for (int i = 0; i < qps.size(); i++) {
            WireQp w = qps.get(i);
            if (w.requester != null) {
                w.requester.tick(now);
                pump(w, now);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Out of the port

    /** One packet of {@code w}: the template's outer headers, the engine's transport headers, the payload. */
    void transmit(WireQp w, TransportHeader header, RcPayload payload) {
        RoceFrame f = tx;
        f.copyOuter(w.template);
        f.bth.set(header);
        int len = payload.length;
        int at = f.headers(txBuf, 0, len);
        boolean ok = switch (payload.kind) {
            case NONE -> true;
            case MESSAGE -> gather(w.qp, (int) payload.wrId, payload.offset, at, len);
            case MEMORY -> readMemory(w.qp, payload.rkey, payload.va, at, len);
        };
        if (!ok) {
            counters.inc(WireCounter.TX_UNREADABLE); // RC: the retransmission timer sends it again, or gives up
            if (w.qp.type == V1.QPT_UC && payload.kind == RcPayload.Kind.MESSAGE) {
                w.unsent((int) payload.wrId); // UC: its completion says so
            }
            return;
        }
        send(at + len + f.trailer(txBuf, 0, len));
    }

    /**
     * The frame of {@code length} bytes in the TX buffer out of the port, as the {@code roce-*} faults let it: lost,
     * damaged, held back behind the next one, or sent twice.
     */
    private void send(int length) {
        counters.inc(WireCounter.TX_FRAMES);
        counters.add(WireCounter.TX_BYTES, length);
        long hi = IpAddress.high(tx.dstGid), lo = IpAddress.low(tx.dstGid);
        if (faults.fire(FaultKind.ROCE_DROP, hi, lo)) {
            return;
        }
        if (faults.fire(FaultKind.ROCE_CORRUPT, hi, lo)) {
            damage(txBuf, length);
        }
        if (faults.check(FaultKind.ROCE_REORDER, hi, lo) && txHeld == 0) { // one held back at a time
            faults.injected(FaultKind.ROCE_REORDER);
            MemorySegment.copy(txBuf, 0, txHeldBuf, 0, length);
            txHeld = length;
            return;
        }
        MemorySegment frame = txBuf.asSlice(0, length);
        out(frame);
        if (faults.fire(FaultKind.ROCE_DUPLICATE, hi, lo)) {
            out(frame);
        }
        releaseHeldTx();
    }

    private void out(MemorySegment frame) {
        traced(frame);
        port.accept(frame);
    }

    /** {@code roce-reorder}: the packet held back goes now, behind the one sent after it (or at a wake-up). */
    private void releaseHeldTx() {
        int n = txHeld;
        if (n > 0) {
            txHeld = 0;
            out(txHeldBuf.asSlice(0, n));
        }
    }

    /** {@code roce-corrupt}: the last byte before the ICRC changes, which the receiver's ICRC check catches. */
    private static void damage(MemorySegment frame, int length) {
        long at = length - RoceFrame.ICRC_LEN - 1;
        frame.set(ValueLayout.JAVA_BYTE, at, (byte) ~frame.get(ValueLayout.JAVA_BYTE, at));
    }

    /** Writes {@code frame} to the {@code --trace-rdma} file, if there is one (cut at its snap length). */
    private void traced(MemorySegment frame) {
        ernic.ionic.trace.PcapTrace t = trace;
        if (t == null || t.reserve() == null) {
            return;
        }
        int length = (int) frame.byteSize(), captured = Math.min(length, ernic.ionic.trace.PcapTrace.SNAPLEN);
        MemorySegment.copy(frame, 0, t.segment(), t.frameOffset(), captured);
        t.commit(captured, length, clock.getAsLong());
    }

    /** {@code len} bytes of the message of the WQE in SQ {@code slot}, from {@code offset}, into the frame. */
    private boolean gather(QueuePair qp, int slot, long offset, int at, int len) {
        V1.Wqe w = reread(qp, slot);
        if (w == null || memory.gather(qp, w, qp.sq.stride(), spans.clear()) != V1.STS_OK) {
            return false;
        }
        into.clear().addLocal(txBuf, at, len);
        return memory.peek(spans, offset, into, len);
    }

    /** {@code len} bytes of this guest's memory at {@code va} of {@code rkey} (a READ response) into the frame. */
    private boolean readMemory(QueuePair qp, int rkey, long va, int at, int len) {
        if (memory.resolve(qp, rkey, va, len, V1.MRF_REMOTE_READ, true, spans.clear()) != V1.STS_OK) {
            return false;
        }
        into.clear().addLocal(txBuf, at, len);
        return memory.copy(spans, into, len);
    }

    private V1.Wqe reread(QueuePair qp, int slot) {
        long at = qp.sq.slot(slot);
        if (at < 0 || !memory.dma().read(at, wqeBuf, 0, qp.sq.stride())) {
            return null;
        }
        return wqe.wrap(wqeBuf, 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Into the port

    /**
     * A frame the port received: RoCEv2 to an address of this guest is taken (applied or dropped and counted);
     * anything else is left for the guest's network stack.
     */
    boolean claim(MemorySegment frame) {
        RoceParser.Refusal why = parser.parse(frame);
        if (why != RoceParser.Refusal.NONE && !why.roce) {
            return false; // not RoCEv2
        }
        RoceFrame f = parser.frame; // the addresses are read before anything refused as RoCEv2
        if (f.dmac != mac.getAsLong() && !owns(f.dstGid)) {
            return false; // for another host on the segment
        }
        if (why != RoceParser.Refusal.NONE) {
            refused(why);
            return true;
        }
        long hi = IpAddress.high(f.srcGid), lo = IpAddress.low(f.srcGid);
        if (faults.fire(FaultKind.ROCE_DROP, hi, lo)) {
            return true; // lost on the way in: the sender's transport recovers
        }
        long length = frame.byteSize();
        if (faults.check(FaultKind.ROCE_CORRUPT, hi, lo) && length <= MAX_FRAME) {
            faults.injected(FaultKind.ROCE_CORRUPT);
            MemorySegment.copy(frame, 0, rxScratch, 0, length);
            damage(rxScratch, (int) length);
            refused(parser.parse(rxScratch.asSlice(0, length)));
            return true;
        }
        if (faults.check(FaultKind.ROCE_REORDER, hi, lo) && rxHeld == 0 && length <= MAX_FRAME) {
            faults.injected(FaultKind.ROCE_REORDER);
            MemorySegment.copy(frame, 0, rxHeldBuf, 0, length);
            rxHeld = (int) length;
            return true;
        }
        take(frame);
        if (faults.fire(FaultKind.ROCE_DUPLICATE, hi, lo)) {
            take(frame);
        }
        releaseHeldRx();
        return true;
    }

    /** A RoCEv2 packet for this device that the parser refused: counted by its cause, logged once per cause. */
    private void refused(RoceParser.Refusal why) {
        switch (why) {
            case NONE -> { }
            case ICRC -> counters.inc(WireCounter.RX_BAD_ICRC);
            case CNP -> counters.inc(WireCounter.RX_CNP); // no congestion control (docs/roce.md)
            default -> {
                counters.inc(WireCounter.RX_MALFORMED);
                refusals.refuse("roce-rx-" + why.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
                        "a RoCEv2 packet refused: " + why);
            }
        }
    }

    /** {@code roce-reorder}: the packet held back is taken now, after the one that came behind it. */
    private void releaseHeldRx() {
        int n = rxHeld;
        if (n > 0) {
            rxHeld = 0;
            MemorySegment held = rxHeldBuf.asSlice(0, n);
            if (parser.parse(held) == RoceParser.Refusal.NONE) {
                take(held);
            }
        }
    }

    /** Applies the RoCEv2 packet {@link #parser} has just taken from {@code frame}. */
    private void take(MemorySegment frame) {
        RoceFrame f = parser.frame;
        traced(frame);
        if ((f.tos & 3) == RoceFrame.ECN_CE) {
            counters.inc(WireCounter.RX_CE_MARKED); // congestion seen on the way; no CNP is sent back
        }
        TransportHeader h = f.bth;
        IbOpcode o = IbOpcode.of(h.opcode);
        if (o != null && o.transport == IbOpcode.UD) {
            datagramReceived(f, o, frame);
            return;
        }
        QueuePair qp = lif.queuePairs.get(h.destQp & 0xff_ffff);
        WireQp w = qp == null ? null : qp.wire;
        if (w == null) {
            counters.inc(WireCounter.RX_UNKNOWN_QP);
            refusals.refuse("roce-rx-qp", "a RoCEv2 packet for QP " + (h.destQp & 0xff_ffff)
                    + ", which is not an RC or UC QP on the wire: dropped");
            return;
        }
        if (!Arrays.equals(f.srcGid, w.template.dstGid)) {
            counters.inc(WireCounter.RX_WRONG_SOURCE);
            refusals.refuse("roce-rx-source", "a RoCEv2 packet for QP " + qp.id + " from another address than"
                    + " its destination: dropped");
            return;
        }
        if (o == null || o.transport != (qp.type == V1.QPT_UC ? IbOpcode.UC : IbOpcode.RC)) {
            counters.inc(WireCounter.RX_WRONG_TRANSPORT);
            return;
        }
        counters.inc(WireCounter.RX_FRAMES);
        counters.add(WireCounter.RX_BYTES, frame.byteSize());
        long now = clock.getAsLong();
        if (o.request) {
            w.receiving = h.opcode;
            w.responder.receive(h, frame, parser.payloadOffset, parser.payloadLength, now);
        } else if (w.requester != null) {
            w.requester.receive(h, frame, parser.payloadOffset, parser.payloadLength, now);
        } else {
            counters.inc(WireCounter.RX_NOT_READY);
        }
        pump(w, now);
        if (requester.waitingForRoom()) {
            requester.retry();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // What the engines ask of the device

    /** rdma-core's status of an RC completion, as the ionic CQE carries it. */
    static int status(RcStatus s) {
        return switch (s) {
            case SUCCESS -> V1.STS_OK;
            case LOC_LEN_ERR -> V1.STS_LOCAL_LEN_ERR;
            case LOC_QP_OP_ERR -> V1.STS_LOCAL_QP_OPER_ERR;
            case WR_FLUSH_ERR -> V1.STS_WQE_FLUSHED_ERR;
            case REM_INV_REQ_ERR, REM_INV_RD_REQ_ERR -> V1.STS_REMOTE_INV_REQ_ERR;
            case REM_ACCESS_ERR -> V1.STS_REMOTE_ACC_ERR;
            case REM_OP_ERR -> V1.STS_REMOTE_OPER_ERR;
            case RETRY_EXC_ERR -> V1.STS_RETRY_EXCEEDED;
            case RNR_RETRY_EXC_ERR -> V1.STS_RNR_RETRY_EXCEEDED;
        };
    }

    void completed(WireQp w, int slot, int status) {
        requester.answered(w.qp, slot, status);
    }

    /** A READ response's {@code length} bytes at {@code offset} of the READ's buffers; its status. */
    int landRead(WireQp w, int slot, long offset, MemorySegment src, long srcOffset, int length) {
        spans.clear().addLocal(src, srcOffset, length);
        return requester.landRead(w.qp, slot, spans, offset, length);
    }

    int landAtomic(WireQp w, int slot, long original) {
        return requester.landAtomic(w.qp, slot, original);
    }

    boolean checkAccess(QueuePair qp, int rkey, long va, long length, int access) {
        int qpFlag = access == RcResponderHost.REMOTE_WRITE ? V1.QPF_REMOTE_WRITE
                : access == RcResponderHost.REMOTE_READ ? V1.QPF_REMOTE_READ : V1.QPF_REMOTE_ATOMIC;
        int mrFlag = access == RcResponderHost.REMOTE_WRITE ? V1.MRF_REMOTE_WRITE
                : access == RcResponderHost.REMOTE_READ ? V1.MRF_REMOTE_READ : V1.MRF_REMOTE_ATOMIC;
        return (qp.accessFlags & qpFlag) != 0
                && memory.resolve(qp, rkey, va, length, mrFlag, true, spans.clear()) == V1.STS_OK;
    }

    void writeMemory(QueuePair qp, int rkey, long va, MemorySegment src, long srcOffset, int length) {
        if (memory.resolve(qp, rkey, va, length, V1.MRF_REMOTE_WRITE, true, into.clear()) == V1.STS_OK) {
            spans.clear().addLocal(src, srcOffset, length);
            memory.copy(spans, into, length);
        }
    }

    long atomic(QueuePair qp, int rkey, long va, boolean compareSwap, long swapAdd, long compare) {
        responder.atomic(qp, compareSwap, rkey, va, compare, swapAdd, word); // checked by checkAccess before
        return LE.u64(word, 0);
    }

    boolean takeReceive(QueuePair qp, Spans recv) {
        return responder.takeReceiveInto(qp, recv);
    }

    long takenWqeId() {
        return responder.takenWqeId;
    }

    int takenStatus() {
        return responder.takenStatus;
    }

    /** {@code length} bytes of a received packet into the receive's buffers at {@code offset}. */
    boolean place(MemorySegment src, long srcOffset, Spans recv, long offset, int length) {
        spans.clear().addLocal(src, srcOffset, length);
        return memory.copy(spans, 0, recv, offset, length);
    }

    boolean invalidate(int rkey) {
        return memory.invalidate(rkey);
    }

    void receiveCompleted(QueuePair qp, long wqeId, int srcQpnOp, int imm, long length, int status,
                          boolean solicited) {
        responder.receiveCompleted(qp, wqeId, srcQpnOp, imm, length, status, solicited);
    }

    void failed(QueuePair qp) {
        errors.failed(qp);
    }
}
