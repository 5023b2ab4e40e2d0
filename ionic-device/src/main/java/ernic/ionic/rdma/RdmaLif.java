package ernic.ionic.rdma;

import ernic.ionic.base.Bar2;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.base.DoorbellHandler;
import ernic.ionic.base.Dma;
import ernic.ionic.base.RdmaCommandHandler;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Ring;
import ernic.ionic.profile.Profile;
import ernic.ionic.regs.InterruptController;
import ernic.ionic.regs.Opcode;
import ernic.ionic.regs.Status;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.TreeMap;

/**
 * The RDMA side of LIF 0: the bootstrap device commands (50..53), the event queues, the RDMA admin
 * queues and their commands (the control path), and the owner of the object tables ({@link Table}); the
 * doorbells of the SQ, RQ and CQ types go on to the data path ({@link DataPath}), which checks their pages and
 * posts every completion ({@link Completions}, the admin queue's too), so a doorbell's flow runs one way and
 * never comes back here; the admin commands themselves are in {@link AdminCommands}. Objects are indexed by the
 * driver's own ids; every table is sized from
 * what LIF_IDENTIFY advertises, and an id outside it, or one already in use, is refused with an
 * admin status, leaving nothing behind. Device thread only.
 */
public final class RdmaLif implements RdmaCommandHandler, DoorbellHandler {
    /**
     * Ring depth bounds (log2): the doorbell index is 16 bits, so at most 2^16 slots; at least 2, since a ring
     * of one slot holds nothing (ionic_rdma's ionic_queue_init sends order_base_2(depth + 1), never 0).
     */
    static final int MAX_DEPTH_LOG2 = 16;

    /** Whether a ring depth (log2) of an EQ, CQ, AQ or QP is within bounds: 1 to {@link #MAX_DEPTH_LOG2}. */
    static boolean validDepth(int depthLog2) {
        return depthLog2 >= 1 && depthLog2 <= MAX_DEPTH_LOG2;
    }
    /** Longest header template accepted (Ethernet + VLAN + IPv6 + UDP is 66 bytes). */
    static final int MAX_HEADER = 128;
    /** Largest STATS buffer the device writes (the driver gives one page). */
    static final int STATS_MAX = 4096;
    /**
     * How long a MODIFY_QP to RTR waits for the mesh to name the owner of its destination GID before it is refused:
     * half of ionic_rdma's admin timeout (2 s, after which it resets the RDMA LIF).
     */
    public static final long RTR_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    private final InterruptController intr;
    private final Dma dma;
    private final Refusals refusals;
    private final RdmaCounters counters = new RdmaCounters();
    /** The objects the guest created, by id: each table checks its ids (MR index 0 is none). */
    final Table<EventQueue> eventQueues;
    final Table<AdminQueue> adminQueues;
    final Table<CompletionQueue> completionQueues;
    final Table<QueuePair> queuePairs;
    final Table<MemoryRegion> memoryRegions;
    /** AHs by id; an id is taken ({@link #ahUsed}) even when its header template made no AH. */
    final Table<AddressHandle> addressHandles;
    final boolean[] ahUsed;

    private final DataPath data;
    private final AdminCommands admin;
    /** {@code --backend none}: the resource commands are stubs ({@link #stubResources}). */
    boolean stubbed;
    final Counters<StubCounter> stubs = new Counters<>(StubCounter.class);

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment cmd = arena.allocate(AdminWqe.CMD_MAX + 64, 8);
    private final MemorySegment slot = arena.allocate(AdminWqe.STRIDE, 8);
    private final MemorySegment cqeBuf = arena.allocate(V1.Cqe.SIZE, 8);
    private final V1.QueueCmd queueCmd = new V1.QueueCmd();
    private final AdminWqe.Header header = new AdminWqe.Header();
    private final V1.Cqe cqe = new V1.Cqe();

    public RdmaLif(Profile profile, InterruptController intr, Dma dma, Refusals refusals) {
        this(profile, intr, dma, refusals, FaultPlan.none());
    }

    public RdmaLif(Profile profile, InterruptController intr, Dma dma, Refusals refusals, FaultPlan faults) {
        this.intr = intr;
        this.dma = dma;
        this.refusals = refusals;
        eventQueues = new Table<>(profile.rdmaEqs());
        adminQueues = new Table<>(RdmaIdentity.AQ_COUNT);
        completionQueues = new Table<>(RdmaIdentity.CQ_COUNT);
        queuePairs = new Table<>(RdmaIdentity.QP_COUNT);
        memoryRegions = new Table<>(1, RdmaIdentity.NMRS_PER_LIF);
        addressHandles = new Table<>(RdmaIdentity.NAHS_PER_LIF);
        ahUsed = new boolean[addressHandles.count()];
        data = new DataPath(this, dma, intr, refusals, counters, faults);
        admin = new AdminCommands(this, dma, refusals, faults, counters, data);
    }

    /**
     * Joins the server's mesh: QPs and AHs whose destination GID another node owns go to that node's
     * guest. The node must run on this device's thread. Call before the guest creates QPs.
     */
    public void attachMesh(ernic.mesh.MeshNode node) {
        attach(PeerPort.of(node));
    }

    /** Joins a mesh through a port (a mesh node, or a loopback in tests). */
    public void attach(PeerPort port) {
        if (data.remote != null || stubbed) {
            throw new IllegalStateException(stubbed ? "stub resources and a mesh exclude each other" : "already in a mesh");
        }
        data.attach(port);
    }

    /**
     * Puts an in-process peer on this device, made by {@code make} from what the device offers it: QPs the
     * guest addresses to the peer's GID are served by it, its datagrams and hooks run on the device thread
     * (the RDMA tick, the doorbells, QP destruction, reset). Device thread; before the guest connects.
     */
    public <A extends ernic.attach.Attachment> A addAttachment(
            java.util.function.Function<ernic.attach.GuestQps, A> make) {
        return data.attachments.add(make);
    }

    /** The P4 engine's WQE hook counters ({@code p4.wqe.}): registered by whoever installs a {@link WqeFilter}. */
    private final Counters<P4WqeCounter> p4Counters = new Counters<>(P4WqeCounter.class);

    /**
     * Runs {@code filter} (a P4 program written for WQEs) on every send WQE after its memory checks (null: none);
     * see {@link WqeHeader} and docs/p4.md. Device thread.
     */
    public void wqeFilter(WqeFilter filter) {
        data.wqeFilter(filter, p4Counters);
    }

    public Counters<P4WqeCounter> p4WqeCounters() {
        return p4Counters;
    }

    /**
     * {@code --backend none}: the RDMA resource commands (CQ, QP, MR and AH lifecycle) succeed without
     * creating anything, each counted under {@code rdma.stub.}; the bootstrap commands (EQs, admin queues)
     * and the STATS commands run as usual, so the drivers come up and register their RDMA device. Call
     * before the guest starts; not with a mesh.
     */
    public void stubResources() {
        if (data.remote != null) {
            throw new IllegalStateException("stub resources and a mesh exclude each other");
        }
        stubbed = true;
    }

    /** Guest memory as an in-process target reaches it (by rkey, as a remote peer would). */
    public ernic.attach.HostMemory hostMemory() {
        return data.hostMemory();
    }

    /** The clock of every RDMA timer: the device loop's ticker (a mock one in tests). */
    public void clock(io.netty.util.concurrent.Ticker ticker) {
        data.clock(ticker);
    }

    /**
     * Runs a task on the device thread after a delay measured on the {@link #clock}; returns what cancels it (null
     * when it cannot be cancelled).
     */
    @FunctionalInterface
    public interface Timer {
        java.util.concurrent.Future<?> after(long delayNanos, Runnable task);
    }

    /**
     * Where the data path schedules its wake-ups at a given time (the end of an added latency,
     * {@code --inject rdma-latency}): the device loop. Null: none; the RDMA {@link #tick} still ends them,
     * within {@link #TICK_MILLIS} (tests move the clock and tick).
     */
    public void timer(Timer timer) {
        data.timer(timer);
    }

    /**
     * The RDMA tick, every {@link #TICK_MILLIS} on the device thread: receiver-not-ready waits, lost
     * peers and the responder's held messages.
     */
    public void tick(long nowNanos) {
        data.tick(nowNanos);
        for (AdminQueue aq : adminQueues) {
            if (aq != null && aq.waitSlot >= 0 && nowNanos - aq.waitSince >= RTR_WAIT_NANOS) {
                serviceAdminq(aq); // the wait is over: the command is refused now
            }
        }
        syncCounters();
    }

    /**
     * The guest sent a frame from {@code hi:lo} (its own source address, read before any rewrite): with a mesh,
     * the mesh may learn it as this node's GID. Device thread; allocates nothing.
     */
    public void sourceSeen(long hi, long lo) {
        data.sourceSeen(hi, lo);
    }

    /** GID ownership changed: MODIFY_QPs waiting for an owner run again. */
    void retryWaitingAdmin() {
        for (AdminQueue aq : adminQueues) {
            if (aq != null && aq.waitSlot >= 0) {
                serviceAdminq(aq);
            }
        }
    }

    /** How often {@link #tick} is to run. */
    public static final long TICK_MILLIS = DataPath.TICK_MILLIS;

    /** Leaves the mesh (server shutdown). */
    public void detachMesh() {
        data.detach();
    }

    /**
     * {@code --trace-rdma}: from now on each RDMA operation is written to {@code out} as RoCEv2 frames; null
     * stops. Device thread only.
     */
    public void traceRdma(ernic.ionic.trace.PcapTrace out) {
        data.trace(out);
    }

    Dma dma() {
        return dma;
    }

    /**
     * RoCEv2 on the Ethernet port ({@code --roce}, docs/roce.md): RC QPs whose destination is neither this guest, a
     * mesh node nor an in-process peer send and take RoCEv2 packets; they leave through {@code port}, and received
     * frames are offered to {@link #claimRoce}, which takes RoCEv2 to the port's MAC ({@code mac}) or to an address
     * of this guest. Its counters ({@code roce.}, {@code roce.rc.}) go to
     * {@code registry}. Device thread; once, before the guest starts.
     */
    public void roce(java.util.function.Consumer<MemorySegment> port, java.util.function.LongSupplier mac,
                     CounterRegistry registry) {
        if (data.wire != null) {
            throw new IllegalStateException("RoCE is on already");
        }
        data.roce(port, mac).registerCounters(registry);
    }

    /** A frame from the port: true when it was RoCEv2 for this device (taken), false to pass it on. */
    public boolean claimRoce(MemorySegment frame) {
        return data.wire != null && data.wire.claim(frame);
    }

    /**
     * Registers the RDMA counter sets: the control path ({@code rdma.}), the device hw_counters
     * ({@code rdma.hw.}), each live QP's counters (family {@code rdma.hw.qp.}, label {@code qp}), the
     * stubbed resource commands ({@code rdma.stub.}), then the data path's ({@code rdma.}, {@code rdma.remote.}).
     */
    public void registerCounters(CounterRegistry registry) {
        registry.register("rdma.", counters.control);
        registry.register("rdma.hw.", counters.device);
        registry.registerFamily("rdma.hw.qp.", "qp", this::qpSets);
        registry.register("rdma.stub.", stubs);
        data.registerCounters(registry);
    }

    private Map<String, Counters<RdmaCounters.Device>> qpSets() {
        Map<String, Counters<RdmaCounters.Device>> m = new TreeMap<>();
        for (QueuePair qp : queuePairs) {
            if (qp != null) {
                m.put(Integer.toString(qp.id), qp.counters);
            }
        }
        return m;
    }

    /**
     * Copies the refusal total into {@code rdma.hw.refusals} ({@link Refusals} keeps it, for Ethernet
     * too), and the wire end's counts into the RoCEv2 ones. Done before the guest reads the values, each tick,
     * and before a walk of the registry.
     */
    public void syncCounters() {
        counters.syncRefusals(refusals);
        if (data.wire != null) {
            counters.syncWire(data.wire.counters, data.wire.rc);
        }
    }

    /** The device counters (what STATS_VALS reports), by hw_counters name. */
    public Map<String, Long> hwCounters() {
        syncCounters();
        return counters.deviceSnapshot();
    }

    /** Each live QP's counters (what QP_STATS_VALS reports), by QP id. */
    public Map<Integer, Map<String, Long>> qpCounters() {
        Map<Integer, Map<String, Long>> m = new TreeMap<>();
        for (QueuePair qp : queuePairs) {
            if (qp != null) {
                m.put(qp.id, RdmaCounters.qpSnapshot(qp.counters));
            }
        }
        return m;
    }

    /**
     * Page-table entries the device may hold for the guest at once (MRs, fast registrations, rings of several
     * pages): 2^25, 256 MiB of server heap at 8 bytes each, two MRs of the largest page table. Without a total,
     * a guest could register 65,536 MRs of 2^24 entries each (describing one page over and over) and exhaust
     * the server's memory.
     */
    public static final long PAGE_BUDGET = 1L << 25;
    private long pagesHeld;

    /** Whether a page table of {@code entries} more fits the budget (refusal {@code rdma-page-budget} if not). */
    boolean pagesFit(int entries) {
        if (pagesHeld + entries <= PAGE_BUDGET) {
            return true;
        }
        refusals.refuse("rdma-page-budget", "a page table of " + entries + " entries beyond the device's "
                + PAGE_BUDGET + " (" + pagesHeld + " held)");
        return false;
    }

    void holdPages(PageTable t) {
        if (t != null) {
            pagesHeld += t.entries();
        }
    }

    void releasePages(PageTable t) {
        if (t != null) {
            pagesHeld -= t.entries();
        }
    }

    /** Page-table entries held now. */
    public long pagesHeld() {
        return pagesHeld;
    }

    /** Forgets every EQ, AQ, CQ, QP, MR and AH (RDMA_RESET_LIF, device reset). */
    public void reset() {
        pagesHeld = 0;
        eventQueues.clear();
        adminQueues.clear();
        completionQueues.clear();
        queuePairs.clear();
        memoryRegions.clear();
        addressHandles.clear();
        java.util.Arrays.fill(ahUsed, false);
        counters.clearObjects();
        data.reset();
    }

    // ---------------------------------------------------------------------------------------------
    // Bootstrap device commands (over the Ethernet adminq or BAR 0)

    @Override
    public int execute(int opcode, MemorySegment c, MemorySegment comp, MemorySegment devData) {
        queueCmd.wrap(c, 0);
        if (queueCmd.lifIndex() != 0) {
            refusals.refuse("rdma-lif-index", "RDMA command " + opcode + " for LIF " + queueCmd.lifIndex());
            return Status.ENOENT;
        }
        return switch (opcode) {
            case Opcode.RDMA_RESET_LIF -> {
                reset();
                yield Status.SUCCESS;
            }
            case Opcode.RDMA_CREATE_EQ -> createEq();
            case Opcode.RDMA_CREATE_CQ -> createAdminCq();
            case Opcode.RDMA_CREATE_ADMINQ -> createAdminq();
            default -> Status.EOPCODE;
        };
    }

    private int createEq() {
        int id = queueCmd.qid(), irq = queueCmd.cid();
        int depth = queueCmd.depthLog2(), stride = queueCmd.strideLog2();
        if (!eventQueues.inRange(id) || eventQueues.get(id) != null) {
            refusals.refuse("rdma-eq-id", "CREATE_EQ " + id
                    + (eventQueues.inRange(id) ? " already exists" : " out of range"));
            return Status.EQID;
        }
        if (!intr.valid(irq)) {
            refusals.refuse("rdma-eq-intr", "CREATE_EQ " + id + " with interrupt " + irq);
            return Status.EINVAL;
        }
        if (!validDepth(depth) || stride != 2) {
            refusals.refuse("rdma-eq-geometry", "CREATE_EQ depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        long size = 4L << depth;
        if (!dma.mapped(queueCmd.dmaAddr(), size)) {
            refusals.refuse("rdma-eq-addr", "CREATE_EQ ring outside guest memory");
            return Status.BAD_ADDR;
        }
        eventQueues.put(id, new EventQueue(id, irq, queueCmd.dmaAddr(), depth));
        return Status.SUCCESS;
    }

    private int createAdminCq() {
        int id = queueCmd.qid(), eq = queueCmd.cid();
        int depth = queueCmd.depthLog2(), stride = queueCmd.strideLog2();
        if (!completionQueues.inRange(id) || completionQueues.get(id) != null) {
            refusals.refuse("rdma-cq-id", "CREATE_CQ (devcmd) " + id);
            return Status.EQID;
        }
        if (eventQueues.get(eq) == null) {
            refusals.refuse("rdma-cq-eq", "CREATE_CQ (devcmd) on EQ " + eq);
            return Status.EINVAL;
        }
        if (!validDepth(depth) || stride < 5 || stride > 8) {
            refusals.refuse("rdma-cq-geometry", "CREATE_CQ (devcmd) depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        PageTable mem = PageTable.contiguous(queueCmd.dmaAddr(), 1L << (depth + stride));
        if (mem == null || !dma.mapped(queueCmd.dmaAddr(), mem.size())) {
            refusals.refuse("rdma-cq-addr", "CREATE_CQ (devcmd) ring outside guest memory");
            return Status.BAD_ADDR;
        }
        if (!Bar2.validPage(queueCmd.dbid())) {
            refusals.refuse("rdma-cq-dbid", "CREATE_CQ (devcmd) on doorbell page " + queueCmd.dbid());
            return Status.EINVAL;
        }
        CompletionQueue created = new CompletionQueue(id, eq, mem, depth, stride);
        created.dbid = queueCmd.dbid();
        completionQueues.put(id, created);
        counters.control.inc(RdmaCounters.Control.CQS);
        return Status.SUCCESS;
    }

    private int createAdminq() {
        int id = queueCmd.qid(), cq = queueCmd.cid();
        int depth = queueCmd.depthLog2(), stride = queueCmd.strideLog2();
        if (!adminQueues.inRange(id) || adminQueues.get(id) != null) {
            refusals.refuse("rdma-aq-id", "CREATE_ADMINQ " + id);
            return Status.EQID;
        }
        if (completionQueues.get(cq) == null) {
            refusals.refuse("rdma-aq-cq", "CREATE_ADMINQ on CQ " + cq);
            return Status.EINVAL;
        }
        if (!validDepth(depth) || stride != 6) {
            refusals.refuse("rdma-aq-geometry", "CREATE_ADMINQ depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        long size = 64L << depth;
        if (!dma.mapped(queueCmd.dmaAddr(), size)) {
            refusals.refuse("rdma-aq-addr", "CREATE_ADMINQ ring outside guest memory");
            return Status.BAD_ADDR;
        }
        if (!Bar2.validPage(queueCmd.dbid())) {
            refusals.refuse("rdma-aq-dbid", "CREATE_ADMINQ on doorbell page " + queueCmd.dbid());
            return Status.EINVAL;
        }
        AdminQueue aq = new AdminQueue(id, cq, queueCmd.dmaAddr(), depth);
        aq.dbid = queueCmd.dbid();
        adminQueues.put(id, aq);
        return Status.SUCCESS;
    }

    // ---------------------------------------------------------------------------------------------
    // Doorbells

    @Override
    public boolean doorbell(int page, int qtype, long value) {
        int qid = Ring.Doorbell.qid(value), index = Ring.Doorbell.pIndex(value), ring = Ring.Doorbell.ring(value) & 7;
        switch (qtype) {
            case RdmaIdentity.AQ_QTYPE -> {
                AdminQueue aq = adminQueues.get(qid);
                if (aq == null) {
                    refusals.refuse("rdma-db-aq", "doorbell for admin queue " + qid + " that does not exist");
                    return true;
                }
                if (!data.onOwnPage(page, aq.dbid, "AQ", qid)) {
                    return true;
                }
                aq.prod = index & aq.mask();
                serviceAdminq(aq);
            }
            case RdmaIdentity.CQ_QTYPE -> data.cqDoorbell(page, qid, ring, index);
            case RdmaIdentity.SQ_QTYPE -> data.sqDoorbell(page, qid, index);
            case RdmaIdentity.RQ_QTYPE -> data.rqDoorbell(page, qid, index);
            case RdmaIdentity.EQ_QTYPE -> refusals.refuse("rdma-db-eq", "doorbell on the EQ type (there is none)");
            default -> {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------
    // Admin queue

    private void serviceAdminq(AdminQueue aq) {
        while (aq.pending() > 0) {
            int first = aq.cons;
            if (!dma.read(aq.ring + (long) first * AdminWqe.STRIDE, slot, 0, AdminWqe.STRIDE)) {
                refusals.refuse("rdma-aq-read", "admin queue " + aq.id + " slot unreadable");
                return;
            }
            header.wrap(slot, 0);
            int op = header.op(), len = header.len(), slots = header.slots();
            int status;
            cmd.fill((byte) 0);
            if (len > AdminWqe.CMD_MAX) {
                refusals.refuse("rdma-admin-len", "admin command " + op + " of " + len + " bytes");
                status = V1.ASTS_MSG_TOO_BIG;
                slots = 1;
            } else {
                if (slots > aq.pending()) {
                    return; // the rest of the command is not posted yet
                }
                MemorySegment.copy(slot, AdminWqe.Header.CMD, cmd, 0, AdminWqe.STRIDE - AdminWqe.Header.CMD);
                long at = AdminWqe.STRIDE - AdminWqe.Header.CMD;
                boolean ok = true;
                for (int s = 1; s < slots && ok; s++) {
                    int idx = (first + s) & aq.mask();
                    ok = dma.read(aq.ring + (long) idx * AdminWqe.STRIDE, cmd, at, AdminWqe.STRIDE);
                    at += AdminWqe.STRIDE;
                }
                // Bytes after the command in its last slot are stale: zero them.
                cmd.asSlice(len, cmd.byteSize() - len).fill((byte) 0);
                boolean mayWait = aq.waitSlot != first || data.now() - aq.waitSince < RTR_WAIT_NANOS;
                status = ok ? admin.run(op, cmd, mayWait) : V1.ASTS_BAD_CMD;
                if (status == AdminCommands.WAIT_FOR_OWNER) {
                    // The queue stops here, as hardware works its admin queue in order, and goes on when the
                    // mesh names the owner or the wait is over.
                    if (aq.waitSlot != first) {
                        aq.waitSlot = first;
                        aq.waitSince = data.now();
                        data.remoteWaited();
                    }
                    return;
                }
            }
            aq.waitSlot = -1;
            aq.cons = (first + slots) & aq.mask();
            aq.executed++;
            counters.adminCommand(status != V1.ASTS_OK);
            CompletionQueue cq = completionQueues.get(aq.cqId);
            if (cq == null) {
                refusals.refuse("rdma-aq-no-cq", "admin queue " + aq.id + " lost its CQ " + aq.cqId);
                continue;
            }
            cqe.wrap(cqeBuf, 0).clear().cmdIdx(first).cmdOp(op)
                    .statusLength(status).qidType(aq.id, V1.Cqe.TYPE_ADMIN, status != V1.ASTS_OK);
            data.completions.post(cq, cqeBuf, false);
        }
    }
}
