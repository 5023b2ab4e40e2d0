package ernic.ionic.rdma;

import java.util.concurrent.Future;
import java.util.function.LongSupplier;

import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.base.Dma;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.regs.InterruptController;
import ernic.vfiouser.server.Refusals;
import io.netty.util.concurrent.Ticker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * The RDMA data path of the device, one for every destination: the {@link Requester} runs the send
 * queues and hands each WQE to an {@link End} (a QP of this guest through {@link LocalEnd}, a peer
 * server's guest through {@link RemotePath}); the {@link Responder} applies operations to this guest's
 * QPs, whoever asked; {@link KeyedMemory} is the only way to guest memory, through the MR table.
 * This class wires them, takes the SQ, RQ and CQ doorbells (each checked against its page) and the RDMA tick,
 * posts every completion through its {@link Completions}, and moves QPs to ERROR (flush).
 * Time comes from one injected clock; wake-ups at a given time (an added latency's end) from the device
 * loop's timer ({@link #timer}), and from the RDMA tick as well. Device thread only.
 */
final class DataPath implements QpErrors {
    /**
     * The RDMA tick: RNR waits (5 s), lost peers (30 s), the responder's held messages (0.5 s when full), and
     * added latencies the timer has not ended yet.
     */
    static final long TICK_MILLIS = 100;

    private final RdmaLif lif;
    private final Refusals refusals;
    private final RdmaCounters counters;
    private final KeyedMemory memory;
    private final Responder responder;
    private final Requester requester;
    private final KeyedHostMemory hostMemory;
    private final FaultPlan faults;
    /** Where every CQE and its event go out (the admin queue's too). */
    final Completions completions;
    private final MemorySegment cqeBuf = Arena.ofAuto().allocate(V1.Cqe.SIZE, 8);
    private final V1.Cqe cqe = new V1.Cqe();
    private Ticker clock = Ticker.systemTicker();
    /** Where wake-ups are scheduled (the device loop); null: the RDMA tick alone wakes (tests move the clock). */
    private RdmaLif.Timer timer;
    /** A wake-up is scheduled for {@link #armedFor}: {@link #pendingWake}, the only one in the loop's queue. */
    private boolean armed;
    private long armedFor;
    private Future<?> pendingWake;
    private final Runnable wakeTask = this::wakeUp;
    /** The data path's totals (rdma.) and the remote path's (rdma.remote.), which outlive a mesh attachment. */
    final Counters<PathCounter> pathCounters = new Counters<>(PathCounter.class);
    final Counters<RemoteCounter> remoteCounters = new Counters<>(RemoteCounter.class);
    /** The data path to other servers' guests, when the server is in a mesh. */
    RemotePath remote;
    /** RoCEv2 on the Ethernet port ({@code --roce}), or null. */
    WireEnd wire;
    /** The in-process peers at addresses of their own (none named here). */
    final Attachments attachments;

    DataPath(RdmaLif lif, Dma dma, InterruptController intr, Refusals refusals, RdmaCounters counters,
             FaultPlan faults) {
        this.lif = lif;
        this.refusals = refusals;
        this.counters = counters;
        this.faults = faults;
        this.completions = new Completions(lif.eventQueues, dma, intr, counters, refusals);
        this.memory = new KeyedMemory(lif, dma, refusals, pathCounters);
        this.responder = new Responder(lif, memory, refusals, counters, pathCounters, this, completions);
        this.hostMemory = new KeyedHostMemory(memory, pathCounters);
        this.attachments = new Attachments(lif, memory, responder, this, refusals, hostMemory);
        this.requester = new Requester(lif, memory, refusals, counters, pathCounters,
                new LocalEnd(lif, memory, responder), this::now, this, faults, this::wakeAt, completions,
                attachments);
    }

    /** Guest memory as RDMA reaches it (the MR table, its windows). */
    KeyedMemory memory() {
        return memory;
    }

    /** Guest memory as an in-process target reaches it: by rkey, with a remote peer's rights. */
    KeyedHostMemory hostMemory() {
        return hostMemory;
    }

    /** The clock every RDMA timer reads (the device loop's ticker; a mock one in tests). */
    void clock(Ticker ticker) {
        this.clock = ticker;
    }

    long now() {
        return clock.nanoTime();
    }

    /** Where to schedule wake-ups at a given time (null: none; the RDMA tick still wakes). */
    void timer(RdmaLif.Timer timer) {
        this.timer = timer;
        armed = false;
    }

    /**
     * Asks for a wake-up at clock time {@code deadline}: one timer task, unless one is due no later already. A
     * later one it supersedes is cancelled, which takes it out of the loop's queue. Left there, each stale task
     * woke the data path when it fired, and every QP's timer was scheduled again: with several RC QPs on the wire
     * the queue grew to hundreds of thousands of tasks, whose young collections stalled the device thread beyond
     * the driver's 2 s admin timeout. The task (the loop's, around {@link #wakeTask}) is the only allocation: one
     * per wake-up, none for an operation that does not wait.
     */
    private void wakeAt(long deadline) {
        if (timer == null || armed && armedFor - deadline <= 0) {
            return;
        }
        if (pendingWake != null) {
            pendingWake.cancel(false);
        }
        armed = true;
        armedFor = deadline;
        pendingWake = timer.after(Math.max(0, deadline - now()), wakeTask);
    }

    private void wakeUp() {
        armed = false;
        pendingWake = null;
        long now = now();
        requester.wake(now);
        if (wire != null) {
            wire.wake(now);
        }
    }

    /** Puts RC QPs whose destination is not here on the wire: RoCEv2 frames go out through {@code port}. */
    WireEnd roce(java.util.function.Consumer<java.lang.foreign.MemorySegment> port, LongSupplier mac) {
        wire = new WireEnd(lif, memory, responder, requester, this, refusals, this::now, this::wakeAt, port, mac,
                faults);
        requester.wire = wire;
        return wire;
    }

    /** Joins a mesh through {@code port}: QPs whose peer another node owns go there. */
    void attach(PeerPort port) {
        remote = new RemotePath(lif, memory, requester, responder, refusals, remoteCounters, port, this::now);
        requester.remote = remote;
    }

    /** Puts a P4 program on every send WQE (null takes it off); its counters are {@code counters}. */
    void wqeFilter(WqeFilter filter, Counters<P4WqeCounter> counters) {
        requester.p4 = filter == null ? null : new WqePipeline(lif, memory, refusals, this.counters, filter, counters);
    }

    /** Traces what the requester carries out into {@code out} (null: no more). */
    void trace(ernic.ionic.trace.PcapTrace out) {
        if (out != null) {
            out.start(now());
        }
        requester.trace = out == null ? null : new RdmaTrace(lif, memory, this::now, out);
        if (wire != null) {
            wire.trace = out;
        }
    }

    /** The guest transmitted a frame from {@code hi:lo}: with a mesh, it may learn the GID. */
    void sourceSeen(long hi, long lo) {
        if (wire != null) {
            wire.sourceSeen(hi, lo);
        }
        if (remote != null) {
            remote.sourceSeen(hi, lo);
        }
    }

    /** A MODIFY_QP began to wait for a GID's owner (counted as {@code rdma.remote.rtrWaits}). */
    void remoteWaited() {
        remoteCounters.inc(RemoteCounter.RTR_WAITS);
    }

    void detach() {
        if (remote != null) {
            remote.close();
            remote = null;
            requester.remote = null;
        }
    }

    void reset() {
        if (wire != null) {
            wire.reset();
        }
        attachments.reset();
        requester.reset();
        if (remote != null) {
            remote.reset();
        }
    }

    void registerCounters(CounterRegistry registry) {
        registry.register("rdma.", pathCounters);
        registry.register("rdma.remote.", remoteCounters);
        if (wire != null) {
            wire.registerCounters(registry); // roce., roce.rc.
        }
        registry.registerGauge("rdma.remote.heldBytes", this::heldBytes);
    }

    /** Bytes of peers' requests held for a receive (a gauge). */
    long heldBytes() {
        return remote == null ? 0 : remote.responder.heldBytes;
    }

    /** The RDMA tick, every {@link #TICK_MILLIS} on the device thread. */
    void tick(long now) {
        requester.tick(now);
        requester.wake(now);
        attachments.tick();
        if (remote != null) {
            remote.tick(now);
        }
        if (wire != null) {
            wire.wake(now);
        }
    }

    void forget(QueuePair qp) {
        if (wire != null) {
            wire.forget(qp);
        }
        requester.forget(qp);
        attachments.forget(qp);
        if (remote != null) {
            remote.forget(qp);
        }
    }

    /**
     * A QP moved to ERROR: its outstanding work is taken back with one flush-error completion per
     * queue that had any (RECV / SEND_NPG type, status WQE_FLUSHED), which also wakes a consumer
     * sleeping on the CQ's event. Answers still to come for it are ignored.
     */
    void flush(QueuePair qp) {
        flush(qp, false, false);
    }

    /** {@link #flush}; {@code sqAlways}, {@code rqAlways}: that queue's flush completion even when it is empty. */
    private void flush(QueuePair qp, boolean sqAlways, boolean rqAlways) {
        if (wire != null) {
            wire.forget(qp);
        }
        requester.forget(qp);
        flushRq(qp, false, rqAlways);
        flushSq(qp, false, sqAlways);
        if (remote != null) {
            remote.flush(qp);
        }
        pathCounters.inc(PathCounter.QP_FLUSHES);
        counters.add(qp, RdmaCounters.Device.QP_FLUSHES, 1);
    }

    /**
     * An error completion of a connected QP: it moves to ERROR and what it still had is flushed. libionic
     * and ionic_rdma then flush their own copies of the posted work on the flush completions (an extra one
     * is ignored), so the device posts one per queue, not one per WQE. A UD QP goes on. The error
     * completion, held by its CQ ({@link CompletionQueue#hold}), is let out here, after the flush
     * completions written behind it. A flush completion (which consumes no WQE) follows a held error
     * completion in its CQ even when its queue is empty: the host may have posted more that the device has
     * not seen (its doorbell is on the way), and libionic flushes that only when an entry follows the error
     * (see {@link CompletionQueue#hold}). A QP that fails with no completion of its own (an RC responder)
     * holds nothing and gets flush completions only for what it had.
     */
    @Override
    public void failed(QueuePair qp) {
        if (qp.connected() && !qp.inError() && lif.queuePairs.get(qp.id) == qp) {
            qp.state = V1.QPS_ERR;
            flush(qp, holding(qp.sqCqId), holding(qp.rqCqId) && qp.rqCqId != qp.sqCqId); // one entry per CQ is enough
        }
        release(qp.sqCqId);
        release(qp.rqCqId);
    }

    private void release(int cqId) {
        CompletionQueue cq = cq(cqId);
        if (cq != null) {
            completions.release(cq);
        }
    }

    private boolean holding(int cqId) {
        CompletionQueue cq = cq(cqId);
        return cq != null && cq.holding();
    }

    private CompletionQueue cq(int id) {
        return lif.completionQueues.get(id);
    }

    /**
     * Takes back what the RQ holds, with a flush completion ({@code once}: unless the driver has had one
     * since the QP entered ERROR; it flushes later receives itself; {@code always}: even when it holds none).
     */
    private void flushRq(QueuePair qp, boolean once, boolean always) {
        if (qp.rq == null || qp.rq.empty() && !always) {
            return;
        }
        qp.rq.cons = qp.rq.prod;
        if (!(once && qp.rqFlushed)) {
            flushCompletion(qp, qp.rqCqId, V1.Cqe.TYPE_RECV);
        }
        qp.rqFlushed = true;
    }

    /**
     * The same for the SQ, including WQEs issued to a peer and not answered yet (their replies are stale);
     * {@code always}: with a flush completion even when there is nothing to take back.
     */
    private void flushSq(QueuePair qp, boolean once, boolean always) {
        if (qp.sq == null) {
            return;
        }
        boolean unanswered = qp.outstanding != null && qp.outstanding.done != qp.sq.cons;
        if (!qp.sq.empty() || unanswered || always) {
            qp.sq.cons = qp.sq.prod;
            if (!(once && qp.sqFlushed)) {
                flushCompletion(qp, qp.sqCqId, V1.Cqe.TYPE_SEND_NPG);
            }
            qp.sqFlushed = true;
        }
        if (qp.outstanding != null) {
            qp.outstanding.done = qp.sq.cons;
        }
        qp.faultSlot = -1;
    }

    private void flushCompletion(QueuePair qp, int cqId, int type) {
        CompletionQueue cq = cq(cqId);
        if (cq == null) {
            return;
        }
        counters.add(qp, type == V1.Cqe.TYPE_RECV ? RdmaCounters.Device.RECV_COMPLETIONS
                : RdmaCounters.Device.SEND_COMPLETIONS, 1);
        counters.error(qp, V1.STS_WQE_FLUSHED_ERR);
        cqe.wrap(cqeBuf, 0).clear().statusLength(V1.STS_WQE_FLUSHED_ERR).qidType(qp.id, type, true);
        completions.post(cq, cqeBuf, false);
    }

    private QueuePair qp(int id) {
        return lif.queuePairs.get(id);
    }

    /**
     * A queue's doorbell counts only on the page of its dbid (LIF 0: page = dbid), as hardware honours it:
     * one process cannot ring another's queues from its own page. (The admin queue's doorbell is checked here
     * too.)
     */
    boolean onOwnPage(int page, int dbid, String kind, int qid) {
        if (page == dbid) {
            return true;
        }
        refusals.refuse("rdma-db-page", kind + " " + qid + " rung on doorbell page " + page + ", its page is " + dbid);
        return false;
    }

    /** A CQ doorbell: the driver's consumer index, and an arm ({@code ring} 1: any, 2: solicited only). */
    void cqDoorbell(int page, int qid, int ring, int index) {
        CompletionQueue cq = cq(qid);
        if (cq == null) {
            refusals.refuse("rdma-db-cq", "doorbell for CQ " + qid + " that does not exist");
            return;
        }
        if (!onOwnPage(page, cq.dbid, "CQ", qid)) {
            return;
        }
        if (cq.doorbell(ring, index)) {
            completions.notify(cq);
        }
    }

    void rqDoorbell(int page, int qid, int index) {
        QueuePair qp = rung(page, qid, index, false);
        if (qp == null) {
            return;
        }
        if (qp.inError()) { // flushed, not executed: one flush completion tells the driver so
            flushRq(qp, true, false);
            return;
        }
        if (remote != null && remote.responder.holds(qp)) {
            remote.responder.receivesPosted(qp);
        }
        attachments.receivesPosted(qid);
        requester.receivesPosted(qid);
    }

    void sqDoorbell(int page, int qid, int index) {
        QueuePair qp = rung(page, qid, index, true);
        if (qp == null) {
            return;
        }
        if (qp.inError()) {
            flushSq(qp, true, false);
            return;
        }
        requester.doorbell(qp);
        attachments.receivesPosted(-1); // an attached peer's answers arrive after the send that caused them
    }

    /**
     * The QP whose SQ ({@code sq}) or RQ a doorbell rang, with that queue's producer index moved to {@code index}; null
     * when the doorbell is refused (no such QP or queue, or not the QP's own doorbell page).
     */
    private QueuePair rung(int page, int qid, int index, boolean sq) {
        QueuePair qp = qp(qid);
        WorkQueue wq = qp == null ? null : sq ? qp.sq : qp.rq;
        if (wq == null) {
            String queue = sq ? "SQ" : "RQ";
            refusals.refuse(sq ? "rdma-db-sq" : "rdma-db-rq",
                    queue + " doorbell for QP " + qid + " without an " + queue);
            return null;
        }
        if (!onOwnPage(page, qp.dbid, sq ? "SQ of QP" : "RQ of QP", qid)) {
            return null;
        }
        wq.prod = index & wq.mask();
        return qp;
    }
}
