package ernic.ionic.rdma;

import ernic.ionic.base.Bar2;
import ernic.ionic.base.Dma;
import ernic.ionic.base.RdmaIdentity;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The RDMA admin commands (enum ionic_v1_admin_op): the lifecycle of the CQs, QPs, MRs and AHs in
 * {@link RdmaLif}'s tables, QUERY_QP, and the STATS commands. Each command is checked whole before
 * anything is recorded, so a refused one leaves nothing behind; the result is an admin status
 * (enum ionic_v1_admin_status). Device thread only.
 */
final class AdminCommands {
    private final RdmaLif lif;
    private final Dma dma;
    private final Refusals refusals;
    private final FaultPlan faults;
    private final RdmaCounters counters;
    private final DataPath data;

    private final Arena arena = Arena.ofAuto();
    /** Header templates read, and QUERY_QP replies written. */
    private final MemorySegment side = arena.allocate(RdmaLif.MAX_HEADER, 8);
    /** Headers or values of the STATS commands, before the DMA. */
    private final MemorySegment statsBuf = arena.allocate(RdmaLif.STATS_MAX, 8);
    private final AdminWqe.CreateCq createCq = new AdminWqe.CreateCq();
    private final AdminWqe.CreateQp createQp = new AdminWqe.CreateQp();
    private final AdminWqe.ModifyQp modifyQp = new AdminWqe.ModifyQp();
    private final AdminWqe.QueryQp queryQp = new AdminWqe.QueryQp();
    private final AdminWqe.QueryQpSq queryQpSq = new AdminWqe.QueryQpSq();
    private final AdminWqe.QueryQpRq queryQpRq = new AdminWqe.QueryQpRq();
    private final AdminWqe.CreateMr createMr = new AdminWqe.CreateMr();
    private final AdminWqe.CreateAh createAh = new AdminWqe.CreateAh();
    private final AdminWqe.Destroy destroy = new AdminWqe.Destroy();
    private final AdminWqe.Stats stats = new AdminWqe.Stats();

    /** QP generations handed out (never reset: a reply to an old QP must never match a new one). */
    private int generations;

    /**
     * Not a status: the MODIFY_QP waits for the mesh to name the owner of its destination GID. The admin queue
     * stops at it and runs it again when ownership changes, or with {@code mayWait} false after
     * {@link RdmaLif#RTR_WAIT_NANOS}.
     */
    static final int WAIT_FOR_OWNER = -1;
    /** Whether the command being run may wait for an owner ({@link #WAIT_FOR_OWNER}). */
    private boolean mayWait;

    AdminCommands(RdmaLif lif, Dma dma, Refusals refusals, FaultPlan faults, RdmaCounters counters, DataPath data) {
        this.lif = lif;
        this.dma = dma;
        this.refusals = refusals;
        this.faults = faults;
        this.counters = counters;
        this.data = data;
    }

    /**
     * Runs one admin command whose bytes (after the 4-byte header) are in {@code c}; returns the admin status, or
     * {@link #WAIT_FOR_OWNER} when {@code mayWait} and a MODIFY_QP's destination GID has no owner yet.
     */
    int run(int op, MemorySegment c, boolean mayWait) {
        this.mayWait = mayWait;
        if (lif.stubbed) {
            StubCounter stub = StubCounter.of(op);
            if (stub != null) {
                return stub(stub);
            }
        }
        try {
            return switch (op) {
                case V1.ADMIN_NOOP, V1.ADMIN_DEBUG, V1.ADMIN_QUERY_AH, V1.ADMIN_MODIFY_DCQCN -> V1.ASTS_OK;
                case V1.ADMIN_CREATE_CQ -> createCq(createCq.wrap(c, 0));
                case V1.ADMIN_DESTROY_CQ -> destroyCq(destroy.wrap(c, 0).id());
                case V1.ADMIN_CREATE_QP -> createQp(createQp.wrap(c, 0));
                case V1.ADMIN_MODIFY_QP -> modifyQp(modifyQp.wrap(c, 0));
                case V1.ADMIN_QUERY_QP -> queryQp(queryQp.wrap(c, 0));
                case V1.ADMIN_DESTROY_QP -> destroyQp(destroy.wrap(c, 0).id());
                case V1.ADMIN_CREATE_MR -> createMr(createMr.wrap(c, 0));
                case V1.ADMIN_DESTROY_MR -> destroyMr(destroy.wrap(c, 0).id());
                case V1.ADMIN_CREATE_AH -> createAh(createAh.wrap(c, 0));
                case V1.ADMIN_DESTROY_AH -> destroyAh(destroy.wrap(c, 0).id());
                case V1.ADMIN_STATS_HDRS, V1.ADMIN_STATS_VALS, V1.ADMIN_QP_STATS_HDRS, V1.ADMIN_QP_STATS_VALS ->
                        stats(op, stats.wrap(c, 0));
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
     * {@code --backend none}: a resource command succeeds and creates nothing, as the seed's stub backend
     * does for PCI enumeration and driver bring-up; the doorbells of what the driver thinks it created are
     * then refused like any unknown queue's. QUERY_QP has nothing to report and is answered BAD_INDEX.
     */
    private int stub(StubCounter op) {
        lif.stubs.inc(op);
        if (op == StubCounter.QUERY_QP) {
            refusals.refuse("rdma-stub-query", "QUERY_QP under --backend none: the stub keeps no QP");
            return V1.ASTS_BAD_INDEX;
        }
        return V1.ASTS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Statistics

    /**
     * STATS_HDRS / STATS_VALS (device) and QP_STATS_HDRS / QP_STATS_VALS (the QP in id_ver): the
     * header list or the values, DMA'd into the driver's buffer. The list must fit {@code length}
     * (values are cut to it); nothing is written outside it.
     */
    private int stats(int op, AdminWqe.Stats c) {
        long length = c.length();
        int id = c.id();
        boolean perQp = op == V1.ADMIN_QP_STATS_HDRS || op == V1.ADMIN_QP_STATS_VALS;
        boolean headers = op == V1.ADMIN_STATS_HDRS || op == V1.ADMIN_QP_STATS_HDRS;
        if (op == V1.ADMIN_STATS_VALS && faults.fire(FaultKind.STATS_VALS)) {
            return V1.ASTS_BAD_STATE;
        }
        QueuePair qp = null;
        if (op == V1.ADMIN_QP_STATS_VALS) {
            qp = lif.queuePairs.get(id);
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
            lif.syncCounters();
            counters.writeDeviceValues(statsBuf);
        }
        if (!dma.write(c.dmaAddr(), statsBuf, 0, n)) {
            refusals.refuse("rdma-stats-addr", "stats opcode " + op + " buffer outside guest memory");
            return V1.ASTS_BAD_ATTR;
        }
        return V1.ASTS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Completion queues

    /** The memory of a ring: direct (map_count 1) or a page table (map_count > 1); null when refused. */
    private PageTable ringMemory(long addr, int mapCount, int pageShift, long size) {
        if (mapCount == 1) {
            PageTable t = PageTable.contiguous(addr, size);
            return t != null && dma.mapped(addr, size) ? t : null;
        }
        return PageTable.read(dma, addr, mapCount, pageShift, 0, size);
    }

    private int createCq(AdminWqe.CreateCq c) {
        int id = c.id(), eq = c.eqId();
        int depth = c.depthLog2(), stride = c.strideLog2();
        if (!lif.completionQueues.inRange(id) || lif.completionQueues.get(id) != null) {
            refusals.refuse("rdma-cq-id", "CREATE_CQ " + id
                    + (lif.completionQueues.inRange(id) ? " already exists" : " out of range"));
            return lif.completionQueues.inRange(id) ? V1.ASTS_BAD_STATE : V1.ASTS_BAD_INDEX;
        }
        if (lif.eventQueues.get(eq) == null) {
            refusals.refuse("rdma-cq-eq", "CREATE_CQ " + id + " on EQ " + eq);
            return V1.ASTS_BAD_INDEX;
        }
        if (!RdmaLif.validDepth(depth) || stride < 5 || stride > 8) {
            refusals.refuse("rdma-cq-geometry", "CREATE_CQ depth_log2 " + depth + " stride_log2 " + stride);
            return V1.ASTS_BAD_ATTR;
        }
        if (!Bar2.validPage(c.dbid())) {
            refusals.refuse("rdma-cq-dbid", "CREATE_CQ " + id + " on doorbell page " + c.dbid());
            return V1.ASTS_BAD_ATTR;
        }
        if (c.mapCount() > 1 && !lif.pagesFit(c.mapCount())) {
            return V1.ASTS_BAD_ATTR;
        }
        PageTable mem = ringMemory(c.dmaAddr(), c.mapCount(), c.pageSizeLog2(), 1L << (depth + stride));
        if (mem == null) {
            refusals.refuse("rdma-cq-addr", "CREATE_CQ " + id + " ring memory refused");
            return V1.ASTS_BAD_ATTR;
        }
        lif.holdPages(mem);
        CompletionQueue cq = new CompletionQueue(id, eq, mem, depth, stride);
        cq.dbid = c.dbid();
        lif.completionQueues.put(id, cq);
        counters.control.inc(RdmaCounters.Control.CQS);
        return V1.ASTS_OK;
    }

    private int destroyCq(int id) {
        if (lif.completionQueues.get(id) == null) {
            refusals.refuse("rdma-cq-destroy", "DESTROY_CQ " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        lif.releasePages(lif.completionQueues.get(id).mem);
        lif.completionQueues.remove(id);
        counters.control.add(RdmaCounters.Control.CQS, -1);
        return V1.ASTS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Queue pairs

    /** One ring of CREATE_QP; null when it has none (map_count 0) or its geometry or memory is refused. */
    private WorkQueue workQueue(AdminWqe.CreateQp c, AdminWqe.CreateQp.Ring r, boolean spec) {
        int depth = c.depthLog2(r), stride = c.strideLog2(r), count = c.mapCount(r);
        if (count == 0) {
            return null;
        }
        if (!validGeometry(c, r)) {
            return null;
        }
        PageTable mem = ringMemory(c.dmaAddr(r), count, c.pageSizeLog2(r), 1L << (depth + stride));
        return mem == null ? null : new WorkQueue(mem, depth, stride, spec);
    }

    /** A ring's depth (log2, 1 to {@link RdmaLif#MAX_DEPTH_LOG2}) and stride (log2, 6 to MAX_STRIDE). */
    private static boolean validGeometry(AdminWqe.CreateQp c, AdminWqe.CreateQp.Ring r) {
        int stride = c.strideLog2(r);
        return RdmaLif.validDepth(c.depthLog2(r)) && stride >= 6 && stride <= RdmaIdentity.MAX_STRIDE;
    }

    private int createQp(AdminWqe.CreateQp c) {
        int id = c.id(), type = c.type(), flags = c.privFlags();
        int sqCq = c.cqId(AdminWqe.CreateQp.Ring.SQ), rqCq = c.cqId(AdminWqe.CreateQp.Ring.RQ);
        if (!lif.queuePairs.inRange(id) || lif.queuePairs.get(id) != null) {
            refusals.refuse("rdma-qp-id", "CREATE_QP " + id
                    + (lif.queuePairs.inRange(id) ? " already exists" : " out of range"));
            return lif.queuePairs.inRange(id) ? V1.ASTS_BAD_STATE : V1.ASTS_BAD_INDEX;
        }
        if (type != V1.QPT_RC && type != V1.QPT_UC && type != V1.QPT_UD) {
            refusals.refuse("rdma-qp-type", "CREATE_QP " + id + " of type " + type);
            return V1.ASTS_BAD_TYPE;
        }
        if (!liveCq(sqCq) || !liveCq(rqCq)) {
            refusals.refuse("rdma-qp-cq", "CREATE_QP " + id + " on CQs " + sqCq + "/" + rqCq);
            return V1.ASTS_BAD_INDEX;
        }
        if (!Bar2.validPage(c.dbid())) {
            refusals.refuse("rdma-qp-dbid", "CREATE_QP " + id + " on doorbell page " + c.dbid());
            return V1.ASTS_BAD_ATTR;
        }
        AdminWqe.CreateQp.Ring sqRing = AdminWqe.CreateQp.Ring.SQ, rqRing = AdminWqe.CreateQp.Ring.RQ;
        boolean hasSq = c.mapCount(sqRing) != 0, hasRq = c.mapCount(rqRing) != 0;
        if (hasSq && !validGeometry(c, sqRing) || hasRq && !validGeometry(c, rqRing)) {
            refusals.refuse("rdma-qp-geometry", "CREATE_QP " + id + " sq depth_log2 " + c.depthLog2(sqRing)
                    + " stride_log2 " + c.strideLog2(sqRing) + ", rq depth_log2 " + c.depthLog2(rqRing)
                    + " stride_log2 " + c.strideLog2(rqRing));
            return V1.ASTS_BAD_ATTR;
        }
        int sqPages = c.mapCount(sqRing) > 1 ? c.mapCount(sqRing) : 0;
        int rqPages = c.mapCount(rqRing) > 1 ? c.mapCount(rqRing) : 0;
        if (!lif.pagesFit(sqPages + rqPages)) {
            return V1.ASTS_BAD_ATTR;
        }
        WorkQueue sq = workQueue(c, AdminWqe.CreateQp.Ring.SQ, (flags & V1.QPF_SQ_SPEC) != 0);
        WorkQueue rq = workQueue(c, AdminWqe.CreateQp.Ring.RQ, (flags & V1.QPF_RQ_SPEC) != 0);
        if (hasSq && sq == null || hasRq && rq == null) {
            refusals.refuse("rdma-qp-ring", "CREATE_QP " + id + " ring geometry or memory refused");
            return V1.ASTS_BAD_ATTR;
        }
        lif.holdPages(sq == null ? null : sq.mem);
        lif.holdPages(rq == null ? null : rq.mem);
        QueuePair qp = new QueuePair(id, type, flags, sqCq, rqCq, sq, rq);
        qp.generation = ++generations;
        qp.dbid = c.dbid();
        qp.pd = c.pdId();
        lif.queuePairs.put(id, qp);
        counters.control.inc(RdmaCounters.Control.QPS);
        return V1.ASTS_OK;
    }

    private boolean liveCq(int id) {
        return lif.completionQueues.get(id) != null;
    }

    /** The QP state machine of MODIFY_QP: RESET and ERR are reachable from anywhere. */
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

    private int modifyQp(AdminWqe.ModifyQp c) {
        int id = c.id();
        QueuePair qp = lif.queuePairs.get(id);
        if (qp == null) {
            refusals.refuse("rdma-qp-modify", "MODIFY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        int mask = c.attrMask();
        int to = qp.state;
        if ((mask & V1.IB_QP_STATE) != 0) {
            to = c.state();
            int from = c.currentState();
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
            int hdrLen = c.headerLength();
            if (hdrLen > RdmaLif.MAX_HEADER || hdrLen > 0 && !dma.read(c.dmaAddr(), side, 0, hdrLen)) {
                refusals.refuse("rdma-qp-header", "MODIFY_QP " + id + " header template unreadable");
                return V1.ASTS_BAD_ATTR;
            }
            header = side.asSlice(0, hdrLen).toArray(ValueLayout.JAVA_BYTE);
            av = AddressHandle.parse(header);
        }
        int node = -1;
        if (av != null && data.remote != null) {
            data.remote.templateSource(av); // what the guest sends RDMA from is its own: the mesh may learn it
        }
        // An attached peer's address is in this node: its QPs are placed here, wherever the mesh is.
        boolean attached = av != null && data.attachments.owner(av.dgid) != null;
        // With --roce, an RC or UC destination no one here owns may be reached on the wire (after the mesh's wait below).
        boolean carried = (mask & V1.IB_QP_AV) != 0 && !attached && onWire(qp, av);
        if ((mask & V1.IB_QP_AV) != 0 && data.remote != null && qp.connected() && !attached) {
            node = data.remote.route(av);
            if (node == RemotePath.UNOWNED && mayWait && av != null) {
                // The owner may not be known yet: the peer's server learns its guest's address as the guest
                // sends from it, often just before this RTR (the tools' TCP exchange). Wait for the mesh.
                return WAIT_FOR_OWNER;
            }
            if (node == RemotePath.UNOWNED && !carried) {
                // Picking some node instead would deliver writes into the wrong VM's memory.
                refusals.refuse("rdma-qp-unowned-gid", "MODIFY_QP " + id + ": no mesh node owns the destination GID");
                return V1.ASTS_BAD_ATTR;
            }
        }
        boolean wire = carried && (data.remote == null || node == RemotePath.UNOWNED);
        if (wire) {
            node = -1;
        }
        // Everything checked: record.
        if ((mask & V1.IB_QP_AV) != 0) {
            if (data.remote != null && qp.connected()) {
                data.remote.place(qp, node);
            }
            qp.onWire = wire;
            qp.header = header;
            qp.av = av;
            qp.ahId = c.ahId();
        }
        if ((mask & V1.IB_QP_ACCESS_FLAGS) != 0) {
            qp.accessFlags = c.accessFlags();
        }
        if ((mask & V1.IB_QP_PKEY_INDEX) != 0) {
            qp.pkeyId = c.pkeyId();
        }
        if ((mask & V1.IB_QP_QKEY) != 0) {
            qp.qkey = c.qkey();
            qp.hasQkey = true;
        }
        if ((mask & V1.IB_QP_DEST_QPN) != 0) {
            qp.destQpn = c.destQpn();
        }
        if ((mask & V1.IB_QP_PATH_MTU) != 0) {
            qp.pmtu = c.pmtu();
        }
        if ((mask & (V1.IB_QP_RETRY_CNT | V1.IB_QP_RNR_RETRY)) != 0) {
            qp.retry = c.retry();
        }
        if ((mask & V1.IB_QP_MIN_RNR_TIMER) != 0) {
            qp.rnrTimer = c.rnrTimer();
        }
        if ((mask & V1.IB_QP_TIMEOUT) != 0) {
            qp.retryTimeout = c.retryTimeout();
        }
        if ((mask & V1.IB_QP_MAX_QP_RD_ATOMIC) != 0) {
            qp.rrqDepth = c.rrqDepth();
        }
        if ((mask & V1.IB_QP_MAX_DEST_RD_ATOMIC) != 0) {
            qp.rsqDepth = c.rsqDepth();
        }
        if ((mask & V1.IB_QP_RQ_PSN) != 0) {
            qp.rqPsn = c.rqPsn();
        }
        if ((mask & V1.IB_QP_SQ_PSN) != 0) {
            qp.sqPsn = c.sqPsn();
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
            if (data.wire != null) {
                data.wire.moved(qp, to);
            }
        }
        return V1.ASTS_OK;
    }

    /** Whether {@code qp} goes on the wire for {@code av}: {@code --roce}, an RC or UC QP, a destination not here. */
    private boolean onWire(QueuePair qp, AddressHandle av) {
        return data.wire != null && av != null && qp.connected() && data.wire.carries(av);
    }

    private int queryQp(AdminWqe.QueryQp c) {
        int id = c.id();
        QueuePair qp = lif.queuePairs.get(id);
        if (qp == null) {
            refusals.refuse("rdma-qp-query", "QUERY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        long sqAddr = c.sqDmaAddr(), rqAddr = c.rqDmaAddr(), hdrAddr = c.hdrDmaAddr();
        boolean ok = true;
        if (sqAddr != 0) {
            queryQpSq.wrap(side, 0).clear()
                    .rnrTimer(qp.rnrTimer)
                    .retryTimeout(qp.retryTimeout)
                    .accessPerms(qp.accessFlags)
                    .pkeyId(qp.pkeyId)
                    .qkeyDestQpn(qp.datagram() ? qp.qkey : qp.destQpn)
                    .rateLimit(qp.rateLimit)
                    .rqPsn(qp.rqPsn);
            ok = dma.write(sqAddr, side, 0, AdminWqe.QueryQpSq.SIZE);
        }
        if (rqAddr != 0 && ok) {
            queryQpRq.wrap(side, 0).clear()
                    .statePmtu(qp.state, qp.pmtu == 0 ? 10 : qp.pmtu)
                    .retryRnrRetry(qp.retry)
                    .rrqDepth(qp.rrqDepth)
                    .rsqDepth(qp.rsqDepth)
                    .sqPsn(qp.sqPsn)
                    .accessPerms(qp.accessFlags);
            ok = dma.write(rqAddr, side, 0, AdminWqe.QueryQpRq.SIZE);
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
        QueuePair qp = lif.queuePairs.get(id);
        if (qp == null) {
            refusals.refuse("rdma-qp-destroy", "DESTROY_QP " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        data.forget(qp);
        lif.releasePages(qp.sq == null ? null : qp.sq.mem);
        lif.releasePages(qp.rq == null ? null : qp.rq.mem);
        lif.queuePairs.remove(id);
        counters.control.add(RdmaCounters.Control.QPS, -1);
        return V1.ASTS_OK;
    }

    // ---------------------------------------------------------------------------------------------
    // Memory regions and address handles

    private int createMr(AdminWqe.CreateMr c) {
        int mrid = c.mrid();
        int index = mrid >>> 8;
        long va = c.va(), length = c.length();
        int flags = c.flags(), count = c.mapCount(), pageShift = c.pageSizeLog2();
        if (!lif.memoryRegions.inRange(index) || lif.memoryRegions.get(index) != null) {
            refusals.refuse("rdma-mr-id", "CREATE_MR " + Integer.toHexString(mrid)
                    + (lif.memoryRegions.inRange(index) ? " already exists" : " out of range"));
            return lif.memoryRegions.inRange(index) ? V1.ASTS_BAD_STATE : V1.ASTS_BAD_INDEX;
        }
        if ((flags & V1.MRF_IS_MW) != 0) {
            return createWindow(c, index, flags, count);
        }
        if (length < 0 || (flags & V1.MRF_ZERO_BASED) == 0 && Long.compareUnsigned(va, -1L - length) > 0) {
            refusals.refuse("rdma-mr-range", "CREATE_MR va 0x" + Long.toHexString(va) + " + " + length + " wraps");
            return V1.ASTS_BAD_ATTR;
        }
        PageTable mem = null;
        if (count == 1) {
            mem = PageTable.contiguous(c.dmaAddr(), length);
        } else if (count > 1) {
            if (!lif.pagesFit(count)) {
                return V1.ASTS_BAD_ATTR;
            }
            long first = pageShift >= 12 && pageShift <= 30 ? va & ((1L << pageShift) - 1) : 0;
            mem = PageTable.read(dma, c.dmaAddr(), count, pageShift, first, length);
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
        mr.pd = c.pdId();
        mr.mem = mem;
        mr.valid = mem != null;
        lif.holdPages(mem);
        lif.memoryRegions.put(index, mr);
        counters.control.inc(RdmaCounters.Control.MRS);
        return V1.ASTS_OK;
    }

    /**
     * ionic_alloc_mw: CREATE_MR with IONIC_MRF_IS_MW (IONIC_MRF_MW_1, or IONIC_MRF_MW_2 with INV_EN), va and
     * length 0, no pages. The window takes the id's key byte and the PD; a type 1 window starts unbound (a
     * bind gives it a range), a type 2 one free.
     */
    private int createWindow(AdminWqe.CreateMr c, int index, int flags, int count) {
        if (count != 0) {
            refusals.refuse("rdma-mw-create", "CREATE_MR of a memory window with pages");
            return V1.ASTS_BAD_ATTR;
        }
        MemoryRegion mw = new MemoryRegion(index, (flags & V1.MRF_INV_EN) != 0 ? 2 : 1);
        mw.key = c.mrid() & 0xff;
        mw.pd = c.pdId();
        lif.memoryRegions.put(index, mw);
        counters.control.inc(RdmaCounters.Control.MWS);
        return V1.ASTS_OK;
    }

    /**
     * DESTROY_MR of an MR, or of a window (ionic_dealloc_mw: it lets go of its MR). An MR that windows are
     * bound to stays, as rxe refuses to deregister it (IBA 10.6.7.2.6): BAD_STATE, and the driver's
     * ibv_dereg_mr fails.
     */
    private int destroyMr(int mrid) {
        int index = mrid >>> 8;
        MemoryRegion mr = lif.memoryRegions.get(index);
        if (mr == null) {
            refusals.refuse("rdma-mr-destroy", "DESTROY_MR " + Integer.toHexString(mrid) + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        if (mr.window()) {
            mr.unbind();
            lif.memoryRegions.remove(index);
            counters.control.add(RdmaCounters.Control.MWS, -1);
            return V1.ASTS_OK;
        }
        if (data.memory().windows.busy(mr)) {
            return V1.ASTS_BAD_STATE;
        }
        lif.releasePages(mr.mem);
        lif.memoryRegions.remove(index);
        counters.control.add(RdmaCounters.Control.MRS, -1);
        return V1.ASTS_OK;
    }

    private int createAh(AdminWqe.CreateAh c) {
        int id = c.id(), len = c.length();
        if (!lif.addressHandles.inRange(id) || lif.ahUsed[id]) {
            refusals.refuse("rdma-ah-id", "CREATE_AH " + id
                    + (lif.addressHandles.inRange(id) ? " already exists" : " out of range"));
            return lif.addressHandles.inRange(id) ? V1.ASTS_BAD_STATE : V1.ASTS_BAD_INDEX;
        }
        if (len < 0 || len > RdmaLif.MAX_HEADER || !dma.read(c.dmaAddr(), side, 0, len)) {
            refusals.refuse("rdma-ah-header", "CREATE_AH " + id + " header template of " + len + " bytes refused");
            return V1.ASTS_BAD_ATTR;
        }
        AddressHandle ah = AddressHandle.parse(side.asSlice(0, len).toArray(ValueLayout.JAVA_BYTE));
        if (ah != null) {
            ah.pd = c.pdId();
            if (data.remote != null) {
                data.remote.templateSource(ah);
                ah.node = Math.max(-1, data.remote.route(ah)); // no owner: treated as local
            }
        }
        lif.addressHandles.put(id, ah);
        lif.ahUsed[id] = true;
        counters.control.inc(RdmaCounters.Control.AHS);
        return V1.ASTS_OK;
    }

    private int destroyAh(int id) {
        if (!lif.addressHandles.inRange(id) || !lif.ahUsed[id]) {
            refusals.refuse("rdma-ah-destroy", "DESTROY_AH " + id + " that does not exist");
            return V1.ASTS_BAD_INDEX;
        }
        lif.addressHandles.remove(id);
        lif.ahUsed[id] = false;
        counters.control.add(RdmaCounters.Control.AHS, -1);
        return V1.ASTS_OK;
    }
}
