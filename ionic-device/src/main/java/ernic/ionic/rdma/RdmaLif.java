package ernic.ionic.rdma;

import ernic.ionic.layout.Be;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.base.DoorbellHandler;
import ernic.ionic.base.RdmaCommandHandler;
import ernic.ionic.base.Dma;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Le;
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
 * queues and their commands (the control path), and the doorbells of the RDMA queue types (the data
 * path, in {@link DataPath}). Objects are indexed by the driver's own ids; every table is sized from
 * what LIF_IDENTIFY advertises, and an id outside it, or one already in use, is refused with an
 * admin status, leaving nothing behind. Device thread only.
 */
public final class RdmaLif implements RdmaCommandHandler, DoorbellHandler {
    /** Ring depth bounds (log2): the doorbell index is 16 bits. */
    static final int MAX_DEPTH_LOG2 = 16;
    /** Longest header template accepted (Ethernet + VLAN + IPv6 + UDP is 66 bytes). */
    static final int MAX_HEADER = 128;
    /** Largest STATS buffer the device writes (the driver gives one page). */
    static final int STATS_MAX = 4096;

    private final InterruptController intr;
    private final Dma dma;
    private final Refusals refusals;
    private final FaultPlan faults;
    private final RdmaCounters counters = new RdmaCounters();
    final int eqCount, aqCount, cqCount, qpCount, mrCount, ahCount;

    final EventQueue[] eqs;
    final AdminQueue[] aqs;
    final CompletionQueue[] cqs;
    final QueuePair[] qps;
    final MemoryRegion[] mrs;
    final AddressHandle[] ahs;
    final boolean[] ahUsed;
    private int mrsInUse, ahsInUse, qpsInUse, cqsInUse;

    private final DataPath data;

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment cmd = arena.allocate(V1.ADMIN_CMD_MAX + 64, 8);
    private final MemorySegment slot = arena.allocate(V1.ADMIN_WQE_STRIDE, 8);
    private final MemorySegment cqeBuf = arena.allocate(V1.Cqe.SIZE, 8);
    private final MemorySegment side = arena.allocate(MAX_HEADER, 8);
    /** Headers or values of the STATS commands, before the DMA. */
    private final MemorySegment statsBuf = arena.allocate(STATS_MAX, 8);
    private final V1.QueueCmd queueCmd = new V1.QueueCmd();
    private final V1.Cqe cqe = new V1.Cqe();

    private long adminCommands, adminErrors, events;
    /** QP generations handed out (never reset: a reply to an old QP must never match a new one). */
    private int generations;

    public RdmaLif(Profile profile, InterruptController intr, Dma dma, Refusals refusals) {
        this(profile, intr, dma, refusals, FaultPlan.none());
    }

    public RdmaLif(Profile profile, InterruptController intr, Dma dma, Refusals refusals, FaultPlan faults) {
        this.intr = intr;
        this.dma = dma;
        this.refusals = refusals;
        this.faults = faults;
        this.eqCount = profile.rdmaEqs();
        this.aqCount = RdmaIdentity.AQ_COUNT;
        this.cqCount = RdmaIdentity.CQ_COUNT;
        this.qpCount = RdmaIdentity.QP_COUNT;
        this.mrCount = RdmaIdentity.NMRS_PER_LIF;
        this.ahCount = RdmaIdentity.NAHS_PER_LIF;
        eqs = new EventQueue[eqCount];
        aqs = new AdminQueue[aqCount];
        cqs = new CompletionQueue[cqCount];
        qps = new QueuePair[qpCount];
        mrs = new MemoryRegion[mrCount];
        ahs = new AddressHandle[ahCount];
        ahUsed = new boolean[ahCount];
        data = new DataPath(this, dma, refusals, counters);
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
        if (data.remote != null) {
            throw new IllegalStateException("already in a mesh");
        }
        data.attach(port);
    }

    /** Guest memory as an in-process target reaches it (by rkey, as a remote peer would). */
    public ernic.ionic.target.HostMemory hostMemory() {
        return data.hostMemory();
    }

    /** The clock of every RDMA timer: the device loop's ticker (a mock one in tests). */
    public void clock(io.netty.util.concurrent.Ticker ticker) {
        data.clock(ticker);
    }

    /**
     * The RDMA tick, every {@link #TICK_MILLIS} on the device thread: receiver-not-ready waits, lost
     * peers and the responder's held messages.
     */
    public void tick(long nowNanos) {
        data.tick(nowNanos);
    }

    /** How often {@link #tick} is to run. */
    public static final long TICK_MILLIS = DataPath.TICK_MILLIS;

    /** Leaves the mesh (server shutdown). */
    public void detachMesh() {
        data.detach();
    }

    Dma dma() {
        return dma;
    }

    /** Device power-on: RESET_LIF's work, and every counter back to zero. */
    public void powerOn() {
        reset();
        counters.reset();
        data.clearCounters();
        adminCommands = adminErrors = events = 0;
    }

    /** The device counters (what STATS_VALS reports), by hw_counters name. */
    public Map<String, Long> hwCounters() {
        syncCounters();
        return counters.deviceSnapshot();
    }

    /** Each live QP's counters (what QP_STATS_VALS reports), by QP id. */
    public Map<Integer, Map<String, Long>> qpCounters() {
        Map<Integer, Map<String, Long>> m = new TreeMap<>();
        for (QueuePair qp : qps) {
            if (qp != null) {
                m.put(qp.id, RdmaCounters.qpSnapshot(qp.counters));
            }
        }
        return m;
    }

    /** Counters kept elsewhere, copied in before a snapshot. */
    private void syncCounters() {
        counters.set(RdmaCounters.Device.ADMIN_COMMANDS, adminCommands);
        counters.set(RdmaCounters.Device.ADMIN_ERRORS, adminErrors);
        counters.set(RdmaCounters.Device.CQ_EVENTS, events);
        counters.set(RdmaCounters.Device.REFUSALS, refusals.total());
    }

    /** Forgets every EQ, AQ, CQ, QP, MR and AH (RDMA_RESET_LIF, device reset). */
    public void reset() {
        java.util.Arrays.fill(eqs, null);
        java.util.Arrays.fill(aqs, null);
        java.util.Arrays.fill(cqs, null);
        java.util.Arrays.fill(qps, null);
        java.util.Arrays.fill(mrs, null);
        java.util.Arrays.fill(ahs, null);
        java.util.Arrays.fill(ahUsed, false);
        mrsInUse = ahsInUse = qpsInUse = cqsInUse = 0;
        data.reset();
    }

    public Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>();
        m.put("rdma.admin.commands", adminCommands);
        m.put("rdma.admin.errors", adminErrors);
        m.put("rdma.events", events);
        m.put("rdma.qps", (long) qpsInUse);
        m.put("rdma.cqs", (long) cqsInUse);
        m.put("rdma.mrs", (long) mrsInUse);
        m.put("rdma.ahs", (long) ahsInUse);
        data.counters(m);
        hwCounters().forEach((k, v) -> m.put("rdma.hw." + k, v));
        return m;
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
        if (id < 0 || id >= eqCount || eqs[id] != null) {
            refusals.refuse("rdma-eq-id", "CREATE_EQ " + id + (id >= 0 && id < eqCount ? " already exists" : " out of range"));
            return Status.EQID;
        }
        if (!intr.valid(irq)) {
            refusals.refuse("rdma-eq-intr", "CREATE_EQ " + id + " with interrupt " + irq);
            return Status.EINVAL;
        }
        if (depth < 1 || depth > MAX_DEPTH_LOG2 || stride != 2) {
            refusals.refuse("rdma-eq-geometry", "CREATE_EQ depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        long size = 4L << depth;
        if (!dma.mapped(queueCmd.dmaAddr(), size)) {
            refusals.refuse("rdma-eq-addr", "CREATE_EQ ring outside guest memory");
            return Status.BAD_ADDR;
        }
        eqs[id] = new EventQueue(id, irq, queueCmd.dmaAddr(), depth);
        return Status.SUCCESS;
    }

    private int createAdminCq() {
        int id = queueCmd.qid(), eq = queueCmd.cid();
        int depth = queueCmd.depthLog2(), stride = queueCmd.strideLog2();
        if (id < 0 || id >= cqCount || cqs[id] != null) {
            refusals.refuse("rdma-cq-id", "CREATE_CQ (devcmd) " + id);
            return Status.EQID;
        }
        if (eq < 0 || eq >= eqCount || eqs[eq] == null) {
            refusals.refuse("rdma-cq-eq", "CREATE_CQ (devcmd) on EQ " + eq);
            return Status.EINVAL;
        }
        if (depth < 1 || depth > MAX_DEPTH_LOG2 || stride < 5 || stride > 8) {
            refusals.refuse("rdma-cq-geometry", "CREATE_CQ (devcmd) depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        PageTable mem = PageTable.contiguous(queueCmd.dmaAddr(), 1L << (depth + stride));
        if (mem == null || !dma.mapped(queueCmd.dmaAddr(), mem.size())) {
            refusals.refuse("rdma-cq-addr", "CREATE_CQ (devcmd) ring outside guest memory");
            return Status.BAD_ADDR;
        }
        cqs[id] = new CompletionQueue(id, eq, mem, depth, stride);
        cqsInUse++;
        return Status.SUCCESS;
    }

    private int createAdminq() {
        int id = queueCmd.qid(), cq = queueCmd.cid();
        int depth = queueCmd.depthLog2(), stride = queueCmd.strideLog2();
        if (id < 0 || id >= aqCount || aqs[id] != null) {
            refusals.refuse("rdma-aq-id", "CREATE_ADMINQ " + id);
            return Status.EQID;
        }
        if (cq < 0 || cq >= cqCount || cqs[cq] == null) {
            refusals.refuse("rdma-aq-cq", "CREATE_ADMINQ on CQ " + cq);
            return Status.EINVAL;
        }
        if (depth < 1 || depth > MAX_DEPTH_LOG2 || stride != 6) {
            refusals.refuse("rdma-aq-geometry", "CREATE_ADMINQ depth_log2 " + depth + " stride_log2 " + stride);
            return Status.EINVAL;
        }
        long size = 64L << depth;
        if (!dma.mapped(queueCmd.dmaAddr(), size)) {
            refusals.refuse("rdma-aq-addr", "CREATE_ADMINQ ring outside guest memory");
            return Status.BAD_ADDR;
        }
        aqs[id] = new AdminQueue(id, cq, queueCmd.dmaAddr(), depth);
        return Status.SUCCESS;
    }

    // ---------------------------------------------------------------------------------------------
    // Doorbells

    @Override
    public boolean doorbell(int page, int qtype, long value) {
        int qid = Ring.Doorbell.qid(value), index = Ring.Doorbell.pIndex(value), ring = Ring.Doorbell.ring(value) & 7;
        switch (qtype) {
            case RdmaIdentity.AQ_QTYPE -> {
                AdminQueue aq = qid < aqCount ? aqs[qid] : null;
                if (aq == null) {
                    refusals.refuse("rdma-db-aq", "doorbell for admin queue " + qid + " that does not exist");
                    return true;
                }
                aq.prod = index & aq.mask();
                serviceAdminq(aq);
            }
            case RdmaIdentity.CQ_QTYPE -> {
                CompletionQueue cq = qid < cqCount ? cqs[qid] : null;
                if (cq == null) {
                    refusals.refuse("rdma-db-cq", "doorbell for CQ " + qid + " that does not exist");
                    return true;
                }
                if (cq.doorbell(ring, index)) {
                    notify(cq);
                }
            }
            case RdmaIdentity.SQ_QTYPE -> data.sqDoorbell(qid, index);
            case RdmaIdentity.RQ_QTYPE -> data.rqDoorbell(qid, index);
            case RdmaIdentity.EQ_QTYPE -> refusals.refuse("rdma-db-eq", "doorbell on the EQ type (there is none)");
            default -> {
                return false;
            }
        }
        return true;
    }

    /** EQE {CQ, NOTIFY, cqid} in the CQ's EQ and the EQ's interrupt. */
    void notify(CompletionQueue cq) {
        EventQueue eq = cq.eqId < eqCount ? eqs[cq.eqId] : null;
        if (eq == null) {
            refusals.refuse("rdma-event-no-eq", "CQ " + cq.id + " has no EQ " + cq.eqId);
            return;
        }
        events++;
        eq.post(dma, intr, V1.Eqe.TYPE_CQ, V1.Eqe.CQ_NOTIFY, cq.id);
    }

    /** Writes a CQE and raises the event if the CQ was armed. */
    void complete(CompletionQueue cq, MemorySegment entry, boolean solicited) {
        if (cq.write(dma, entry, solicited)) {
            notify(cq);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Admin queue

    private void serviceAdminq(AdminQueue aq) {
        while (aq.pending() > 0) {
            int first = aq.cons;
            if (!dma.read(aq.ring + (long) first * V1.ADMIN_WQE_STRIDE, slot, 0, V1.ADMIN_WQE_STRIDE)) {
                refusals.refuse("rdma-aq-read", "admin queue " + aq.id + " slot unreadable");
                return;
            }
            int op = Le.u8(slot, V1.AWQE_OP), len = Le.u16(slot, V1.AWQE_LEN);
            int slots = (len + V1.ADMIN_WQE_HDR_LEN + V1.ADMIN_WQE_STRIDE - 1) / V1.ADMIN_WQE_STRIDE;
            int status;
            cmd.fill((byte) 0);
            if (len > V1.ADMIN_CMD_MAX) {
                refusals.refuse("rdma-admin-len", "admin command " + op + " of " + len + " bytes");
                status = V1.ASTS_MSG_TOO_BIG;
                slots = 1;
            } else {
                if (slots > aq.pending()) {
                    return; // the rest of the command is not posted yet
                }
                MemorySegment.copy(slot, V1.AWQE_CMD, cmd, 0, V1.ADMIN_WQE_STRIDE - V1.AWQE_CMD);
                long at = V1.ADMIN_WQE_STRIDE - V1.AWQE_CMD;
                boolean ok = true;
                for (int s = 1; s < slots && ok; s++) {
                    int idx = (first + s) & aq.mask();
                    ok = dma.read(aq.ring + (long) idx * V1.ADMIN_WQE_STRIDE, cmd, at, V1.ADMIN_WQE_STRIDE);
                    at += V1.ADMIN_WQE_STRIDE;
                }
                // Bytes after the command in its last slot are stale: zero them.
                cmd.asSlice(len, cmd.byteSize() - len).fill((byte) 0);
                status = ok ? runAdmin(op, cmd) : V1.ASTS_BAD_CMD;
            }
            aq.cons = (first + slots) & aq.mask();
            aq.executed++;
            adminCommands++;
            if (status != V1.ASTS_OK) {
                adminErrors++;
            }
            CompletionQueue cq = aq.cqId < cqCount ? cqs[aq.cqId] : null;
            if (cq == null) {
                refusals.refuse("rdma-aq-no-cq", "admin queue " + aq.id + " lost its CQ " + aq.cqId);
                continue;
            }
            cqe.wrap(cqeBuf, 0).clear().cmdIdx(first).cmdOp(op)
                    .statusLength(status).qidType(aq.id, V1.Cqe.TYPE_ADMIN, status != V1.ASTS_OK);
            complete(cq, cqeBuf, false);
        }
    }

    /** Runs one admin command whose bytes (after the 4-byte header) are in {@code c}; returns the admin status. */
    int runAdmin(int op, MemorySegment c) {
        try {
            return switch (op) {
                case V1.ADMIN_NOOP, V1.ADMIN_DEBUG, V1.ADMIN_QUERY_AH, V1.ADMIN_MODIFY_DCQCN -> V1.ASTS_OK;
                case V1.ADMIN_CREATE_CQ -> createCq(c);
                case V1.ADMIN_DESTROY_CQ -> destroyCq(Le.u32(c, V1.DESTROY_ID));
                case V1.ADMIN_CREATE_QP -> createQp(c);
                case V1.ADMIN_MODIFY_QP -> modifyQp(c);
                case V1.ADMIN_QUERY_QP -> queryQp(c);
                case V1.ADMIN_DESTROY_QP -> destroyQp(Le.u32(c, V1.DESTROY_ID));
                case V1.ADMIN_CREATE_MR -> createMr(c);
                case V1.ADMIN_DESTROY_MR -> destroyMr(Le.u32(c, V1.DESTROY_ID));
                case V1.ADMIN_CREATE_AH -> createAh(c);
                case V1.ADMIN_DESTROY_AH -> destroyAh(Le.u32(c, V1.DESTROY_ID));
                case V1.ADMIN_STATS_HDRS, V1.ADMIN_STATS_VALS, V1.ADMIN_QP_STATS_HDRS, V1.ADMIN_QP_STATS_VALS ->
                        stats(op, c);
                default -> {
                    refusals.refuse("rdma-admin-opcode", "admin opcode " + op + " not served");
                    yield V1.ASTS_BAD_CMD;
                }
            };
        } catch (RuntimeException e) {
            refusals.refuse("rdma-admin-internal", "admin opcode " + op + " failed: " + e);
            return V1.ASTS_BAD_CMD;
        }
    }

    /**
     * STATS_HDRS / STATS_VALS (device) and QP_STATS_HDRS / QP_STATS_VALS (the QP in id_ver): the
     * header list or the values, DMA'd into the driver's buffer. The list must fit {@code length}
     * (values are cut to it); nothing is written outside it.
     */
    private int stats(int op, MemorySegment c) {
        long addr = Le.u64(c, V1.STATS_DMA_ADDR);
        long length = Integer.toUnsignedLong(Le.u32(c, V1.STATS_LENGTH));
        int id = Le.u32(c, V1.STATS_ID_VER) & 0xff_ffff;
        boolean perQp = op == V1.ADMIN_QP_STATS_HDRS || op == V1.ADMIN_QP_STATS_VALS;
        boolean headers = op == V1.ADMIN_STATS_HDRS || op == V1.ADMIN_QP_STATS_HDRS;
        if (op == V1.ADMIN_STATS_VALS && faults.fire(FaultKind.STATS_VALS)) {
            return V1.ASTS_BAD_STATE;
        }
        QueuePair qp = null;
        if (op == V1.ADMIN_QP_STATS_VALS) {
            qp = id < qpCount ? qps[id] : null;
            if (qp == null) {
                refusals.refuse("rdma-stats-qp", "QP_STATS_VALS for QP " + id + " that does not exist");
                return V1.ASTS_BAD_INDEX;
            }
        }
        int size = headers ? RdmaCounters.headersSize(perQp) : RdmaCounters.valuesSize(perQp);
        if (headers && length < size || length == 0) {
            refusals.refuse("rdma-stats-length", "stats opcode " + op + " buffer of " + length + " bytes, "
                    + size + " needed");
            return V1.ASTS_BAD_ATTR;
        }
        int n = (int) Math.min(size, length);
        if (headers) {
            RdmaCounters.writeHeaders(statsBuf, perQp);
        } else if (perQp) {
            RdmaCounters.writeQpValues(statsBuf, qp.counters);
        } else {
            syncCounters();
            counters.writeDeviceValues(statsBuf);
        }
        if (!dma.write(addr, statsBuf, 0, n)) {
            refusals.refuse("rdma-stats-addr", "stats opcode " + op + " buffer outside guest memory");
            return V1.ASTS_BAD_ATTR;
        }
        return V1.ASTS_OK;
    }

    /** The memory of a ring: direct (map_count 1) or a page table (map_count > 1); null when refused. */
    private PageTable ringMemory(long addr, int mapCount, int pageShift, long size) {
        if (mapCount == 1) {
            PageTable t = PageTable.contiguous(addr, size);
            return t != null && dma.mapped(addr, size) ? t : null;
        }
        return PageTable.read(dma, addr, mapCount, pageShift, 0, size);
    }

    private int createCq(MemorySegment c) {
        int id = Le.u32(c, V1.CCQ_ID_VER) & 0xff_ffff, eq = Le.u32(c, V1.CCQ_EQ_ID);
        int depth = Le.u8(c, V1.CCQ_DEPTH_LOG2), stride = Le.u8(c, V1.CCQ_STRIDE_LOG2);
        if (id >= cqCount || cqs[id] != null) {
            refusals.refuse("rdma-cq-id", "CREATE_CQ " + id + (id < cqCount ? " already exists" : " out of range"));
            return id >= cqCount ? V1.ASTS_BAD_INDEX : V1.ASTS_BAD_STATE;
        }
        if (eq < 0 || eq >= eqCount || eqs[eq] == null) {
            refusals.refuse("rdma-cq-eq", "CREATE_CQ " + id + " on EQ " + eq);
            return V1.ASTS_BAD_INDEX;
        }
        if (depth > MAX_DEPTH_LOG2 || stride < 5 || stride > 8) {
            refusals.refuse("rdma-cq-geometry", "CREATE_CQ depth_log2 " + depth + " stride_log2 " + stride);
            return V1.ASTS_BAD_ATTR;
        }
        PageTable mem = ringMemory(Le.u64(c, V1.CCQ_DMA_ADDR), Le.u32(c, V1.CCQ_MAP_COUNT),
                Le.u8(c, V1.CCQ_PAGE_SIZE_LOG2), 1L << (depth + stride));
        if (mem == null) {
            refusals.refuse("rdma-cq-addr", "CREATE_CQ " + id + " ring memory refused");
            return V1.ASTS_BAD_ATTR;
        }
        cqs[id] = new CompletionQueue(id, eq, mem, depth, stride);
        cqsInUse++;
        return V1.ASTS_OK;
    }

    private int destroyCq(int id) {
        if (id < 0 || id >= cqCount || cqs[id] == null) {
            refusals.refuse("rdma-cq-destroy", "DESTROY_CQ " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        cqs[id] = null;
        cqsInUse--;
        return V1.ASTS_OK;
    }

    private WorkQueue workQueue(MemorySegment c, int depthAt, int strideAt, int pageAt, int mapAt, int addrAt,
                                boolean spec) {
        int depth = Le.u8(c, depthAt), stride = Le.u8(c, strideAt), count = Le.u32(c, mapAt);
        if (count == 0) {
            return null;
        }
        if (depth > MAX_DEPTH_LOG2 || stride < 6 || stride > RdmaIdentity.MAX_STRIDE) {
            return null;
        }
        PageTable mem = ringMemory(Le.u64(c, addrAt), count, Le.u8(c, pageAt), 1L << (depth + stride));
        return mem == null ? null : new WorkQueue(mem, depth, stride, spec);
    }

    private int createQp(MemorySegment c) {
        int id = Le.u32(c, V1.CQP_ID_VER) & 0xff_ffff;
        int type = Le.u8(c, V1.CQP_TYPE_STATE) & 0xf;
        int flags = Be.u32(c, V1.CQP_PRIV_FLAGS);
        int sqCq = Le.u32(c, V1.CQP_SQ_CQ_ID), rqCq = Le.u32(c, V1.CQP_RQ_CQ_ID);
        if (id >= qpCount || qps[id] != null) {
            refusals.refuse("rdma-qp-id", "CREATE_QP " + id + (id < qpCount ? " already exists" : " out of range"));
            return id >= qpCount ? V1.ASTS_BAD_INDEX : V1.ASTS_BAD_STATE;
        }
        if (type != V1.QPT_RC && type != V1.QPT_UC && type != V1.QPT_UD) {
            refusals.refuse("rdma-qp-type", "CREATE_QP " + id + " of type " + type);
            return V1.ASTS_BAD_TYPE;
        }
        if (sqCq < 0 || sqCq >= cqCount || cqs[sqCq] == null || rqCq < 0 || rqCq >= cqCount || cqs[rqCq] == null) {
            refusals.refuse("rdma-qp-cq", "CREATE_QP " + id + " on CQs " + sqCq + "/" + rqCq);
            return V1.ASTS_BAD_INDEX;
        }
        boolean hasSq = Le.u32(c, V1.CQP_SQ_MAP_COUNT) != 0, hasRq = Le.u32(c, V1.CQP_RQ_MAP_COUNT) != 0;
        WorkQueue sq = workQueue(c, V1.CQP_SQ_DEPTH_LOG2, V1.CQP_SQ_STRIDE_LOG2, V1.CQP_SQ_PAGE_SIZE_LOG2,
                V1.CQP_SQ_MAP_COUNT, V1.CQP_SQ_DMA_ADDR, (flags & V1.QPF_SQ_SPEC) != 0);
        WorkQueue rq = workQueue(c, V1.CQP_RQ_DEPTH_LOG2, V1.CQP_RQ_STRIDE_LOG2, V1.CQP_RQ_PAGE_SIZE_LOG2,
                V1.CQP_RQ_MAP_COUNT, V1.CQP_RQ_DMA_ADDR, (flags & V1.QPF_RQ_SPEC) != 0);
        if (hasSq && sq == null || hasRq && rq == null) {
            refusals.refuse("rdma-qp-ring", "CREATE_QP " + id + " ring geometry or memory refused");
            return V1.ASTS_BAD_ATTR;
        }
        QueuePair qp = new QueuePair(id, type, flags, sqCq, rqCq, sq, rq);
        qp.generation = ++generations;
        qps[id] = qp;
        qpsInUse++;
        return V1.ASTS_OK;
    }

    private static boolean transition(int from, int to) {
        if (to == V1.QPS_RESET || to == V1.QPS_ERR) {
            return true;
        }
        return switch (from) {
            case V1.QPS_RESET -> to == V1.QPS_INIT;
            case V1.QPS_INIT -> to == V1.QPS_INIT || to == V1.QPS_RTR;
            case V1.QPS_RTR -> to == V1.QPS_RTS;
            case V1.QPS_RTS -> to == V1.QPS_RTS || to == V1.QPS_SQD;
            case V1.QPS_SQD -> to == V1.QPS_SQD || to == V1.QPS_RTS;
            case V1.QPS_SQE -> to == V1.QPS_RTS;
            default -> false;
        };
    }

    private int modifyQp(MemorySegment c) {
        int id = Le.u32(c, V1.MQP_ID_VER) & 0xff_ffff;
        QueuePair qp = id < qpCount ? qps[id] : null;
        if (qp == null) {
            refusals.refuse("rdma-qp-modify", "MODIFY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        int mask = Be.u32(c, V1.MQP_ATTR_MASK);
        int typeState = Le.u8(c, V1.MQP_TYPE_STATE);
        int to = qp.state;
        if ((mask & V1.IB_QP_STATE) != 0) {
            to = typeState & 0xf;
            int from = typeState >>> 4;
            if (to > V1.QPS_ERR) {
                return V1.ASTS_BAD_ATTR;
            }
            if ((mask & V1.IB_QP_CUR_STATE) != 0 && from != qp.state) {
                refusals.refuse("rdma-qp-cur-state", "MODIFY_QP " + id + " from " + from + " but the QP is in " + qp.state);
                return V1.ASTS_BAD_STATE;
            }
            if (!transition(qp.state, to)) {
                refusals.refuse("rdma-qp-transition", "MODIFY_QP " + id + " " + qp.state + " -> " + to);
                return V1.ASTS_BAD_STATE;
            }
        }
        byte[] header = null;
        AddressHandle av = null;
        if ((mask & V1.IB_QP_AV) != 0) {
            int hdrLen = Le.u32(c, V1.MQP_AH_ID_LEN) >>> 24;
            long addr = Le.u64(c, V1.MQP_DMA_ADDR);
            if (hdrLen > MAX_HEADER || hdrLen > 0 && !dma.read(addr, side, 0, hdrLen)) {
                refusals.refuse("rdma-qp-header", "MODIFY_QP " + id + " header template unreadable");
                return V1.ASTS_BAD_ATTR;
            }
            header = side.asSlice(0, hdrLen).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            av = AddressHandle.parse(header);
        }
        int node = -1;
        if ((mask & V1.IB_QP_AV) != 0 && data.remote != null && qp.connected()) {
            node = data.remote.route(av);
            if (node == RemotePath.UNOWNED) {
                // Picking some node instead would deliver writes into the wrong VM's memory.
                refusals.refuse("rdma-qp-unowned-gid", "MODIFY_QP " + id + ": no mesh node owns the destination GID");
                return V1.ASTS_BAD_ATTR;
            }
        }
        // Everything checked: record.
        if ((mask & V1.IB_QP_AV) != 0) {
            if (data.remote != null && qp.connected()) {
                data.remote.place(qp, node);
            }
            qp.header = header;
            qp.av = av;
            qp.ahId = Le.u32(c, V1.MQP_AH_ID_LEN) & 0xff_ffff;
        }
        if ((mask & V1.IB_QP_ACCESS_FLAGS) != 0) {
            qp.accessFlags = Be.u16(c, V1.MQP_ACCESS_FLAGS);
        }
        if ((mask & V1.IB_QP_PKEY_INDEX) != 0) {
            qp.pkeyId = Le.u16(c, V1.MQP_PKEY_ID);
        }
        if ((mask & V1.IB_QP_QKEY) != 0) {
            qp.qkey = Le.u32(c, V1.MQP_QKEY_DEST_QPN);
        }
        if ((mask & V1.IB_QP_DEST_QPN) != 0) {
            qp.destQpn = Le.u32(c, V1.MQP_QKEY_DEST_QPN) & 0xff_ffff;
        }
        if ((mask & V1.IB_QP_PATH_MTU) != 0) {
            qp.pmtu = Le.u8(c, V1.MQP_PMTU);
        }
        if ((mask & (V1.IB_QP_RETRY_CNT | V1.IB_QP_RNR_RETRY)) != 0) {
            qp.retry = Le.u8(c, V1.MQP_RETRY);
        }
        if ((mask & V1.IB_QP_MIN_RNR_TIMER) != 0) {
            qp.rnrTimer = Le.u8(c, V1.MQP_RNR_TIMER);
        }
        if ((mask & V1.IB_QP_TIMEOUT) != 0) {
            qp.retryTimeout = Le.u8(c, V1.MQP_RETRY_TIMEOUT);
        }
        if ((mask & V1.IB_QP_MAX_QP_RD_ATOMIC) != 0) {
            qp.rrqDepth = Le.u8(c, V1.MQP_RRQ_DEPTH);
        }
        if ((mask & V1.IB_QP_MAX_DEST_RD_ATOMIC) != 0) {
            qp.rsqDepth = Le.u8(c, V1.MQP_RSQ_DEPTH);
        }
        if ((mask & V1.IB_QP_RQ_PSN) != 0) {
            qp.rqPsn = Le.u32(c, V1.MQP_RQ_PSN);
        }
        if ((mask & V1.IB_QP_SQ_PSN) != 0) {
            qp.sqPsn = Le.u32(c, V1.MQP_SQ_PSN);
        }
        if ((mask & V1.IB_QP_STATE) != 0) {
            if (to == V1.QPS_RESET) {
                qp.reset();
                data.forget(qp);
            }
            int from = qp.state;
            qp.state = to;
            if (to == V1.QPS_ERR && from != V1.QPS_ERR) {
                data.flush(qp);
            }
        }
        return V1.ASTS_OK;
    }

    private int queryQp(MemorySegment c) {
        int id = Le.u32(c, V1.QQP_ID_VER) & 0xff_ffff;
        QueuePair qp = id < qpCount ? qps[id] : null;
        if (qp == null) {
            refusals.refuse("rdma-qp-query", "QUERY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        long sqAddr = Le.u64(c, V1.QQP_SQ_DMA_ADDR), rqAddr = Le.u64(c, V1.QQP_RQ_DMA_ADDR);
        long hdrAddr = Le.u64(c, V1.QQP_HDR_DMA_ADDR);
        boolean ok = true;
        if (sqAddr != 0) {
            side.fill((byte) 0);
            Le.put8(side, V1.QSQ_RNR_TIMER, qp.rnrTimer);
            Le.put8(side, V1.QSQ_RETRY_TIMEOUT, qp.retryTimeout);
            Be.put16(side, V1.QSQ_ACCESS_PERMS, qp.accessFlags);
            Be.put16(side, V1.QSQ_PKEY_ID, qp.pkeyId);
            Be.put32(side, V1.QSQ_QKEY_DEST_QPN, qp.datagram() ? qp.qkey : qp.destQpn);
            Be.put32(side, V1.QSQ_RATE_LIMIT, qp.rateLimit);
            Be.put32(side, V1.QSQ_RQ_PSN, qp.rqPsn);
            ok = dma.write(sqAddr, side, 0, V1.QSQ_SIZE);
        }
        if (rqAddr != 0 && ok) {
            side.fill((byte) 0);
            Le.put8(side, V1.QRQ_STATE_PMTU, qp.state << 4 | (qp.pmtu == 0 ? 10 : qp.pmtu) & 0xf);
            Le.put8(side, V1.QRQ_RETRY_RNRTRY, qp.retry);
            Le.put8(side, V1.QRQ_RRQ_DEPTH, qp.rrqDepth);
            Le.put8(side, V1.QRQ_RSQ_DEPTH, qp.rsqDepth);
            Be.put32(side, V1.QRQ_SQ_PSN, qp.sqPsn);
            Be.put16(side, V1.QRQ_ACCESS_PERMS, qp.accessFlags);
            ok = dma.write(rqAddr, side, 0, V1.QRQ_SIZE);
        }
        if (hdrAddr != 0 && qp.header != null && ok) {
            MemorySegment h = MemorySegment.ofArray(qp.header);
            ok = dma.write(hdrAddr, h, 0, h.byteSize());
        }
        if (!ok) {
            refusals.refuse("rdma-qp-query-addr", "QUERY_QP " + id + " buffers outside guest memory");
            return V1.ASTS_BAD_ATTR;
        }
        return V1.ASTS_OK;
    }

    private int destroyQp(int id) {
        QueuePair qp = id >= 0 && id < qpCount ? qps[id] : null;
        if (qp == null) {
            refusals.refuse("rdma-qp-destroy", "DESTROY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        data.forget(qp);
        qps[id] = null;
        qpsInUse--;
        return V1.ASTS_OK;
    }

    private int createMr(MemorySegment c) {
        int mrid = Le.u32(c, V1.CMR_ID_VER);
        int index = mrid >>> 8;
        long va = Le.u64(c, V1.CMR_VA), length = Le.u64(c, V1.CMR_LENGTH);
        int flags = Le.u16(c, V1.CMR_DBID_FLAGS), count = Le.u32(c, V1.CMR_MAP_COUNT);
        int pageShift = Le.u8(c, V1.CMR_PAGE_SIZE_LOG2);
        if (index == 0 || index >= mrCount || mrs[index] != null) {
            refusals.refuse("rdma-mr-id", "CREATE_MR " + Integer.toHexString(mrid)
                    + (index > 0 && index < mrCount ? " already exists" : " out of range"));
            return index > 0 && index < mrCount ? V1.ASTS_BAD_STATE : V1.ASTS_BAD_INDEX;
        }
        if (length < 0 || (flags & V1.MRF_ZERO_BASED) == 0 && Long.compareUnsigned(va, -1L - length) > 0) {
            refusals.refuse("rdma-mr-range", "CREATE_MR va 0x" + Long.toHexString(va) + " + " + length + " wraps");
            return V1.ASTS_BAD_ATTR;
        }
        PageTable mem = null;
        if (count == 1) {
            mem = PageTable.contiguous(Le.u64(c, V1.CMR_DMA_ADDR), length);
        } else if (count > 1) {
            long first = pageShift >= 12 && pageShift <= 30 ? va & ((1L << pageShift) - 1) : 0;
            mem = PageTable.read(dma, Le.u64(c, V1.CMR_DMA_ADDR), count, pageShift, first, length);
        }
        if (count > 0 && mem == null) {
            refusals.refuse("rdma-mr-table", "CREATE_MR " + Integer.toHexString(mrid) + " page table refused");
            return V1.ASTS_BAD_ATTR;
        }
        MemoryRegion mr = new MemoryRegion(index);
        mr.key = mrid & 0xff;
        mr.va = va;
        mr.length = length;
        mr.flags = flags;
        mr.mem = mem;
        mr.valid = mem != null;
        mrs[index] = mr;
        mrsInUse++;
        return V1.ASTS_OK;
    }

    private int destroyMr(int mrid) {
        int index = mrid >>> 8;
        if (index == 0 || index >= mrCount || mrs[index] == null) {
            refusals.refuse("rdma-mr-destroy", "DESTROY_MR " + Integer.toHexString(mrid) + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        mrs[index] = null;
        mrsInUse--;
        return V1.ASTS_OK;
    }

    private int createAh(MemorySegment c) {
        int id = Le.u32(c, V1.CAH_ID_VER) & 0xff_ffff;
        int len = Le.u32(c, V1.CAH_LENGTH);
        if (id >= ahCount || ahUsed[id]) {
            refusals.refuse("rdma-ah-id", "CREATE_AH " + id + (id < ahCount ? " already exists" : " out of range"));
            return id >= ahCount ? V1.ASTS_BAD_INDEX : V1.ASTS_BAD_STATE;
        }
        if (len < 0 || len > MAX_HEADER || !dma.read(Le.u64(c, V1.CAH_DMA_ADDR), side, 0, len)) {
            refusals.refuse("rdma-ah-header", "CREATE_AH " + id + " header template of " + len + " bytes refused");
            return V1.ASTS_BAD_ATTR;
        }
        AddressHandle ah = AddressHandle.parse(side.asSlice(0, len).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        if (ah != null && data.remote != null) {
            ah.node = Math.max(-1, data.remote.route(ah)); // no owner: treated as local
        }
        ahs[id] = ah;
        ahUsed[id] = true;
        ahsInUse++;
        return V1.ASTS_OK;
    }

    private int destroyAh(int id) {
        if (id < 0 || id >= ahCount || !ahUsed[id]) {
            refusals.refuse("rdma-ah-destroy", "DESTROY_AH " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        ahs[id] = null;
        ahUsed[id] = false;
        ahsInUse--;
        return V1.ASTS_OK;
    }
}
