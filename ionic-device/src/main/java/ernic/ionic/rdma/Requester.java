package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The requester: the one loop that runs every send queue. It reads each WQE out of the SQ ring, checks
 * its local memory (payload for local read, READ and atomic results for local write), does the local
 * operations itself (REG_MR, LOCAL_INV, BIND_MW) and hands the rest to the QP's {@link End}. Every WQE gets
 * exactly one send completion, in SQ order (MSN for remote operations on RC/UC, NPG by SQ index
 * otherwise), whether its end answered at once or later.
 *
 * <p>{@code --inject}'s RDMA faults are decided here, once per WQE of an RC QP, when the requester first reaches
 * it ({@link #decide}): an added latency holds the SQ at that WQE until its time is up ({@link #wake}); a chosen
 * error replaces the trip to the end once the WQE has passed its local checks, and completes like the same error
 * from a real responder (the QP to ERROR, the rest flushed). Device thread only.
 */
final class Requester {
    /** An end's answer: the WQE is on its way and completes through {@link #answered}. */
    static final int PENDING = Integer.MIN_VALUE;
    /** An end's answer: the destination has no receive posted; the SQ waits for one. */
    static final int WAIT_RECEIVE = -1;
    /** An end's answer: no room on the way to the destination; the SQ waits for {@link #retry}. */
    static final int WAIT_ROOM = -2;
    static final long RNR_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Refusals refusals;
    private final RdmaCounters counters;
    private final End local;
    private final LongSupplier clock;
    private final QpErrors errors;
    private final Completions completions;
    private final FaultPlan faults;
    /** Asks to be woken (a {@link #wake}) at a time of the clock: the first delayed QP's. */
    private final LongConsumer wakeAt;
    /** QPs whose head WQE waits out an added latency, in the order they began to. */
    private final List<QueuePair> delayedQps = new ArrayList<>();
    /** The end for destinations on other servers, while in a mesh. */
    End remote;
    /** RoCEv2 on the port ({@code --roce}): datagrams to addresses no one here owns go there. */
    WireEnd wire;
    /** The in-process peers: datagrams to their addresses go to them. */
    private final Attachments attachments;
    /** The P4 program's WQE hook, when the server runs a program written for WQEs. */
    WqePipeline p4;
    /** {@code --trace-rdma}: what each WQE put on the (virtual) wire, or null. */
    RdmaTrace trace;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment wqeBuf = arena.allocate(1 << RdmaIdentity.MAX_STRIDE, 8);
    private final MemorySegment cqeBuf = arena.allocate(V1.Cqe.SIZE, 8);
    private final MemorySegment grh = arena.allocate(Grh.SIZE, 8);
    private final V1.Cqe cqe = new V1.Cqe();
    private final Request request = new Request();
    private final V1.Wqe again = new V1.Wqe();
    /** SQs waiting for a receive on their (local) destination, and those waiting for room on their way. */
    private final List<QueuePair> waitingForReceive = new ArrayList<>(), waitingForRoom = new ArrayList<>();
    private final Counters<PathCounter> path;

    Requester(RdmaLif lif, KeyedMemory memory, Refusals refusals, RdmaCounters counters, Counters<PathCounter> path,
              End local, LongSupplier clock, QpErrors errors, FaultPlan faults, LongConsumer wakeAt,
              Completions completions, Attachments attachments) {
        this.attachments = attachments;
        this.lif = lif;
        this.completions = completions;
        this.faults = faults;
        this.wakeAt = wakeAt;
        this.errors = errors;
        this.path = path;
        this.clock = clock;
        this.memory = memory;
        this.refusals = refusals;
        this.counters = counters;
        this.local = local;
    }

    /** A QP's end: the one bound to it (an in-process target), else its peer's server, else this guest. */
    private End end(QueuePair qp) {
        if (qp.end != null) {
            return qp.end;
        }
        return qp.remote() && remote != null ? remote : local;
    }

    void reset() {
        waitingForReceive.clear();
        waitingForRoom.clear();
        for (QueuePair qp : delayedQps) {
            qp.delayed = false;
        }
        delayedQps.clear();
    }

    /** The QP is gone or flushed: it waits for nothing any more. */
    void forget(QueuePair qp) {
        waitingForReceive.remove(qp);
        waitingForRoom.remove(qp);
        if (qp.delayed) {
            qp.delayed = false;
            delayedQps.remove(qp);
        }
    }

    /** The SQ's producer index moved. */
    void doorbell(QueuePair qp) {
        if (!waitingForReceive.contains(qp)) {
            run(qp);
        }
    }

    /** Receives were posted on QP {@code qid}: SQs of this guest waiting for one go on. */
    void receivesPosted(int qid) {
        if (waitingForReceive.isEmpty()) {
            return;
        }
        for (QueuePair waiting : List.copyOf(waitingForReceive)) {
            if (waiting.destQpn == qid) {
                waitingForReceive.remove(waiting);
                run(waiting);
            }
        }
    }

    /** SQs that waited for room try again. */
    void retry() {
        if (waitingForRoom.isEmpty()) {
            return;
        }
        List<QueuePair> again = List.copyOf(waitingForRoom);
        waitingForRoom.clear();
        for (QueuePair qp : again) {
            if (lif.queuePairs.get(qp.id) == qp) {
                run(qp);
            }
        }
    }

    boolean waitingForRoom() {
        return !waitingForRoom.isEmpty();
    }

    /** Issues what the SQ holds, then completes what is answered, in order. */
    void run(QueuePair qp) {
        WorkQueue sq = qp.sq;
        if (qp.outstanding == null) {
            qp.outstanding = new Outstanding(sq.mask() + 1);
            qp.outstanding.done = sq.cons;
        }
        Outstanding out = qp.outstanding;
        if (qp.delayed) {
            complete(qp); // its head WQE waits out an added latency: wake() runs the SQ on
            return;
        }
        Request r = request;
        while (!sq.empty()) {
            int index = sq.cons; // the driver never posts over a WQE it has no completion for
            long at = sq.slot(index);
            int stride = sq.stride();
            if (at < 0 || !memory.dma().read(at, wqeBuf, 0, stride)) {
                refusals.refuse("rdma-sq-read", "QP " + qp.id + " SQ slot " + index + " unreadable");
                break;
            }
            r.wqe.wrap(wqeBuf, 0);
            r.qp = qp;
            r.slot = index;
            r.moved = 0;
            r.wire = false;
            int op = r.wqe.op(), status;
            r.opcode = WqeOpcode.of(op);
            if (qp.faultSlot != index && qp.type == V1.QPT_RC) {
                long delay = decide(qp, index, r.opcode);
                if (delay > 0) {
                    hold(qp, delay);
                    break;
                }
            }
            try {
                status = issue(r, stride);
            } catch (RuntimeException e) {
                refusals.refuse("rdma-sq-internal", "QP " + qp.id + " WQE failed: " + e);
                status = V1.STS_LOCAL_QP_OPER_ERR;
            }
            if (status == WAIT_RECEIVE) {
                if (!waitingForReceive.contains(qp)) {
                    qp.blockedSinceNanos = clock.getAsLong();
                    waitingForReceive.add(qp);
                }
                break;
            }
            if (status == WAIT_ROOM) {
                if (!waitingForRoom.contains(qp)) {
                    waitingForRoom.add(qp);
                }
                break;
            }
            if (trace != null) {
                trace.issued(r, status);
            }
            if (qp.inError()) {
                break; // the WQE's own responder was this QP, and its receive failed: flushed meanwhile
            }
            out.op[index] = op;
            out.status[index] = status;
            out.bytes[index] = r.moved;
            sq.cons = (index + 1) & sq.mask();
            qp.faultSlot = -1;
            if (status != V1.STS_OK && status != PENDING && qp.connected()) {
                break; // an error completion stops the queue: what follows is flushed
            }
        }
        r.qp = null;
        r.ah = null;
        r.opcode = null;
        complete(qp);
    }

    /** Checks one WQE's local side and hands it to its end. */
    private int issue(Request r, int stride) {
        QueuePair qp = r.qp;
        V1.Wqe w = r.wqe;
        WqeOpcode op = r.opcode;
        if (op == null) {
            refusals.refuse("rdma-sq-opcode", "QP " + qp.id + " WQE opcode " + w.op());
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        switch (op.kind) {
            case SEND -> {
                if (qp.datagram()) {
                    return datagram(r, stride);
                }
                int st = memory.gather(qp, w, stride, r.payload.clear());
                st = st != V1.STS_OK ? st : p4(r, r.payload.total);
                st = st != WqePipeline.GO_ON ? st : injected(r);
                return st != WqePipeline.GO_ON ? st : end(qp).send(r);
            }
            case WRITE -> {
                int st = memory.gather(qp, w, stride, r.payload.clear());
                st = st != V1.STS_OK ? st : p4(r, r.payload.total);
                st = st != WqePipeline.GO_ON ? st : injected(r);
                return st != WqePipeline.GO_ON ? st : end(qp).write(r);
            }
            case READ -> {
                long total = KeyedMemory.sgeTotal(w, stride);
                if (total < 0) {
                    return V1.STS_LOCAL_QP_OPER_ERR;
                }
                if (total > KeyedMemory.MAX_MESSAGE) {
                    return memory.tooLong(qp, total);
                }
                r.length = total;
                int st = memory.scatterList(qp, w, stride, total, r.local.clear());
                st = st != V1.STS_OK ? st : p4(r, total);
                st = st != WqePipeline.GO_ON ? st : injected(r);
                return st != WqePipeline.GO_ON ? st : end(qp).read(r);
            }
            case ATOMIC -> {
                int st = memory.atomicResult(qp, w, r.local.clear());
                st = st != V1.STS_OK ? st : p4(r, 8);
                st = st != WqePipeline.GO_ON ? st : injected(r);
                return st != WqePipeline.GO_ON ? st : end(qp).atomic(r);
            }
            case LOCAL_INV -> {
                return memory.invalidate(w.immDataKey()) ? V1.STS_OK : V1.STS_MEM_MGMT_OPER_ERR;
            }
            case REG_MR -> {
                return regMr(w);
            }
            case BIND_MW -> {
                return memory.windows.bind(qp, w);
            }
            default -> throw new AssertionError(op.kind);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // --inject: RDMA faults

    /**
     * Decides {@code --inject}'s RDMA faults for the WQE at the head of an RC QP's SQ (slot {@code slot}, opcode
     * {@code op}), once: every kind that applies to the opcode counts an occurrence; the error to complete with,
     * if one fires (rdma-retry-exc before rdma-rnr before rdma-rem-access), is kept in the QP until the WQE has
     * passed its local checks ({@link #injected}); the latency to add is returned (nanoseconds, 0: none).
     */
    private long decide(QueuePair qp, int slot, WqeOpcode op) {
        qp.faultSlot = slot;
        qp.faultStatus = V1.STS_OK;
        if (op == null || op.local) {
            return 0; // a local operation: nothing goes on the wire
        }
        boolean takesReceive = op.takesReceive;
        boolean keyed = op.keyed;
        int id = qp.id;
        boolean retry = faults.check(FaultKind.RDMA_RETRY_EXC, id);
        boolean rnr = takesReceive && faults.check(FaultKind.RDMA_RNR, id);
        boolean access = keyed && faults.check(FaultKind.RDMA_REM_ACCESS, id);
        qp.faultStatus = retry ? V1.STS_RETRY_EXCEEDED : rnr ? V1.STS_RNR_RETRY_EXCEEDED
                : access ? V1.STS_REMOTE_ACC_ERR : V1.STS_OK;
        if (faults.check(FaultKind.RDMA_LATENCY, id)) {
            faults.injected(FaultKind.RDMA_LATENCY);
            return faults.delayNanos();
        }
        return 0;
    }

    /**
     * The fault chosen for the WQE of {@code r}, which passed its local checks: its error status (counted as
     * injected; the WQE never reaches its end, so nothing of it lands anywhere), or {@link WqePipeline#GO_ON}.
     */
    private int injected(Request r) {
        QueuePair qp = r.qp;
        if (qp.faultSlot != r.slot || qp.faultStatus == V1.STS_OK) {
            return WqePipeline.GO_ON;
        }
        int st = qp.faultStatus;
        faults.injected(st == V1.STS_RETRY_EXCEEDED ? FaultKind.RDMA_RETRY_EXC
                : st == V1.STS_RNR_RETRY_EXCEEDED ? FaultKind.RDMA_RNR : FaultKind.RDMA_REM_ACCESS);
        r.moved = 0;
        return st;
    }

    /** The SQ stops at its head WQE for {@code delayNanos}: nothing behind it goes first (RC order). */
    private void hold(QueuePair qp, long delayNanos) {
        qp.delayed = true;
        qp.delayedUntil = clock.getAsLong() + delayNanos;
        delayedQps.add(qp);
        wakeAt.accept(qp.delayedUntil);
    }

    /**
     * SQs whose added latency is over by {@code now} go on, oldest hold first (their head WQE is read again and
     * carried out); then a wake-up is asked for the next. Called by the data path's timer and the RDMA tick.
     */
    void wake(long now) {
        for (;;) {
            QueuePair due = null;
            for (int i = 0; i < delayedQps.size(); i++) {
                if (now - delayedQps.get(i).delayedUntil >= 0) {
                    due = delayedQps.remove(i);
                    break;
                }
            }
            if (due == null) {
                break;
            }
            due.delayed = false;
            if (lif.queuePairs.get(due.id) == due && !due.inError()) {
                run(due); // may hold it again for its next WQE, later than now
            }
        }
        if (!delayedQps.isEmpty()) {
            long next = delayedQps.get(0).delayedUntil;
            for (int i = 1; i < delayedQps.size(); i++) {
                if (delayedQps.get(i).delayedUntil - next < 0) {
                    next = delayedQps.get(i).delayedUntil;
                }
            }
            wakeAt.accept(next);
        }
    }

    /** A UD send: the GRH area, then the payload; the AH says which end (this guest's, or a peer's). */
    private int datagram(Request r, int stride) {
        QueuePair qp = r.qp;
        V1.Wqe w = r.wqe;
        Spans payload = r.payload.clear();
        payload.addLocal(grh, 0, Grh.SIZE); // filled in below, once the length is known
        int st = memory.gather(qp, w, stride, payload);
        if (st != V1.STS_OK) {
            return st;
        }
        int qkey = w.destQkey();
        if (qkey < 0 && !qp.hasQkey) {
            // The IB spec: a Q_Key with its high-order bit set is controlled and stands for the QP's own. A QP
            // that has none cannot send one: it would otherwise go out as Q_Key 0, which any QP keyed 0 takes.
            refusals.refuse("rdma-ud-controlled-qkey", "QP " + qp.id + ": a controlled Q_Key in a UD WQE, and the"
                    + " QP has no Q_Key of its own");
            path.inc(PathCounter.ACCESS_DENIED);
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        r.qkey = qkey < 0 ? qp.qkey : qkey; // a controlled key stands for the sending QP's own
        r.destQpn = w.destQpn() & 0xff_ffff;
        int ahId = w.ahId();
        r.ah = lif.addressHandles.get(ahId);
        if (r.ah != null && r.ah.pd != qp.pd) {
            // rxe_get_av: "PDs don't match for AH and QP", the WQE completes with a local QP operation error.
            refusals.refuse("rdma-ah-pd", "a UD send with an AH of another protection domain than the QP's");
            path.inc(PathCounter.ACCESS_DENIED);
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        Grh.fill(grh, r.ah, payload.total - Grh.SIZE);
        ernic.attach.Attachment attached = r.ah != null && attachments.any() ? attachments.owner(r.ah.dgid) : null;
        End to = r.ah != null && r.ah.node >= 0 && remote != null ? remote : local;
        if (p4 != null) {
            int v = p4.run(r, payload.total - Grh.SIZE, attached == null && to == local);
            if (v != WqePipeline.GO_ON) {
                return v;
            }
        }
        if (attached != null) {
            return attachments.offer(attached, r); // for an in-process peer, not for a QP of a guest
        }
        if (wire != null && to == local && r.ah != null && wire.carries(r.ah)) {
            return wire.datagram(r);
        }
        return to.datagram(r);
    }

    /** The WQE hook after a WQE's memory checks: {@link WqePipeline#GO_ON}, or the WQE's final status. */
    private int p4(Request r, long length) {
        WqePipeline p = p4;
        return p == null ? WqePipeline.GO_ON : p.run(r, length, end(r.qp) == local);
    }

    /** Kernel fast registration: bind a new key and page table to an MR. */
    private int regMr(V1.Wqe w) {
        int mrid = w.immDataKey();
        int index = mrid >>> 8;
        MemoryRegion mr = lif.memoryRegions.get(index);
        if (mr == null || mr.window() || memory.windows.busy(mr)) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        long va = w.regMrVa(), length = w.regMrLength(), offset = w.regMrOffset(), table = w.regMrPageList();
        int count = w.regMrMapCount(), pageShift = w.regMrPageShift();
        if (length < 0 || Long.compareUnsigned(va, -1L - length) > 0 || pageShift < 12 || pageShift > 30) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        if (count > 1 && !lif.pagesFit(count)) {
            // the old registration's pages still count: its table stays until this one exists
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        long pageMask = (1L << pageShift) - 1;
        PageTable mem = count == 1
                ? PageTable.contiguous((table & pageMask) == 0 ? table + (offset & pageMask) : table, length)
                : PageTable.read(memory.dma(), table, count, pageShift, offset & pageMask, length);
        if (mem == null) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        mr.key = w.numSgeKey();
        mr.va = va;
        mr.length = length;
        mr.flags = w.regMrFlags();
        lif.releasePages(mr.mem);
        lif.holdPages(mem);
        mr.mem = mem;
        mr.valid = true;
        return V1.STS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Answers from ends that answer later

    /** The end's answer for the WQE in {@code slot} (issued, still pending), then completions in order. */
    void answered(QueuePair qp, int slot, int status) {
        Outstanding out = qp.outstanding;
        out.status[slot] = status;
        complete(qp);
    }

    /** Re-reads the WQE in {@code slot} of the QP's SQ (its answer has come), or null when unreadable. */
    private V1.Wqe reread(QueuePair qp, int slot) {
        long at = qp.sq.slot(slot);
        if (at < 0 || !memory.dma().read(at, wqeBuf, 0, qp.sq.stride())) {
            return null;
        }
        return again.wrap(wqeBuf, 0);
    }

    /** A READ's data came back ({@code data}, {@code len} bytes): scattered into the WQE's SGEs. */
    int landRead(QueuePair qp, int slot, Spans data, long len) {
        int st = landRead(qp, slot, data, 0, len);
        if (st == V1.STS_OK) {
            qp.outstanding.bytes[slot] = len;
        }
        return st;
    }

    /**
     * Part of a READ's data came back ({@code len} bytes of {@code data}, a response packet on the wire): placed at
     * {@code offset} of the WQE's SGEs.
     */
    int landRead(QueuePair qp, int slot, Spans data, long offset, long len) {
        V1.Wqe w = reread(qp, slot);
        if (w == null) {
            return V1.STS_BAD_RESP_ERR;
        }
        Spans dst = request.local.clear();
        int st = memory.scatterList(qp, w, qp.sq.stride(), offset + len, dst);
        if (st != V1.STS_OK) {
            return st;
        }
        return memory.copy(data, 0, dst, offset, len) ? V1.STS_OK : V1.STS_LOCAL_PROT_ERR;
    }

    /** An atomic's old value came back: written to the WQE's local SGE. */
    int landAtomic(QueuePair qp, int slot, long old) {
        V1.Wqe w = reread(qp, slot);
        if (w == null) {
            return V1.STS_BAD_RESP_ERR;
        }
        Spans dst = request.local.clear();
        int st = memory.atomicResult(qp, w, dst);
        if (st != V1.STS_OK) {
            return st;
        }
        return memory.putWord(dst, old) ? V1.STS_OK : V1.STS_LOCAL_PROT_ERR;
    }

    /** Posts the completions of answered WQEs, oldest first, stopping at the first still pending. */
    void complete(QueuePair qp) {
        Outstanding out = qp.outstanding;
        WorkQueue sq = qp.sq;
        while (out.done != sq.cons && out.status[out.done] != PENDING) {
            int i = out.done;
            out.done = (i + 1) & sq.mask();
            finish(qp, i, out.op[i], out.status[i], out.bytes[i]); // an error flushes the rest (done = cons)
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Receiver not ready, within this guest

    /**
     * An SQ whose SEND (or WRITE_IMM) has waited {@link #RNR_TIMEOUT_NANOS} for a receive on its destination
     * in this guest completes that WQE with RNR-retry-exceeded and goes on. Called by the RDMA tick.
     */
    void tick(long now) {
        if (waitingForReceive.isEmpty()) {
            return;
        }
        for (QueuePair qp : List.copyOf(waitingForReceive)) {
            if (now - qp.blockedSinceNanos < RNR_TIMEOUT_NANOS || lif.queuePairs.get(qp.id) != qp) {
                continue;
            }
            waitingForReceive.remove(qp);
            WorkQueue sq = qp.sq;
            int index = sq.cons;
            V1.Wqe w = reread(qp, index);
            if (w == null) {
                continue;
            }
            Outstanding out = qp.outstanding;
            out.op[index] = w.op();
            out.status[index] = V1.STS_RNR_RETRY_EXCEEDED;
            out.bytes[index] = 0;
            sq.cons = (index + 1) & sq.mask();
            qp.faultSlot = -1;
            path.inc(PathCounter.RNR_FAILURES);
            complete(qp); // the error completion moves the QP to ERROR, which flushes the rest
            if (!qp.inError()) {
                run(qp);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Completions

    /** One send WQE done: counted and completed. */
    private void finish(QueuePair qp, int index, int op, int status, long movedBytes) {
        path.inc(PathCounter.SQ_WQES);
        if (status != V1.STS_OK) {
            path.inc(PathCounter.SQ_ERRORS);
        }
        count(qp, op, status, movedBytes);
        CompletionQueue cq = lif.completionQueues.get(qp.sqCqId);
        if (cq != null) {
            sendCompletion(cq, qp, index, op, status);
        }
        if (status != V1.STS_OK) {
            errors.failed(qp);
        }
    }

    private void sendCompletion(CompletionQueue cq, QueuePair qp, int index, int op, int status) {
        counters.add(qp, RdmaCounters.Device.SEND_COMPLETIONS, 1);
        if (status != V1.STS_OK) {
            counters.error(qp, status);
        }
        cqe.wrap(cqeBuf, 0).clear();
        WqeOpcode o = WqeOpcode.of(op);
        if (qp.connected() && o != null && o.completesByMsn) {
            qp.msn++;
            cqe.msn(qp.msn).qidType(qp.id, V1.Cqe.TYPE_SEND_MSN, status != V1.STS_OK);
        } else {
            cqe.npgWqeId(index & qp.sq.mask()).qidType(qp.id, V1.Cqe.TYPE_SEND_NPG, status != V1.STS_OK);
        }
        cqe.statusLength(status);
        if (status != V1.STS_OK) {
            cq.hold(); // let out by errors.failed after the flush that follows it
        }
        completions.post(cq, cqeBuf, false);
    }

    /** Counts one executed send WQE by its opcode's counters. */
    private void count(QueuePair qp, int op, int status, long movedBytes) {
        long bytes = status == V1.STS_OK ? movedBytes : 0;
        WqeOpcode o = WqeOpcode.of(op);
        boolean datagram = qp.datagram();
        // an opcode that is none was refused, and counts as a local request
        RdmaCounters.Device reqs = o == null ? RdmaCounters.Device.LOCAL_REQS : o.requests(datagram);
        RdmaCounters.Device data = o == null ? null : o.bytes(datagram);
        counters.add(qp, reqs, 1);
        if (data != null) {
            counters.add(qp, data, bytes);
        }
    }
}
