package ernic.model.rdma;

import ernic.model.IonicDriverModel;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

import static ernic.model.rdma.Fw.*;

/**
 * The RDMA half of the driver model: what {@code ionic_rdma.ko} does at probe (RDMA_RESET_LIF, CREATE_EQ,
 * CREATE_CQ, CREATE_ADMINQ over the Ethernet admin queue), its RDMA admin queue ({@link RdmaAdminQueue}), and a
 * small verbs-like API in the manner of rdma-core's libionic: CQs, RC and UD QPs, MRs with page tables, AHs,
 * modify (with the RoCEv2 header template at RTR), post send / recv, poll with the color bit, arm, wait for an
 * event ({@link Events}), query and destroy.
 *
 * <p>Written from ionic_fw.h / ionic_if.h offsets ({@link Fw}) and the bring-up reference, not from the
 * device's classes. Control-path commands ring their doorbell with a write that waits for the device; data-path
 * doorbells (SQ, RQ, CQ) are posted writes as a guest's stores are, and completions are found by polling the CQ
 * in guest memory ({@link RdmaDataPath}). Posting and polling allocate nothing: WQEs and CQEs are read and
 * written in place in the shared guest RAM, and the work request / completion objects are the caller's, reused.
 * Not thread-safe: one thread drives one instance, as one process drives one verbs context.
 */
public final class RdmaVerbs {
    // ---- what a user sees ------------------------------------------------------------------------------------
    /** Send opcodes (enum ionic_v1_op). */
    public static final int SEND = 0, SEND_INV = 1, SEND_IMM = 2, READ = 3, WRITE = 4, WRITE_IMM = 5,
            ATOMIC_CS = 6, ATOMIC_FA = 7, LOCAL_INV = 9, BIND_MW = 10;
    /** Work completion opcodes (the values of enum ibv_wc_opcode). */
    public static final int WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_COMP_SWAP = 3, WC_FETCH_ADD = 4,
            WC_BIND_MW = 5, WC_LOCAL_INV = 6, WC_RECV = 128, WC_RECV_RDMA_WITH_IMM = 129;
    /** enum ibv_mw_type. */
    public static final int MW_TYPE_1 = 1, MW_TYPE_2 = 2;
    /** Completion status (enum ionic_status; the ibv_wc_status each maps to in the comment). */
    public static final int STS_OK = 0, // IBV_WC_SUCCESS
            STS_LOCAL_LEN_ERR = 1, // IBV_WC_LOC_LEN_ERR
            STS_LOCAL_QP_OPER_ERR = 2, // IBV_WC_LOC_QP_OP_ERR
            STS_LOCAL_PROT_ERR = 3, // IBV_WC_LOC_PROT_ERR
            STS_WQE_FLUSHED_ERR = 4, // IBV_WC_WR_FLUSH_ERR
            STS_MEM_MGMT_OPER_ERR = 5, // IBV_WC_MW_BIND_ERR
            STS_BAD_RESP_ERR = 6, // IBV_WC_BAD_RESP_ERR
            STS_LOCAL_ACC_ERR = 7, // IBV_WC_LOC_ACCESS_ERR
            STS_REMOTE_INV_REQ_ERR = 8, // IBV_WC_REM_INV_REQ_ERR
            STS_REMOTE_ACC_ERR = 9, // IBV_WC_REM_ACCESS_ERR
            STS_REMOTE_OPER_ERR = 10, // IBV_WC_REM_OP_ERR
            STS_RETRY_EXCEEDED = 11, // IBV_WC_RETRY_EXC_ERR
            STS_RNR_RETRY_EXCEEDED = 12; // IBV_WC_RNR_RETRY_EXC_ERR
    /** MR access flags (enum ionic_mr_flags) and QP access flags (enum ionic_qp_flags). */
    public static final int ACCESS_LOCAL_WRITE = 1, ACCESS_REMOTE_WRITE = 2, ACCESS_REMOTE_READ = 4,
            ACCESS_REMOTE_ATOMIC = 8, ACCESS_MW_BIND = 0x10, ACCESS_ZERO_BASED = 0x20;
    public static final int QP_REMOTE_WRITE = 1, QP_REMOTE_READ = 2, QP_REMOTE_ATOMIC = 4, QP_PRIVILEGED = 0x8000;
    /** QP types and states (enum ionic_qp_type, ionic_qp_state). */
    public static final int RC = 0, UC = 1, UD = 3;
    public static final int RESET = 0, INIT = 1, RTR = 2, RTS = 3, SQD = 4, SQE = 5, ERR = 6;
    /** Admin statuses (enum ionic_v1_admin_status). */
    public static final int ASTS_OK = 0, ASTS_BAD_CMD = 1, ASTS_BAD_INDEX = 2, ASTS_BAD_STATE = 3,
            ASTS_BAD_TYPE = 4, ASTS_BAD_ATTR = 5;
    /** Bytes of GRH in front of a UD receive. */
    public static final int GRH = 40;
    static final int PAGE = 4096, PAGE_SHIFT = 12;
    /** Where buffers live in the user's address space (a va the device sees only through MRs). */
    private static final long USER_VA_BASE = 0x7f00_0000_0000L;

    private final IonicDriverModel drv;
    private final MemorySegment ram;
    private final long ramIova;

    // RDMA identity (LIF_IDENTIFY)
    public final int version, qpOpcodes, adminOpcodes, maxStride, nmrs, nahs, qpCount, cqCount;
    private final int aqQtype, sqQtype, rqQtype, cqQtype, aqBase, eqBase;
    /** The LIF's first doorbell page (kernel pid 0); a queue type's doorbell is 8 bytes in it. */
    private final long dbPage;

    private final Qp[] qps;
    private final Cq[] cqs;
    final Events events;
    final RdmaDataPath dataPath;
    private RdmaAdminQueue admin;
    private RdmaRaw raw;
    private final int acqId = 0;
    private int nextCq = 1, nextQp = 2, nextMr = 1, nextAh = 0, nextPd = 2, eqPick;
    private final ArrayDeque<Integer> freeMrs = new ArrayDeque<>();
    /** One page for header templates and QUERY_QP replies: the device copies them during the command. */
    private final long scratch;

    private RdmaVerbs(IonicDriverModel drv, ByteBuffer lif, int ndbpgs) {
        this.drv = drv;
        this.ram = drv.ram();
        this.ramIova = drv.ramIova();
        version = lif.get(LID_RDMA_VERSION) & 0xff;
        qpOpcodes = lif.get(LID_RDMA_QP_OPCODES) & 0xff;
        adminOpcodes = lif.get(LID_RDMA_ADMIN_OPCODES) & 0xff;
        nmrs = lif.getInt(LID_RDMA_NMRS);
        nahs = lif.getInt(LID_RDMA_NAHS);
        maxStride = lif.get(LID_RDMA_MAX_STRIDE) & 0xff;
        aqQtype = lif.get(LID_RDMA_AQ + LQT_QTYPE) & 0xff;
        aqBase = lif.getInt(LID_RDMA_AQ + LQT_BASE);
        sqQtype = lif.get(LID_RDMA_SQ + LQT_QTYPE) & 0xff;
        qpCount = lif.getInt(LID_RDMA_SQ + LQT_COUNT);
        rqQtype = lif.get(LID_RDMA_RQ + LQT_QTYPE) & 0xff;
        cqQtype = lif.get(LID_RDMA_CQ + LQT_QTYPE) & 0xff;
        cqCount = lif.getInt(LID_RDMA_CQ + LQT_COUNT);
        eqBase = lif.getInt(LID_RDMA_EQ + LQT_BASE);
        dbPage = (long) drv.lifHwIndex() * ndbpgs * PAGE;
        qps = new Qp[qpCount];
        cqs = new Cq[cqCount];
        events = new Events(drv, cqs, lif.getInt(LID_RDMA_EQ + LQT_COUNT));
        dataPath = new RdmaDataPath(drv, qps, doorbell(sqQtype), doorbell(rqQtype), doorbell(cqQtype));
        scratch = drv.alloc(PAGE);
    }

    /**
     * Ethernet bring-up ({@link IonicDriverModel#bringUp()} and {@link IonicDriverModel#probeLif()}: ionic.ko
     * creates the RDMA aux device after them), then the probe of ionic_rdma: read the RDMA
     * identity, RDMA_RESET_LIF, one CREATE_EQ per EQ (interrupt i + 1, auto-masked), the admin CQ
     * (RDMA_CREATE_CQ) and the admin queue (RDMA_CREATE_ADMINQ), all over the Ethernet admin queue.
     */
    public static RdmaVerbs open(IonicDriverModel drv) throws IOException {
        drv.bringUp();
        drv.probeLif();
        IonicDriverModel.expectOk(drv.devcmd(IonicDriverModel.command(IonicDriverModel.IDENTIFY).put(1, (byte) 2)),
                "IDENTIFY");
        int ndbpgs = drv.devcmdData(32).getInt(DID_NDBPGS_PER_LIF);
        ByteBuffer li = IonicDriverModel.command(IonicDriverModel.LIF_IDENTIFY);
        li.put(2, (byte) 1);
        IonicDriverModel.expectOk(drv.devcmd(li), "LIF_IDENTIFY");
        ByteBuffer lif = drv.devcmdData(512);
        if ((lif.getLong(0) & 2) == 0) {
            throw new IOException("the LIF has no RDMA capability");
        }
        RdmaVerbs v = new RdmaVerbs(drv, lif, ndbpgs);
        if (v.version < 1 || v.version > 2 || v.events.count < 1 || v.maxStride < 6) {
            throw new IOException("RDMA identity unusable: version " + v.version + ", EQs " + v.events.count
                    + ", max_stride " + v.maxStride);
        }
        v.bootstrap();
        return v;
    }

    private void bootstrap() throws IOException {
        ByteBuffer reset = IonicDriverModel.command(CMD_RDMA_RESET_LIF);
        reset.putShort(RQC_LIF_INDEX, (short) 0);
        IonicDriverModel.expectOk(drv.adminq(reset), "RDMA_RESET_LIF");
        events.create(eqBase);
        long acqRing = drv.alloc((long) CQE_SIZE << RdmaAdminQueue.CQ_DEPTH_LOG2);
        IonicDriverModel.expectOk(drv.adminq(queueCmd(CMD_RDMA_CREATE_CQ, acqId, pickEq(),
                RdmaAdminQueue.CQ_DEPTH_LOG2, CQE_STRIDE_LOG2, acqRing)), "RDMA_CREATE_CQ");
        long aqRing = drv.alloc((long) AQ_STRIDE << RdmaAdminQueue.DEPTH_LOG2);
        int aqId = aqBase;
        IonicDriverModel.expectOk(drv.adminq(queueCmd(CMD_RDMA_CREATE_ADMINQ, aqId, acqId,
                RdmaAdminQueue.DEPTH_LOG2, 6, aqRing)), "RDMA_CREATE_ADMINQ");
        admin = new RdmaAdminQueue(drv, aqId, aqRing, doorbell(aqQtype), acqId, acqRing, doorbell(cqQtype));
        raw = new RdmaRaw(this, admin, events, acqId, doorbell(sqQtype), doorbell(rqQtype), doorbell(cqQtype));
    }

    /** Raw admin commands, EQEs and doorbells on this context's admin queue and EQs (for device tests). */
    public RdmaRaw raw() {
        return raw;
    }

    /** struct ionic_rdma_queue_cmd. */
    public static ByteBuffer queueCmd(int opcode, int qid, int cid, int depthLog2, int strideLog2, long ring) {
        ByteBuffer c = IonicDriverModel.command(opcode);
        c.putShort(RQC_LIF_INDEX, (short) 0);
        c.putInt(RQC_QID_VER, qid);
        c.putInt(RQC_CID, cid);
        c.putShort(RQC_DBID, (short) 0);
        c.put(RQC_DEPTH_LOG2, (byte) depthLog2);
        c.put(RQC_STRIDE_LOG2, (byte) strideLog2);
        c.putLong(RQC_DMA_ADDR, ring);
        return c;
    }

    /** The BAR 2 offset of queue type {@code qtype}'s doorbell. */
    private long doorbell(int qtype) {
        return dbPage + qtype * 8L;
    }

    /** CQs alternate between the EQs after the two kept for async events, as ionic_get_eqid does. */
    private int pickEq() {
        if (events.count < 4) {
            return 0;
        }
        return 2 + (eqPick++ & 1);
    }

    public IonicDriverModel driver() {
        return drv;
    }

    /** Admin commands posted so far. */
    public long adminCommands() {
        return admin.commands();
    }

    private long off(long iova) {
        return iova - ramIova;
    }

    // ---- memory ------------------------------------------------------------------------------------------------

    /**
     * Process memory as a user buffer: {@code bytes} in 4 KiB pages of guest RAM at a user virtual address;
     * {@code scattered} swaps neighbouring pages (see {@link Buffer}).
     */
    public Buffer buffer(long bytes, boolean scattered) {
        int pages = (int) ((bytes + PAGE - 1) >>> PAGE_SHIFT);
        long base = drv.alloc((long) pages * PAGE);
        return new Buffer(ram, ramIova, USER_VA_BASE + (base - ramIova), base, pages, bytes, scattered);
    }

    /**
     * {@link #buffer(long, boolean)} at the user virtual address {@code va} (page-aligned), as a process that maps
     * its buffer there with MAP_FIXED: for programs whose entries name an address known before the guest starts.
     */
    public Buffer buffer(long bytes, boolean scattered, long va) {
        if ((va & (PAGE - 1)) != 0) {
            throw new IllegalArgumentException("a buffer's address must be page-aligned: 0x" + Long.toHexString(va));
        }
        int pages = (int) ((bytes + PAGE - 1) >>> PAGE_SHIFT);
        long base = drv.alloc((long) pages * PAGE);
        return new Buffer(ram, ramIova, va, base, pages, bytes, scattered);
    }

    /**
     * Registers {@code [offset, offset + length)} of {@code b} (CREATE_MR): one page gives the direct address
     * (page + offset in page), more give a table of le64 page addresses; 4 KiB pages. lkey = rkey =
     * index << 8 | an 8-bit key.
     */
    public Mr regMr(Buffer b, long offset, long length, int access) throws IOException {
        return regMr(1, b, offset, length, access);
    }

    /** {@link #regMr(Buffer, long, long, int)} in protection domain {@code pd} (1 is the one of every QP here). */
    public Mr regMr(int pd, Buffer b, long offset, long length, int access) throws IOException {
        long va = b.va + offset;
        int first = (int) (offset >>> PAGE_SHIFT);
        int last = (int) ((offset + Math.max(length, 1) - 1) >>> PAGE_SHIFT);
        int count = last - first + 1;
        long dma;
        if (count == 1) {
            dma = b.page(first) + (va & (PAGE - 1));
        } else {
            dma = drv.alloc(8L * count);
            for (int i = 0; i < count; i++) {
                le64(ram, off(dma) + 8L * i, b.page(first + i));
            }
        }
        int key = nextMrid();
        int index = key >>> 8;
        AdminCommands.createMr(admin.cmd(), pd, key, va, length, access, count, dma, PAGE_SHIFT);
        int st = admin.post(OP_CREATE_MR, LEN_CREATE_MR);
        if (st != ASTS_OK) {
            freeMrs.push(index);
            throw new AdminException("CREATE_MR", st);
        }
        return new Mr(key, va, length, access, pd);
    }

    /** An MR id (ionic_get_mrid): a free index above 0, with an 8-bit key. */
    private int nextMrid() throws IOException {
        Integer free = freeMrs.poll();
        int index = free != null ? free : nextMr++;
        if (index >= nmrs) {
            throw new IOException("no MR index left (" + nmrs + ")");
        }
        return index << 8 | (index * 0x3b + 0x11) & 0xff;
    }

    public void deregMr(Mr mr) throws IOException {
        admin.destroy(OP_DESTROY_MR, mr.key(), "DESTROY_MR");
        freeMrs.push(mr.key() >>> 8);
    }

    /** A new protection domain's id (ionic_rdma numbers them; the device only compares them). */
    public int allocPd() {
        return nextPd++;
    }

    // ---- memory windows ------------------------------------------------------------------------------------

    /** ibv_alloc_mw in the PD of every QP here. */
    public Mw allocMw(int type) throws IOException {
        return allocMw(1, type);
    }

    /**
     * ibv_alloc_mw: ionic_alloc_mw takes an MR id and sends CREATE_MR with va, length, map_count, dma_addr and
     * page_size_log2 0, tbl_index ~0, the PD, and the flags IONIC_MRF_MW_1 (UKEY_EN | IS_MW) or IONIC_MRF_MW_2
     * (with INV_EN). The window's first rkey is the id.
     */
    public Mw allocMw(int pd, int type) throws IOException {
        if (type != MW_TYPE_1 && type != MW_TYPE_2) {
            throw new IllegalArgumentException("EINVAL: no memory window type " + type);
        }
        int mrid = nextMrid();
        AdminCommands.createMr(admin.cmd(), pd, mrid, 0, 0, type == MW_TYPE_1 ? MRF_MW_1 : MRF_MW_2, 0, 0, 0);
        int st = admin.post(OP_CREATE_MR, LEN_CREATE_MR);
        if (st != ASTS_OK) {
            freeMrs.push(mrid >>> 8);
            throw new AdminException("CREATE_MR", st);
        }
        return new Mw(type, pd, mrid);
    }

    /**
     * ibv_bind_mw of a type 1 window with {@code wr}'s wrId, signaled flag and bind info (see
     * {@link SendWr#bind}): libibverbs' checks (type 1 only, an MR whenever there is a range, the MR in the
     * window's PD: EINVAL, EPERM as IllegalArgumentException), then libionic's ionic_bind_mw: the new rkey is
     * the window's with its key byte one up (unchanged for length 0, an unbind), posted as a BIND_MW WQE and
     * rung; the window's rkey is the new one once posted, before the completion says whether it took.
     */
    public void bindMw(Qp qp, Mw mw, SendWr wr) {
        if (mw.type != MW_TYPE_1) {
            throw new IllegalArgumentException("EINVAL: ibv_bind_mw binds type 1 windows only");
        }
        if (wr.bindMr == null && (wr.bindAddr != 0 || wr.bindLength != 0)) {
            throw new IllegalArgumentException("EINVAL: a range with no MR");
        }
        if (wr.bindMr != null && wr.bindMr.pd() != mw.pd) {
            throw new IllegalArgumentException("EPERM: the MR and the window are in different PDs");
        }
        wr.opcode = BIND_MW;
        wr.mw = mw;
        wr.bindRkey = wr.bindLength != 0 ? incRkey(mw.rkey) : mw.rkey;
        dataPath.postLocal(qp, wr, false, true);
        mw.rkey = wr.bindRkey;
    }

    /** ibv_dealloc_mw: ionic_dealloc_mw sends DESTROY_MR with the id the window was created under. */
    public void deallocMw(Mw mw) throws IOException {
        admin.destroy(OP_DESTROY_MR, mw.mrid, "DESTROY_MR");
        freeMrs.push(mw.index());
    }

    /** ibv_inc_rkey: the key byte one up, the index kept. */
    public static int incRkey(int rkey) {
        return rkey & ~0xff | (rkey + 1) & 0xff;
    }

    // ---- address handles ----------------------------------------------------------------------------------

    public Ah createAh(Path p) throws IOException {
        return createAh(1, p);
    }

    /** {@link #createAh(Path)} in protection domain {@code pd} (1 is the one of every QP here). */
    public Ah createAh(int pd, Path p) throws IOException {
        int id = nextAh++;
        int len = p.template(ram, off(scratch), false);
        MemorySegment c = admin.cmd();
        le64(c, CAH_DMA_ADDR, scratch);
        le32(c, CAH_LENGTH, len);
        le32(c, CAH_PD_ID, pd);
        le32(c, CAH_ID_VER, id);
        le16(c, CAH_DBID_FLAGS, 0);
        u8(c, CAH_CSUM_PROFILE, p.ipv4() ? 0 : 2);
        admin.ok(OP_CREATE_AH, LEN_CREATE_AH, "CREATE_AH");
        return new Ah(id, p);
    }

    public void destroyAh(Ah ah) throws IOException {
        admin.destroy(OP_DESTROY_AH, ah.id(), "DESTROY_AH");
    }

    // ---- CQs ---------------------------------------------------------------------------------------------------

    public Cq createCq(int depthLog2) throws IOException {
        int id = nextCq++;
        long ring = drv.alloc((long) CQE_SIZE << depthLog2);
        int eq = pickEq();
        AdminCommands.createCq(admin.cmd(), id, eqBase + eq, depthLog2, ring, 0);
        admin.ok(OP_CREATE_CQ, LEN_CREATE_CQ, "CREATE_CQ");
        Cq cq = new Cq(this, id, eq, depthLog2, ring);
        cqs[id] = cq;
        return cq;
    }

    public void destroyCq(Cq cq) throws IOException {
        admin.destroy(OP_DESTROY_CQ, cq.id, "DESTROY_CQ");
        cqs[cq.id] = null;
    }

    // ---- QPs ---------------------------------------------------------------------------------------------------

    /**
     * CREATE_QP with kernel-style direct rings: SQ of 2^sqDepthLog2 WQEs and RQ of 2^rqDepthLog2, both of
     * stride 2^strideLog2 bytes (64..2^max_stride); {@code privFlags} as enum ionic_qp_flags.
     */
    public Qp createQp(int type, Cq sendCq, Cq recvCq, int sqDepthLog2, int rqDepthLog2, int strideLog2,
                       int privFlags) throws IOException {
        if (strideLog2 < 6 || strideLog2 > maxStride) {
            throw new IllegalArgumentException("stride 2^" + strideLog2 + " outside 64..2^" + maxStride);
        }
        int id = nextQp++;
        if (id >= qpCount) {
            throw new IOException("no QP id left (" + qpCount + ")");
        }
        long sq = drv.alloc(1L << (sqDepthLog2 + strideLog2));
        long rq = drv.alloc(1L << (rqDepthLog2 + strideLog2));
        MemorySegment c = admin.cmd();
        le32(c, CQP_PD_ID, 1);
        be32(c, CQP_PRIV_FLAGS_BE, privFlags);
        AdminCommands.createQpRing(c, 0, sendCq.id, sqDepthLog2, strideLog2, sq);
        AdminCommands.createQpRing(c, AdminCommands.QP_RQ, recvCq.id, rqDepthLog2, strideLog2, rq);
        le32(c, CQP_ID_VER, id);
        le16(c, CQP_DBID_FLAGS, 0);
        u8(c, CQP_TYPE_STATE, type);
        admin.ok(OP_CREATE_QP, LEN_CREATE_QP, "CREATE_QP");
        Qp qp = new Qp(id, type, sendCq, recvCq, sq, sqDepthLog2, strideLog2, rq, rqDepthLog2, strideLog2);
        qps[id] = qp;
        return qp;
    }

    public void destroyQp(Qp qp) throws IOException {
        admin.destroy(OP_DESTROY_QP, qp.id, "DESTROY_QP");
        qps[qp.id] = null;
    }

    /** MODIFY_QP (every field filled, attr_mask saying which count); a path goes in as the header template. */
    public void modify(Qp qp, QpAttr a) throws IOException {
        MemorySegment c = admin.cmd();
        int ahLen = 0;
        if ((a.mask & IB_QP_AV) != 0) {
            if (qp.ahId < 0) {
                qp.ahId = nextAh++; // each connected QP takes an AH id for its address vector
            }
            ahLen = qp.ahId | a.path.template(ram, off(scratch), true) << 24;
        }
        be32(c, MQP_ATTR_MASK_BE, a.mask);
        be16(c, MQP_ACCESS_FLAGS_BE, a.accessFlags);
        le32(c, MQP_RQ_PSN, a.rqPsn);
        le32(c, MQP_SQ_PSN, a.sqPsn);
        le32(c, MQP_QKEY_DEST_QPN, qp.type == UD ? a.qkey : a.destQpn);
        u8(c, MQP_PMTU, a.pmtuLog2);
        u8(c, MQP_RETRY, a.retry | a.rnrRetry << 4);
        u8(c, MQP_RNR_TIMER, a.rnrTimer);
        u8(c, MQP_RETRY_TIMEOUT, a.timeout);
        u8(c, MQP_RSQ_DEPTH, a.rsqDepth);
        u8(c, MQP_RRQ_DEPTH, a.rrqDepth);
        le32(c, MQP_AH_ID_LEN, ahLen);
        u8(c, MQP_TYPE_STATE, (a.mask & IB_QP_STATE) != 0 ? a.state | qp.state << 4 : qp.state | qp.state << 4);
        le64(c, MQP_DMA_ADDR, (a.mask & IB_QP_AV) != 0 ? scratch : 0);
        le32(c, MQP_ID_VER, qp.id);
        admin.ok(OP_MODIFY_QP, LEN_MODIFY_QP, "MODIFY_QP");
        if ((a.mask & IB_QP_STATE) != 0) {
            if (a.state == RESET) {
                qp.clearRings();
            }
            qp.state = a.state;
        }
    }

    /** RESET -> INIT: RC with its remote access flags, UD with its qkey. */
    public void init(Qp qp, int accessOrQkey) throws IOException {
        QpAttr a = new QpAttr();
        a.state = INIT;
        a.mask = IB_QP_STATE | IB_QP_PKEY_INDEX | (qp.type == UD ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS);
        a.accessFlags = qp.type == UD ? 0 : accessOrQkey;
        a.qkey = accessOrQkey;
        modify(qp, a);
    }

    /** INIT -> RTR: an RC QP learns its destination QP number and path (GIDs into the header template). */
    public void rtr(Qp qp, int destQpn, Path path) throws IOException {
        QpAttr a = new QpAttr();
        a.state = RTR;
        a.mask = IB_QP_STATE;
        if (qp.type == RC) {
            a.mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC
                    | IB_QP_MIN_RNR_TIMER;
            a.destQpn = destQpn;
            a.path = path;
        }
        modify(qp, a);
    }

    /** RTR -> RTS. */
    public void rts(Qp qp) throws IOException {
        QpAttr a = new QpAttr();
        a.state = RTS;
        a.mask = IB_QP_STATE | IB_QP_SQ_PSN;
        if (qp.type == RC) {
            a.mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC;
        }
        modify(qp, a);
    }

    public void toState(Qp qp, int state) throws IOException {
        QpAttr a = new QpAttr();
        a.state = state;
        a.mask = IB_QP_STATE;
        modify(qp, a);
    }

    /** Two RC QPs of this device connected to each other (INIT, RTR, RTS), with all remote access. */
    public void connect(Qp a, Path aToB, Qp b, Path bToA) throws IOException {
        int access = QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC;
        init(a, access);
        init(b, access);
        rtr(a, b.id, aToB);
        rtr(b, a.id, bToA);
        rts(a);
        rts(b);
    }

    public QpInfo query(Qp qp) throws IOException {
        long hdr = scratch, sq = scratch + 256, rq = scratch + 512;
        ram.asSlice(off(scratch), 1024).fill((byte) 0);
        MemorySegment c = admin.cmd();
        le64(c, QQP_HDR_DMA, hdr);
        le64(c, QQP_SQ_DMA, sq);
        le64(c, QQP_RQ_DMA, rq);
        le32(c, QQP_AH_ID, Math.max(qp.ahId, 0));
        le32(c, QQP_ID_VER, qp.id);
        admin.ok(OP_QUERY_QP, LEN_QUERY_QP, "QUERY_QP");
        int sp = u8(ram, off(rq) + QRQ_STATE_PMTU);
        return new QpInfo(sp >>> 4, sp & 0xf, be32(ram, off(sq) + QSQ_QKEY_DEST_QPN_BE),
                be16(ram, off(sq) + QSQ_ACCESS_PERMS_BE), be32(ram, off(sq) + QSQ_RQ_PSN_BE),
                be32(ram, off(rq) + QRQ_SQ_PSN_BE), ram.asSlice(off(hdr), 128).toArray(ValueLayout.JAVA_BYTE));
    }

    // ---- the data path ----------------------------------------------------------------------------------------

    /**
     * Writes the WQE and rings the SQ doorbell. LOCAL_INV (the rkey in {@code imm}) and BIND_MW (type 2 windows
     * only: see {@link SendWr#bind}) go as libionic writes them.
     */
    public void postSend(Qp qp, SendWr wr) {
        dataPath.postSend(qp, wr, true);
    }

    /**
     * Writes one send WQE (struct ionic_v1_wqe) at the SQ producer index; rings the doorbell (a posted 8-byte
     * store) when {@code ring}, else leaves that to {@link #ringSq}.
     */
    public void postSend(Qp qp, SendWr wr, boolean ring) {
        dataPath.postSend(qp, wr, ring);
    }

    public void ringSq(Qp qp) {
        dataPath.ringSq(qp);
    }

    /** A receive with one SGE. */
    public void postRecv(Qp qp, long wrId, long va, int len, int lkey) {
        dataPath.postRecv(qp, wrId, va, len, lkey);
    }

    /** A receive with the SGEs of {@code wr} (its wrId and SGE list; the rest is ignored). */
    public void postRecv(Qp qp, SendWr wr) {
        dataPath.postRecv(qp, wr);
    }

    /** Polls {@code cq} until one completion arrives or {@code millis} pass (see {@link RdmaDataPath#pollWait}). */
    public boolean pollWait(Cq cq, Wc wc, int millis) {
        return dataPath.pollWait(cq, wc, millis, RdmaDataPath.YIELD_NANOS);
    }

    /**
     * The same, yielding the CPU between polls for up to {@code yieldNanos} before it sleeps: a client that polls
     * like perftest, which never sleeps, for the benchmarks.
     */
    public boolean pollWait(Cq cq, Wc wc, int millis, long yieldNanos) {
        return dataPath.pollWait(cq, wc, millis, yieldNanos);
    }
}
