package ernic.ionic.rdma;

import ernic.ionic.layout.Be;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.base.Dma;
import ernic.ionic.layout.Le;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The RDMA data path within one VM: SQ doorbells execute their WQEs synchronously (SEND, SEND_IMM,
 * SEND_INV, RDMA WRITE, WRITE_IMM, READ, atomics, REG_MR, LOCAL_INV, inline data), RQ doorbells
 * record the producer index, every WQE gets exactly one send completion (MSN for remote ops on RC/UC,
 * NPG by SQ index otherwise), and memory is reached only through the MR table (key 0 only for a
 * privileged QP). A SEND that finds the destination RQ empty waits until a receive is posted, for at
 * most 5 s (then RNR-retry-exceeded).
 */
final class DataPath {
    /** Largest message (the port's max_msg_sz). */
    static final long MAX_MESSAGE = 1L << 31;
    static final int GRH_SIZE = 40;
    static final int ACCESS_LOCAL_READ = 0;
    private static final int BLOCKED = -1;

    private final RdmaLif lif;
    final Dma dma;
    final Refusals refusals;
    private final RdmaCounters counters;
    /** Bytes the WQE being executed moved (its message length once it succeeded). */
    long moved;
    private final Arena arena = Arena.ofAuto();
    final MemorySegment wqeBuf = arena.allocate(1 << RdmaIdentity.MAX_STRIDE, 8);
    private final MemorySegment rqeBuf = arena.allocate(1 << RdmaIdentity.MAX_STRIDE, 8);
    private final MemorySegment cqeBuf = arena.allocate(V1.Cqe.SIZE, 8);
    private final MemorySegment word = arena.allocate(8, 8);
    private final MemorySegment grh = arena.allocate(GRH_SIZE, 8);
    /** Copies go through this, one contiguous run of at most BOUNCE bytes at a time. */
    static final int BOUNCE = 64 * 1024;
    private final MemorySegment bounce = arena.allocate(BOUNCE, 64);
    final Spans src = new Spans(), dst = new Spans();
    final V1.Wqe wqe = new V1.Wqe();
    final V1.Wqe rqe = new V1.Wqe();
    private final V1.Cqe cqe = new V1.Cqe();
    /** SQs waiting for a receive on their destination. */
    private final List<QueuePair> blocked = new ArrayList<>();

    private long sqWqes, rqWqes, sendErrors, udDropped, bytes, flushes, rnrFailures;
    /** Scratch results of resolve(). */
    PageTable spanMem;
    long spanOff;
    /** The data path to other servers' guests, when the server is in a mesh. */
    RemotePath remote;

    DataPath(RdmaLif lif, Dma dma, Refusals refusals, RdmaCounters counters) {
        this.lif = lif;
        this.dma = dma;
        this.refusals = refusals;
        this.counters = counters;
    }

    void reset() {
        blocked.clear();
        if (remote != null) {
            remote.reset();
        }
    }

    /** Power-on: the data path's own totals back to zero. */
    void clearCounters() {
        sqWqes = rqWqes = sendErrors = udDropped = bytes = flushes = rnrFailures = 0;
        if (remote != null) {
            remote.clearCounters();
        }
    }

    void forget(QueuePair qp) {
        blocked.remove(qp);
        if (remote != null) {
            remote.forget(qp);
        }
    }

    /**
     * A QP moved to ERROR: its outstanding work is taken back with one flush-error completion per
     * queue that had any (RECV / SEND_NPG type, status WQE_FLUSHED), which also wakes a consumer
     * sleeping on the CQ's event.
     */
    void flush(QueuePair qp) {
        blocked.remove(qp);
        if (qp.rq != null && !qp.rq.empty()) {
            qp.rq.cons = qp.rq.prod;
            flushCompletion(qp, qp.rqCqId, V1.Cqe.TYPE_RECV);
        }
        boolean unanswered = qp.outstanding != null && qp.sq != null && qp.outstanding.done != qp.sq.cons;
        if (qp.sq != null && (!qp.sq.empty() || unanswered)) {
            qp.sq.cons = qp.sq.prod;
            flushCompletion(qp, qp.sqCqId, V1.Cqe.TYPE_SEND_NPG);
        }
        if (remote != null) {
            remote.flush(qp);
        }
        flushes++;
        counters.add(qp, RdmaCounters.Device.QP_FLUSHES, 1);
    }

    private void flushCompletion(QueuePair qp, int cqId, int type) {
        CompletionQueue cq = cqId >= 0 && cqId < lif.cqCount ? lif.cqs[cqId] : null;
        if (cq == null) {
            return;
        }
        counters.add(qp, type == V1.Cqe.TYPE_RECV ? RdmaCounters.Device.RECV_COMPLETIONS
                : RdmaCounters.Device.SEND_COMPLETIONS, 1);
        counters.error(qp, V1.STS_WQE_FLUSHED_ERR);
        cqe.wrap(cqeBuf, 0).clear().statusLength(V1.STS_WQE_FLUSHED_ERR).qidType(qp.id, type, true);
        lif.complete(cq, cqeBuf, false);
    }

    void counters(Map<String, Long> m) {
        m.put("rdma.qp.flushes", flushes);
        m.put("rdma.sq.wqes", sqWqes);
        m.put("rdma.rq.wqes", rqWqes);
        m.put("rdma.sq.errors", sendErrors);
        m.put("rdma.ud.dropped", udDropped);
        m.put("rdma.bytes", bytes);
        m.put("rdma.rnr.failures", rnrFailures);
    }

    private QueuePair qp(int id) {
        return id >= 0 && id < lif.qpCount ? lif.qps[id] : null;
    }

    void rqDoorbell(int qid, int index) {
        QueuePair qp = qp(qid);
        if (qp == null || qp.rq == null) {
            refusals.refuse("rdma-db-rq", "RQ doorbell for QP " + qid + " without an RQ");
            return;
        }
        qp.rq.prod = index & qp.rq.mask();
        if (qp.held != null && remote != null) {
            remote.receivesPosted(qp);
        }
        if (!blocked.isEmpty()) {
            for (QueuePair waiting : List.copyOf(blocked)) {
                if (waiting.destQpn == qid) {
                    blocked.remove(waiting);
                    runSq(waiting);
                }
            }
        }
    }

    void sqDoorbell(int qid, int index) {
        QueuePair qp = qp(qid);
        if (qp == null || qp.sq == null) {
            refusals.refuse("rdma-db-sq", "SQ doorbell for QP " + qid + " without an SQ");
            return;
        }
        qp.sq.prod = index & qp.sq.mask();
        if (!blocked.contains(qp)) {
            runSq(qp);
        }
    }

    void runSq(QueuePair qp) {
        if (qp.remote() && remote != null) {
            remote.runSq(qp);
            return;
        }
        WorkQueue sq = qp.sq;
        while (!sq.empty()) {
            int index = sq.cons;
            long at = sq.slot(index);
            int stride = sq.stride();
            if (at < 0 || !dma.read(at, wqeBuf, 0, stride)) {
                refusals.refuse("rdma-sq-read", "QP " + qp.id + " SQ slot " + index + " unreadable");
                return;
            }
            wqe.wrap(wqeBuf, 0);
            int op = wqe.op();
            int status;
            moved = 0;
            try {
                status = execute(qp, op, stride);
            } catch (RuntimeException e) {
                refusals.refuse("rdma-sq-internal", "QP " + qp.id + " WQE failed: " + e);
                status = V1.STS_LOCAL_QP_OPER_ERR;
            }
            if (status == RemotePath.BLOCKED) {
                return; // a busy mesh connection: the remote path runs this SQ again when it drains
            }
            if (status == BLOCKED) {
                if (!blocked.contains(qp)) {
                    qp.blockedSinceNanos = System.nanoTime();
                    blocked.add(qp);
                }
                return;
            }
            sq.cons = (index + 1) & sq.mask();
            finish(qp, index, op, status, moved);
        }
    }

    /**
     * Receiver not ready, within this guest: an SQ whose SEND (or WRITE_IMM) has waited
     * {@link RemotePath#RNR_TIMEOUT_NANOS} for a receive completes that WQE with RNR-retry-exceeded and
     * goes on. Called about once a second.
     */
    void rnrTick(long now) {
        if (blocked.isEmpty()) {
            return;
        }
        for (QueuePair qp : List.copyOf(blocked)) {
            if (now - qp.blockedSinceNanos < RemotePath.RNR_TIMEOUT_NANOS || lif.qps[qp.id] != qp) {
                continue;
            }
            blocked.remove(qp);
            WorkQueue sq = qp.sq;
            int index = sq.cons;
            long at = sq.slot(index);
            if (at < 0 || !dma.read(at, wqeBuf, 0, sq.stride())) {
                continue;
            }
            int op = wqe.wrap(wqeBuf, 0).op();
            sq.cons = (index + 1) & sq.mask();
            rnrFailures++;
            finish(qp, index, op, V1.STS_RNR_RETRY_EXCEEDED, 0);
            runSq(qp);
        }
    }

    /** One send WQE done: counted and completed. */
    void finish(QueuePair qp, int index, int op, int status, long movedBytes) {
        sqWqes++;
        if (status != V1.STS_OK) {
            sendErrors++;
        }
        count(qp, op, status, movedBytes);
        sendCompletion(qp, index, op, status);
    }

    void udDropped() {
        udDropped++;
        counters.inc(RdmaCounters.Device.RX_UD_DROPPED);
    }

    /** The 8-byte scratch word atomics go through. */
    long word() {
        return Le.u64(word, 0);
    }

    void word(long v) {
        Le.put64(word, 0, v);
    }

    /** Counts one executed send WQE by opcode class. */
    private void count(QueuePair qp, int op, int status, long movedBytes) {
        long bytes = status == V1.STS_OK ? movedBytes : 0;
        RdmaCounters.Device reqs, data = null;
        switch (op) {
            case V1.Wqe.OP_SEND, V1.Wqe.OP_SEND_IMM, V1.Wqe.OP_SEND_INV -> {
                reqs = qp.datagram() ? RdmaCounters.Device.TX_UD_REQS : RdmaCounters.Device.TX_SEND_REQS;
                data = qp.datagram() ? RdmaCounters.Device.TX_UD_BYTES : RdmaCounters.Device.TX_SEND_BYTES;
            }
            case V1.Wqe.OP_RDMA_WRITE, V1.Wqe.OP_RDMA_WRITE_IMM -> {
                reqs = RdmaCounters.Device.TX_WRITE_REQS;
                data = RdmaCounters.Device.TX_WRITE_BYTES;
            }
            case V1.Wqe.OP_RDMA_READ -> {
                reqs = RdmaCounters.Device.TX_READ_REQS;
                data = RdmaCounters.Device.TX_READ_BYTES;
            }
            case V1.Wqe.OP_ATOMIC_CS, V1.Wqe.OP_ATOMIC_FA -> reqs = RdmaCounters.Device.TX_ATOMIC_REQS;
            default -> reqs = RdmaCounters.Device.LOCAL_REQS;
        }
        counters.add(qp, reqs, 1);
        if (data != null) {
            counters.add(qp, data, bytes);
        }
    }

    private static boolean remoteOp(int op) {
        return op <= V1.Wqe.OP_ATOMIC_FA;
    }

    private void sendCompletion(QueuePair qp, int index, int op, int status) {
        CompletionQueue cq = lif.cqs[qp.sqCqId];
        if (cq == null) {
            return;
        }
        counters.add(qp, RdmaCounters.Device.SEND_COMPLETIONS, 1);
        if (status != V1.STS_OK) {
            counters.error(qp, status);
        }
        cqe.wrap(cqeBuf, 0).clear();
        if (qp.connected() && remoteOp(op)) {
            qp.msn++;
            cqe.msn(qp.msn).qidType(qp.id, V1.Cqe.TYPE_SEND_MSN, status != V1.STS_OK);
        } else {
            cqe.npgWqeId(index & qp.sq.mask()).qidType(qp.id, V1.Cqe.TYPE_SEND_NPG, status != V1.STS_OK);
        }
        cqe.statusLength(status);
        lif.complete(cq, cqeBuf, false);
    }

    int execute(QueuePair qp, int op, int stride) {
        return switch (op) {
            case V1.Wqe.OP_SEND, V1.Wqe.OP_SEND_IMM, V1.Wqe.OP_SEND_INV -> qp.datagram() ? sendUd(qp, stride) : send(qp, op, stride);
            case V1.Wqe.OP_RDMA_WRITE, V1.Wqe.OP_RDMA_WRITE_IMM -> write(qp, op, stride);
            case V1.Wqe.OP_RDMA_READ -> read(qp, stride);
            case V1.Wqe.OP_ATOMIC_CS, V1.Wqe.OP_ATOMIC_FA -> atomic(qp, op);
            case V1.Wqe.OP_LOCAL_INV -> invalidate(wqe.immDataKey()) ? V1.STS_OK : V1.STS_MEM_MGMT_OPER_ERR;
            case V1.Wqe.OP_REG_MR -> regMr();
            default -> {
                refusals.refuse("rdma-sq-opcode", "QP " + qp.id + " WQE opcode " + op);
                yield V1.STS_LOCAL_QP_OPER_ERR;
            }
        };
    }

    // ---------------------------------------------------------------------------------------------
    // Memory through keys

    /**
     * Resolves {@code [va, va + len)} under {@code key} for {@code access} (MR flags; 0 = local read).
     * Sets spanMem/spanOff (spanMem null: raw bus address in spanOff). Returns an ionic status.
     */
    int resolve(QueuePair qp, int key, long va, long len, int access, boolean remote) {
        if (key == 0 && !remote) {
            if (!qp.privileged()) {
                return V1.STS_LOCAL_PROT_ERR;
            }
            if (!Dma.validRange(va, len)) {
                return V1.STS_LOCAL_PROT_ERR;
            }
            spanMem = null;
            spanOff = va;
            return V1.STS_OK;
        }
        int index = key >>> 8;
        MemoryRegion mr = index > 0 && index < lif.mrCount ? lif.mrs[index] : null;
        int err = remote ? V1.STS_REMOTE_ACC_ERR : V1.STS_LOCAL_PROT_ERR;
        if (mr == null || mr.key != (key & 0xff) || !mr.covers(va, len)) {
            return err;
        }
        if ((mr.flags & access) != access) {
            return err;
        }
        spanMem = mr.mem;
        spanOff = mr.offset(va);
        return V1.STS_OK;
    }

    /** Adds the range resolve() found to {@code spans}. */
    boolean addResolved(Spans spans, long len) {
        return spans.addGuest(spanMem, spanOff, len);
    }

    /**
     * Copies {@code len} bytes from {@code src} to {@code dst} (both already checked), one contiguous run
     * at a time: straight from segment to segment where both sides are mapped (one MemorySegment.copy),
     * else through the 64 KiB bounce buffer. False when guest memory cannot be reached.
     */
    boolean copy(Spans src, Spans dst, long len) {
        int si = 0, di = 0;
        long so = 0, dOff = 0, left = len;
        while (left > 0) {
            while (si < src.count && so == src.len[si]) {
                si++;
                so = 0;
            }
            while (di < dst.count && dOff == dst.len[di]) {
                di++;
                dOff = 0;
            }
            if (si == src.count || di == dst.count) {
                return false;
            }
            long chunk = Math.min(left, Math.min(src.len[si] - so, dst.len[di] - dOff));
            chunk = Math.min(chunk, run(src, si, so, chunk));
            chunk = Math.min(chunk, run(dst, di, dOff, chunk));
            if (chunk <= 0) {
                return false;
            }
            if (view(src, si, so, chunk, false)) {
                MemorySegment from = viewSeg;
                long fromOff = viewOff;
                if (view(dst, di, dOff, chunk, true)) {
                    MemorySegment.copy(from, fromOff, viewSeg, viewOff, chunk);
                } else {
                    chunk = Math.min(chunk, BOUNCE);
                    MemorySegment.copy(from, fromOff, bounce, 0, chunk);
                    if (!move(dst, di, dOff, chunk, true)) {
                        return false;
                    }
                }
            } else {
                chunk = Math.min(chunk, BOUNCE);
                if (!move(src, si, so, chunk, false) || !move(dst, di, dOff, chunk, true)) {
                    return false;
                }
            }
            so += chunk;
            dOff += chunk;
            left -= chunk;
        }
        bytes += len;
        return true;
    }

    /** What view() found: a segment and the offset of the entry's bytes in it. */
    private MemorySegment viewSeg;
    private long viewOff;

    /**
     * Entry {@code i} at {@code o}, {@code n} bytes, as a segment to copy from (or to, marking it dirty):
     * device-local bytes, or guest memory in one mapping. False when there is no such segment.
     */
    private boolean view(Spans s, int i, long o, long n, boolean write) {
        if (s.local[i] != null) {
            viewSeg = s.local[i];
            viewOff = s.off[i] + o;
            return true;
        }
        long addr = s.mem[i] == null ? s.off[i] + o : s.mem[i].addr(s.off[i] + o);
        if (addr < 0) {
            return false;
        }
        viewSeg = write ? dma.writable(addr, n) : dma.readable(addr, n);
        viewOff = 0;
        return viewSeg != null;
    }

    /** Contiguous bytes of entry {@code i} from {@code o} (at most {@code max}); 0 when unreachable. */
    private static long run(Spans s, int i, long o, long max) {
        if (s.local[i] != null || s.mem[i] == null) {
            return max;
        }
        return s.mem[i].addr(s.off[i] + o) < 0 ? 0 : s.mem[i].run(s.off[i] + o, max);
    }

    /** Moves {@code n} bytes between entry {@code i} at {@code o} and the bounce buffer. */
    private boolean move(Spans s, int i, long o, long n, boolean toEntry) {
        if (s.local[i] != null) {
            if (toEntry) {
                MemorySegment.copy(bounce, 0, s.local[i], s.off[i] + o, n);
            } else {
                MemorySegment.copy(s.local[i], s.off[i] + o, bounce, 0, n);
            }
            return true;
        }
        long addr = s.mem[i] == null ? s.off[i] + o : s.mem[i].addr(s.off[i] + o);
        if (addr < 0) {
            return false;
        }
        return toEntry ? dma.write(addr, bounce, 0, n) : dma.read(addr, bounce, 0, n);
    }

    /** SGL offset of a WQE (after the spec lengths when a SPEC flag is set). */
    static int sgl(V1.Wqe w) {
        return (w.flags() & V1.Wqe.SPEC_MASK) != 0 ? V1.Wqe.SPEC_SGL : V1.Wqe.PLD;
    }

    /** The WQE's payload (inline data or its SGEs, each checked for local read) into {@code src}. */
    int gather(QueuePair qp, int stride, Spans src) {
        if ((wqe.flags() & V1.Wqe.FLAG_INL) != 0) {
            long len = wqe.length();
            if (len > stride - V1.Wqe.PLD) {
                return V1.STS_LOCAL_LEN_ERR;
            }
            src.addLocal(wqeBuf, V1.Wqe.PLD, len);
            return V1.STS_OK;
        }
        int n = wqe.numSgeKey(), sgl = sgl(wqe);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride || n > Spans.MAX - 2) {
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        for (int i = 0; i < n; i++) {
            long len = wqe.sgeLen(sgl, i);
            if (len == 0) {
                continue;
            }
            int st = resolve(qp, wqe.sgeLkey(sgl, i), wqe.sgeVa(sgl, i), len, ACCESS_LOCAL_READ, false);
            if (st != V1.STS_OK) {
                return st;
            }
            addResolved(src, len);
            if (src.total > MAX_MESSAGE) {
                return V1.STS_LOCAL_LEN_ERR;
            }
        }
        return V1.STS_OK;
    }

    /** The first {@code len} bytes of the SGEs of {@code w}, checked for local write, into {@code dst}. */
    int scatterList(QueuePair qp, V1.Wqe w, int stride, long len, Spans dst) {
        int n = w.numSgeKey(), sgl = sgl(w);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride || n > Spans.MAX - 2) {
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        long left = len;
        for (int i = 0; i < n && left > 0; i++) {
            long chunk = Math.min(w.sgeLen(sgl, i), left);
            if (chunk == 0) {
                continue;
            }
            int st = resolve(qp, w.sgeLkey(sgl, i), w.sgeVa(sgl, i), chunk, V1.MRF_LOCAL_WRITE, false);
            if (st != V1.STS_OK) {
                return st;
            }
            addResolved(dst, chunk);
            left -= chunk;
        }
        return left > 0 ? V1.STS_LOCAL_LEN_ERR : V1.STS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Operations

    /** Takes the next receive WQE of {@code dest} into rqeBuf; false when its RQ is empty. */
    boolean takeReceive(QueuePair dest) {
        WorkQueue rq = dest.rq;
        if (rq == null || rq.empty()) {
            return false;
        }
        long at = rq.slot(rq.cons);
        if (at < 0 || !dma.read(at, rqeBuf, 0, rq.stride())) {
            return false;
        }
        rqe.wrap(rqeBuf, 0);
        rq.cons = (rq.cons + 1) & rq.mask();
        rqWqes++;
        return true;
    }

    /** Posts a receive completion on {@code dest}'s RQ CQ for the WQE in rqeBuf. */
    void receiveCompletion(QueuePair dest, int srcQpnOp, int imm, long length, int status,
                                   long srcMac, int vlan, boolean solicited) {
        counters.add(dest, RdmaCounters.Device.RX_RECV_REQS, 1);
        if (status == V1.STS_OK) {
            counters.add(dest, RdmaCounters.Device.RX_RECV_BYTES, length);
        }
        CompletionQueue cq = lif.cqs[dest.rqCqId];
        if (cq == null) {
            return;
        }
        counters.add(dest, RdmaCounters.Device.RECV_COMPLETIONS, 1);
        if (status != V1.STS_OK) {
            counters.error(dest, status);
        }
        cqe.wrap(cqeBuf, 0).clear().wqeId(rqe.wqeId()).srcQpnOp(srcQpnOp).immDataRkey(imm)
                .srcMac(srcMac).vlanTag(vlan)
                .statusLength(status == V1.STS_OK ? (int) length : status)
                .qidType(dest.id, V1.Cqe.TYPE_RECV, status != V1.STS_OK);
        lif.complete(cq, cqeBuf, solicited);
    }

    private int send(QueuePair qp, int op, int stride) {
        QueuePair dest = qp(qp.destQpn);
        if (dest == null || !dest.connected() || dest.rq == null) {
            return V1.STS_RETRY_EXCEEDED;
        }
        if (dest.rq.empty()) {
            return BLOCKED;
        }
        int st = gather(qp, stride, src.clear());
        if (st != V1.STS_OK) {
            return st;
        }
        takeReceive(dest);
        long len = src.total;
        int recvSt = scatterList(dest, rqe, dest.rq.stride(), len, dst.clear());
        if (recvSt == V1.STS_OK && !copy(src, dst, len)) {
            recvSt = V1.STS_LOCAL_PROT_ERR;
        }
        int recvOp = switch (op) {
            case V1.Wqe.OP_SEND_IMM -> V1.Cqe.RECV_OP_SEND_IMM;
            case V1.Wqe.OP_SEND_INV -> V1.Cqe.RECV_OP_SEND_INV;
            default -> V1.Cqe.RECV_OP_SEND;
        };
        int imm = op == V1.Wqe.OP_SEND ? 0 : wqe.immDataKey();
        if (op == V1.Wqe.OP_SEND_INV && recvSt == V1.STS_OK) {
            invalidate(imm);
        }
        receiveCompletion(dest, qp.id | recvOp << 24, imm, len, recvSt, 0, 0,
                (wqe.flags() & V1.Wqe.FLAG_SOL) != 0);
        moved = len;
        return requesterStatus(recvSt);
    }

    /**
     * What the requester of a SEND sees when the responder's receive failed with {@code recvSt}: a
     * message longer than the receive buffer is the requester's fault (NAK invalid request,
     * REM_INV_REQ_ERR); a receive WQE the responder may not use (bad key, SGE past its MR,
     * malformed) is the responder's own (NAK remote operational error, REM_OP_ERR).
     */
    static int requesterStatus(int recvSt) {
        return switch (recvSt) {
            case V1.STS_OK -> V1.STS_OK;
            case V1.STS_LOCAL_LEN_ERR -> V1.STS_REMOTE_INV_REQ_ERR;
            default -> V1.STS_REMOTE_OPER_ERR;
        };
    }

    private int write(QueuePair qp, int op, int stride) {
        QueuePair dest = qp(qp.destQpn);
        if (dest == null || !dest.connected()) {
            return V1.STS_RETRY_EXCEEDED;
        }
        boolean imm = op == V1.Wqe.OP_RDMA_WRITE_IMM;
        if (imm && (dest.rq == null || dest.rq.empty())) {
            return dest.rq == null ? V1.STS_REMOTE_INV_REQ_ERR : BLOCKED;
        }
        int st = gather(qp, stride, src.clear());
        if (st != V1.STS_OK) {
            return st;
        }
        long len = src.total;
        st = resolve(dest, wqe.rkey(), wqe.remoteVa(), len, V1.MRF_REMOTE_WRITE, true);
        if (st == V1.STS_OK && addResolved(dst.clear(), len) && !copy(src, dst, len)) {
            st = V1.STS_REMOTE_ACC_ERR;
        }
        if (st != V1.STS_OK) {
            return st;
        }
        moved = len;
        counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        if (imm) {
            takeReceive(dest);
            receiveCompletion(dest, qp.id | V1.Cqe.RECV_OP_RDMA_IMM << 24, wqe.immDataKey(), len, V1.STS_OK, 0, 0,
                    (wqe.flags() & V1.Wqe.FLAG_SOL) != 0);
        }
        return V1.STS_OK;
    }

    private int read(QueuePair qp, int stride) {
        QueuePair dest = qp(qp.destQpn);
        if (dest == null || !dest.connected()) {
            return V1.STS_RETRY_EXCEEDED;
        }
        int n = wqe.numSgeKey(), sgl = sgl(wqe);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride) {
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            total += wqe.sgeLen(sgl, i);
        }
        if (total > MAX_MESSAGE) {
            return V1.STS_LOCAL_LEN_ERR;
        }
        // The local SGEs receive the data: checked for local write first.
        int st = scatterList(qp, wqe, stride, total, dst.clear());
        if (st != V1.STS_OK) {
            return st;
        }
        st = resolve(dest, wqe.rkey(), wqe.remoteVa(), total, V1.MRF_REMOTE_READ, true);
        if (st == V1.STS_OK && addResolved(src.clear(), total) && !copy(src, dst, total)) {
            st = V1.STS_REMOTE_ACC_ERR;
        }
        if (st == V1.STS_OK) {
            moved = total;
            counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        }
        return st;
    }

    private int atomic(QueuePair qp, int op) {
        QueuePair dest = qp(qp.destQpn);
        if (dest == null || !dest.connected()) {
            return V1.STS_RETRY_EXCEEDED;
        }
        long va = wqe.remoteVa();
        if ((va & 7) != 0) {
            return V1.STS_REMOTE_INV_REQ_ERR;
        }
        int st = resolve(dest, wqe.rkey(), va, 8, V1.MRF_REMOTE_ATOMIC, true);
        if (st != V1.STS_OK) {
            return st;
        }
        PageTable remoteMem = spanMem;
        long remoteOff = spanOff;
        if (!wordIo(remoteMem, remoteOff, false)) {
            return V1.STS_REMOTE_ACC_ERR;
        }
        long old = Le.u64(word, 0);
        long next = op == V1.Wqe.OP_ATOMIC_CS ? (old == wqe.compare() ? wqe.swapAdd() : old) : old + wqe.swapAdd();
        st = resolveAtomicResult(qp);
        if (st != V1.STS_OK) {
            return st;
        }
        PageTable localMem = spanMem;
        long localOff = spanOff;
        Le.put64(word, 0, next);
        if (!wordIo(remoteMem, remoteOff, true)) {
            return V1.STS_REMOTE_ACC_ERR;
        }
        Le.put64(word, 0, old);
        bytes -= 16; // three 8-byte moves for one 8-byte operation
        moved = 8;
        counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        return wordIo(localMem, localOff, true) ? V1.STS_OK : V1.STS_LOCAL_PROT_ERR;
    }

    /**
     * The local SGE of the atomic WQE in wqeBuf (v1 body: va @48, len @56, lkey @60), which takes the old
     * value: resolved for local write into spanMem/spanOff. Returns an ionic status.
     */
    int resolveAtomicResult(QueuePair qp) {
        return resolve(qp, Be.u32(wqeBuf, 60), Be.u64(wqeBuf, 48), 8, V1.MRF_LOCAL_WRITE, false);
    }

    /** The 8 bytes of {@code word} to or from a checked range (which may cross a page). */
    boolean wordIo(PageTable table, long offset, boolean toGuest) {
        Spans guest = dst.clear();
        guest.addGuest(table, offset, 8);
        Spans here = src.clear();
        here.addLocal(word, 0, 8);
        return toGuest ? copy(here, guest, 8) : copy(guest, here, 8);
    }

    boolean invalidate(int key) {
        int index = key >>> 8;
        MemoryRegion mr = index > 0 && index < lif.mrCount ? lif.mrs[index] : null;
        if (mr == null || mr.key != (key & 0xff)) {
            return false;
        }
        mr.valid = false;
        return true;
    }

    /** Kernel fast registration: bind a new key and page table to an MR. */
    private int regMr() {
        int mrid = wqe.immDataKey();
        int index = mrid >>> 8;
        MemoryRegion mr = index > 0 && index < lif.mrCount ? lif.mrs[index] : null;
        if (mr == null) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        long va = Be.u64(wqeBuf, 16), length = Be.u64(wqeBuf, 24), offset = Be.u64(wqeBuf, 32);
        long table = Be.u64(wqeBuf, 40);
        int count = Be.u32(wqeBuf, 48);
        int flags = Be.u16(wqeBuf, 52);
        int pageShift = Le.u8(wqeBuf, 55);
        if (length < 0 || Long.compareUnsigned(va, -1L - length) > 0 || pageShift < 12 || pageShift > 30) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        long pageMask = (1L << pageShift) - 1;
        PageTable mem;
        if (count == 1) {
            mem = PageTable.contiguous((table & pageMask) == 0 ? table + (offset & pageMask) : table, length);
        } else {
            mem = PageTable.read(dma, table, count, pageShift, offset & pageMask, length);
        }
        if (mem == null) {
            return V1.STS_MEM_MGMT_OPER_ERR;
        }
        mr.key = wqe.numSgeKey();
        mr.va = va;
        mr.length = length;
        mr.flags = flags;
        mr.mem = mem;
        mr.valid = true;
        return V1.STS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Datagrams

    private int sendUd(QueuePair qp, int stride) {
        Spans payload = src.clear();
        payload.addLocal(grh, 0, GRH_SIZE); // filled in below, once the AH is known
        int st = gather(qp, stride, payload);
        if (st != V1.STS_OK) {
            return st;
        }
        long len = payload.total - GRH_SIZE;
        moved = len;
        int qkey = wqe.destQkey();
        if (qkey < 0) { // a controlled key stands for the sending QP's own
            qkey = qp.qkey;
        }
        int ahId = wqe.ahId();
        AddressHandle ah = ahId >= 0 && ahId < lif.ahCount ? lif.ahs[ahId] : null;
        if (ah != null && ah.node >= 0 && remote != null) {
            buildGrh(ah, len);
            return remote.sendUd(qp, ah, payload, wqe.destQpn() & 0xff_ffff, qkey);
        }
        QueuePair dest = qp(wqe.destQpn() & 0xff_ffff);
        if (dest == null || !dest.datagram() || dest.qkey != qkey || !takeReceive(dest)) {
            udDropped();
            return V1.STS_OK; // a datagram that finds no taker is lost, not an error of the sender
        }
        buildGrh(ah, len);
        int recvSt = scatterList(dest, rqe, dest.rq.stride(), len + GRH_SIZE, dst.clear());
        if (recvSt == V1.STS_OK && !copy(payload, dst, len + GRH_SIZE)) {
            recvSt = V1.STS_LOCAL_PROT_ERR;
        }
        int flags = qp.id & 0xff_ffff;
        if (ah != null && ah.ipv4) {
            flags |= V1.Cqe.RECV_IS_IPV4;
        }
        int vlan = 0;
        if (ah != null && ah.vlan >= 0) {
            flags |= V1.Cqe.RECV_IS_VLAN;
            vlan = ah.vlan;
        }
        int op = wqe.op() == V1.Wqe.OP_SEND_IMM ? V1.Cqe.RECV_OP_SEND_IMM : V1.Cqe.RECV_OP_SEND;
        receiveCompletion(dest, flags | op << 24, op == V1.Cqe.RECV_OP_SEND_IMM ? wqe.immDataKey() : 0,
                len + GRH_SIZE, recvSt, ah != null ? ah.smac : 0, vlan, (wqe.flags() & V1.Wqe.FLAG_SOL) != 0);
        return V1.STS_OK;
    }

    /** The 40-byte GRH area: an IPv6 header, or for IPv4 the IPv4 header at offset 20. */
    private void buildGrh(AddressHandle ah, long len) {
        grh.fill((byte) 0);
        if (ah == null) {
            return;
        }
        if (ah.ipv4) {
            int h = 20;
            Le.put8(grh, h, 0x45);
            Le.put8(grh, h + 1, ah.trafficClass);
            Be.put16(grh, h + 2, (int) Math.min(0xffff, 20 + 8 + 12 + 8 + len + 4));
            Be.put16(grh, h + 6, 0x4000); // DF
            Le.put8(grh, h + 8, ah.hopLimit);
            Le.put8(grh, h + 9, 17);
            MemorySegment.copy(MemorySegment.ofArray(ah.sgid), 12, grh, h + 12, 4);
            MemorySegment.copy(MemorySegment.ofArray(ah.dgid), 12, grh, h + 16, 4);
            int sum = 0;
            for (int i = 0; i < 20; i += 2) {
                sum += Be.u16(grh, h + i);
            }
            sum = (sum & 0xffff) + (sum >>> 16);
            sum = (sum & 0xffff) + (sum >>> 16);
            Be.put16(grh, h + 10, ~sum & 0xffff);
        } else {
            Be.put32(grh, 0, 6 << 28 | (ah.trafficClass & 0xff) << 20);
            Be.put16(grh, 4, (int) Math.min(0xffff, 8 + 12 + 8 + len + 4));
            Le.put8(grh, 6, 17);
            Le.put8(grh, 7, ah.hopLimit);
            MemorySegment.copy(MemorySegment.ofArray(ah.sgid), 0, grh, 8, 16);
            MemorySegment.copy(MemorySegment.ofArray(ah.dgid), 0, grh, 24, 16);
        }
    }
}
