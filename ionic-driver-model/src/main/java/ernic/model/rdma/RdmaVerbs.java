package ernic.it.driver;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

import static ernic.it.driver.Fw.*;

/**
 * The RDMA half of the driver model: what {@code ionic_rdma.ko} does at probe (RDMA_RESET_LIF, CREATE_EQ,
 * CREATE_CQ, CREATE_ADMINQ over the Ethernet admin queue), its RDMA admin queue, and a small verbs-like API in
 * the manner of rdma-core's libionic: CQs, RC and UD QPs, MRs with page tables, AHs, modify (with the RoCEv2
 * header template at RTR), post send / recv, poll with the color bit, arm, wait for an event (EQE + MSI-X
 * eventfd), query and destroy.
 *
 * <p>Written from ionic_fw.h / ionic_if.h offsets ({@link Fw}) and the bring-up reference, not from the
 * device's classes. Control-path commands ring their doorbell with a REGION_WRITE round trip; data-path
 * doorbells (SQ, RQ, CQ) are posted writes as QEMU forwards a guest's stores, and completions are found by
 * polling the CQ in guest memory. Posting and polling allocate nothing: WQEs and CQEs are read and written in
 * place in the shared guest RAM, and the work request / completion objects are the caller's, reused. Not
 * thread-safe: one thread drives one instance, as one process drives one verbs context.
 */
public final class RdmaVerbs {
    // ---- what a user sees ------------------------------------------------------------------------------------
    /** Send opcodes (enum ionic_v1_op). */
    public static final int SEND = 0, SEND_INV = 1, SEND_IMM = 2, READ = 3, WRITE = 4, WRITE_IMM = 5,
            ATOMIC_CS = 6, ATOMIC_FA = 7;
    /** Work completion opcodes (the values of enum ibv_wc_opcode). */
    public static final int WC_SEND = 0, WC_RDMA_WRITE = 1, WC_RDMA_READ = 2, WC_COMP_SWAP = 3, WC_FETCH_ADD = 4,
            WC_RECV = 128, WC_RECV_RDMA_WITH_IMM = 129;
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
            ACCESS_REMOTE_ATOMIC = 8;
    public static final int QP_REMOTE_WRITE = 1, QP_REMOTE_READ = 2, QP_REMOTE_ATOMIC = 4;
    /** QP types and states (enum ionic_qp_type, ionic_qp_state). */
    public static final int RC = 0, UD = 3;
    public static final int RESET = 0, INIT = 1, RTR = 2, RTS = 3, ERR = 6;
    /** Admin statuses (enum ionic_v1_admin_status). */
    public static final int ASTS_OK = 0, ASTS_BAD_CMD = 1, ASTS_BAD_INDEX = 2, ASTS_BAD_STATE = 3,
            ASTS_BAD_TYPE = 4, ASTS_BAD_ATTR = 5;
    /** Bytes of GRH in front of a UD receive. */
    public static final int GRH = 40;
    static final int PAGE = 4096, PAGE_SHIFT = 12;
    static final int EQ_DEPTH_LOG2 = 10, ACQ_DEPTH_LOG2 = 8, AQ_DEPTH_LOG2 = 9, MAX_EQS = 4;
    static final int ROCE_UDP_PORT = 4791;

    /** An admin command the device refused, with its ionic_v1_admin_status. */
    public static final class AdminException extends IOException {
        public final int status;

        AdminException(String what, int status) {
            super(what + " failed with admin status " + status);
            this.status = status;
        }
    }

    private final IonicDriverModel drv;
    private final MemorySegment ram;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment cmd = arena.allocate(256, 8);

    // RDMA identity (LIF_IDENTIFY)
    public final int version, qpOpcodes, adminOpcodes, maxStride, nmrs, nahs, qpCount, cqCount;
    private final int aqQtype, sqQtype, rqQtype, cqQtype, aqBase, eqBase;
    private final long dbPage;

    // EQs
    private final int eqCount;
    private final long[] eqRing = new long[MAX_EQS];
    private final int[] eqCons = new int[MAX_EQS], eqIntr = new int[MAX_EQS];
    private final boolean[] eqColor = new boolean[MAX_EQS];

    // The RDMA admin queue and its CQ
    private final int aqId, acqId = 0;
    private long aqRing, acqRing;
    private int aqProd, acqCons, acqCredit;
    private boolean acqColor = true;

    private final Qp[] qps;
    private final Cq[] cqs;
    private int nextCq = 1, nextQp = 2, nextMr = 1, nextAh = 0, eqPick;
    private final ArrayDeque<Integer> freeMrs = new ArrayDeque<>();
    /** One page for header templates and QUERY_QP replies: the device copies them during the command. */
    private final long scratch;
    private long adminCommands;

    private RdmaVerbs(IonicDriverModel drv, ByteBuffer lif, int ndbpgs) {
        this.drv = drv;
        this.ram = drv.ram();
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
        eqCount = Math.min(Math.min(lif.getInt(LID_RDMA_EQ + LQT_COUNT), MAX_EQS), drv.vectors() - 1);
        aqId = aqBase;
        dbPage = (long) drv.lifHwIndex() * ndbpgs * PAGE; // kernel pid 0
        qps = new Qp[qpCount];
        cqs = new Cq[cqCount];
        scratch = drv.alloc(PAGE);
    }

    /**
     * Ethernet bring-up ({@link IonicDriverModel#bringUp()}), then the probe of ionic_rdma: read the RDMA
     * identity, RDMA_RESET_LIF, one CREATE_EQ per EQ (interrupt i + 1, auto-masked), the admin CQ
     * (RDMA_CREATE_CQ) and the admin queue (RDMA_CREATE_ADMINQ), all over the Ethernet admin queue.
     */
    public static RdmaVerbs open(IonicDriverModel drv) throws IOException {
        drv.bringUp();
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
        if (v.version < 1 || v.version > 2 || v.eqCount < 1 || v.maxStride < 6) {
            throw new IOException("RDMA identity unusable: version " + v.version + ", EQs " + v.eqCount
                    + ", max_stride " + v.maxStride);
        }
        v.bootstrap();
        return v;
    }

    private void bootstrap() throws IOException {
        ByteBuffer reset = IonicDriverModel.command(CMD_RDMA_RESET_LIF);
        reset.putShort(RQC_LIF_INDEX, (short) 0);
        IonicDriverModel.expectOk(drv.adminq(reset), "RDMA_RESET_LIF");
        for (int i = 0; i < eqCount; i++) {
            eqRing[i] = drv.alloc((long) EQE_SIZE << EQ_DEPTH_LOG2);
            eqIntr[i] = i + 1;
            eqColor[i] = true;
            drv.intrMask(eqIntr[i], true, true);
            IonicDriverModel.expectOk(drv.adminq(queueCmd(CMD_RDMA_CREATE_EQ, eqBase + i, eqIntr[i], EQ_DEPTH_LOG2, 2,
                    eqRing[i])), "RDMA_CREATE_EQ " + i);
            drv.intrMask(eqIntr[i], false, true);
        }
        acqRing = drv.alloc((long) CQE_SIZE << ACQ_DEPTH_LOG2);
        IonicDriverModel.expectOk(drv.adminq(queueCmd(CMD_RDMA_CREATE_CQ, acqId, pickEq(), ACQ_DEPTH_LOG2,
                CQE_STRIDE_LOG2, acqRing)), "RDMA_CREATE_CQ");
        aqRing = drv.alloc((long) AQ_STRIDE << AQ_DEPTH_LOG2);
        IonicDriverModel.expectOk(drv.adminq(queueCmd(CMD_RDMA_CREATE_ADMINQ, aqId, acqId, AQ_DEPTH_LOG2, 6, aqRing)),
                "RDMA_CREATE_ADMINQ");
    }

    /** struct ionic_rdma_queue_cmd. */
    private static ByteBuffer queueCmd(int opcode, int qid, int cid, int depthLog2, int strideLog2, long ring) {
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

    /** CQs alternate between the EQs after the two kept for async events, as ionic_get_eqid does. */
    private int pickEq() {
        if (eqCount < 4) {
            return 0;
        }
        return 2 + (eqPick++ & 1);
    }

    public IonicDriverModel driver() {
        return drv;
    }

    /** Admin commands posted so far. */
    public long adminCommands() {
        return adminCommands;
    }

    // ---- the RDMA admin queue ----------------------------------------------------------------------------------

    /** The zeroed command buffer for the next admin command. */
    private MemorySegment cmd() {
        cmd.fill((byte) 0);
        return cmd;
    }

    /**
     * Posts the command in {@link #cmd} ({@code len} bytes) as ionic_admin_post does: first slot {op, 0, len,
     * cmd[0..60)}, later slots the rest; rings the AQ doorbell and reads the admin CQE, which must name this
     * AQ and the command's first slot. Returns the admin status.
     */
    private int admin(int op, int len) throws IOException {
        int slots = (len + AWQE_CMD + AQ_STRIDE - 1) / AQ_STRIDE;
        int mask = (1 << AQ_DEPTH_LOG2) - 1;
        int first = aqProd;
        for (int s = 0; s < slots; s++) {
            long slot = off(aqRing + (long) AQ_STRIDE * ((first + s) & mask));
            if (s == 0) {
                u8(ram, slot + AWQE_OP, op);
                u8(ram, slot + 1, 0);
                le16(ram, slot + AWQE_LEN, len);
                MemorySegment.copy(cmd, 0, ram, slot + AWQE_CMD, AQ_STRIDE - AWQE_CMD);
            } else {
                long from = AQ_STRIDE - AWQE_CMD + (long) AQ_STRIDE * (s - 1);
                MemorySegment.copy(cmd, from, ram, slot, AQ_STRIDE);
            }
        }
        aqProd = (first + slots) & mask;
        drv.client().regionWriteLong(IonicDriverModel.BAR2, dbPage + aqQtype * 8L, 8, doorbell(aqId, 0, aqProd));
        adminCommands++;
        long cqe = off(acqRing + (long) CQE_SIZE * acqCons);
        for (int tries = 0; !colorIs(ram, cqe, acqColor); tries++) {
            if (tries == 200) {
                throw new IOException("admin command " + op + ": no completion");
            }
            drv.sync();
        }
        int qtf = be32(ram, cqe + CQE_QID_TYPE_FLAGS_BE);
        int cmdIdx = be16(ram, cqe + CQE_ADMIN_CMD_IDX_BE);
        int status = (qtf & CQE_ERROR) != 0 ? be32(ram, cqe + CQE_STATUS_LENGTH_BE) : 0;
        acqCons = (acqCons + 1) & ((1 << ACQ_DEPTH_LOG2) - 1);
        if (acqCons == 0) {
            acqColor = !acqColor;
        }
        if (++acqCredit == 64) { // give the admin CQ's slots back now and then, as the driver does
            acqCredit = 0;
            drv.doorbellPosted(dbPage + cqQtype * 8L, doorbell(acqId, 0, acqCons));
        }
        if ((qtf >>> CQE_TYPE_SHIFT & 7) != CQE_TYPE_ADMIN || qtf >>> CQE_QID_SHIFT != aqId || cmdIdx != first) {
            throw new IOException("admin CQE for op " + op + " names type " + (qtf >>> CQE_TYPE_SHIFT & 7) + " aq "
                    + (qtf >>> CQE_QID_SHIFT) + " slot " + cmdIdx + ", expected slot " + first);
        }
        return status;
    }

    private void adminOk(int op, int len, String what) throws IOException {
        int st = admin(op, len);
        if (st != ASTS_OK) {
            throw new AdminException(what, st);
        }
    }

    private static boolean colorIs(MemorySegment ram, long cqe, boolean color) {
        return ((be32(ram, cqe + CQE_QID_TYPE_FLAGS_BE) & CQE_COLOR) != 0) == color;
    }

    private long off(long iova) {
        return iova - IonicDriverModel.RAM_IOVA;
    }

    // ---- memory ------------------------------------------------------------------------------------------------

    /**
     * Process memory as a user buffer: {@code bytes} in 4 KiB pages of guest RAM at a user virtual address.
     * When {@code scattered}, neighbouring pages are swapped in guest RAM (page 0 lives at physical page 1 and
     * so on), so only a correct page table reaches the right bytes.
     */
    public Buffer buffer(long bytes, boolean scattered) {
        int pages = (int) ((bytes + PAGE - 1) >>> PAGE_SHIFT);
        long base = drv.alloc((long) pages * PAGE);
        return new Buffer(0x7f00_0000_0000L + (base - IonicDriverModel.RAM_IOVA), base, pages, bytes, scattered);
    }

    public final class Buffer {
        public final long va, length;
        final long base;
        final int pages;
        final boolean scattered;

        Buffer(long va, long base, int pages, long length, boolean scattered) {
            this.va = va;
            this.base = base;
            this.pages = pages;
            this.length = length;
            this.scattered = scattered;
        }

        /** Guest address of page {@code p} of the buffer. */
        public long page(int p) {
            int phys = scattered && (p ^ 1) < pages ? p ^ 1 : p;
            return base + (long) phys * PAGE;
        }

        private long ramOffset(long off) {
            return page((int) (off >>> PAGE_SHIFT)) - IonicDriverModel.RAM_IOVA + (off & (PAGE - 1));
        }

        public void put(long off, byte[] bytes) {
            for (int i = 0; i < bytes.length; i++) {
                ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), bytes[i]);
            }
        }

        public byte[] get(long off, int len) {
            byte[] b = new byte[len];
            for (int i = 0; i < len; i++) {
                b[i] = ram.get(ValueLayout.JAVA_BYTE, ramOffset(off + i));
            }
            return b;
        }

        public void fill(long off, long len, byte value) {
            for (long i = 0; i < len; i++) {
                ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), value);
            }
        }

        /** A little-endian u64 (as the CPU stores it; atomics work on these). */
        public long getLong(long off) {
            long v = 0;
            for (int i = 7; i >= 0; i--) {
                v = v << 8 | ram.get(ValueLayout.JAVA_BYTE, ramOffset(off + i)) & 0xff;
            }
            return v;
        }

        public void putLong(long off, long v) {
            for (int i = 0; i < 8; i++) {
                ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), (byte) (v >>> 8 * i));
            }
        }

        /** The whole buffer as one segment; only for a buffer that is not scattered. */
        public MemorySegment segment() {
            if (scattered) {
                throw new IllegalStateException("a scattered buffer is not contiguous");
            }
            return ram.asSlice(base - IonicDriverModel.RAM_IOVA, length);
        }
    }

    public record Mr(int key, long va, long length, int access) {
        public int lkey() {
            return key;
        }

        public int rkey() {
            return key;
        }
    }

    /**
     * Registers {@code [offset, offset + length)} of {@code b} (CREATE_MR): one page gives the direct address
     * (page + offset in page), more give a table of le64 page addresses; 4 KiB pages. lkey = rkey =
     * index << 8 | an 8-bit key.
     */
    public Mr regMr(Buffer b, long offset, long length, int access) throws IOException {
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
        Integer free = freeMrs.poll();
        int index = free != null ? free : nextMr++;
        if (index >= nmrs) {
            throw new IOException("no MR index left (" + nmrs + ")");
        }
        int key = index << 8 | (index * 0x3b + 0x11) & 0xff;
        MemorySegment c = cmd();
        le64(c, CMR_VA, va);
        le64(c, CMR_LENGTH, length);
        le32(c, CMR_PD_ID, 1);
        le32(c, CMR_ID_VER, key);
        le32(c, CMR_TBL_INDEX, -1);
        le32(c, CMR_MAP_COUNT, count);
        le64(c, CMR_DMA_ADDR, dma);
        le16(c, CMR_DBID_FLAGS, access);
        u8(c, CMR_PT_TYPE, 0);
        u8(c, CMR_DIR_SIZE_LOG2, 0);
        u8(c, CMR_PAGE_SIZE_LOG2, PAGE_SHIFT);
        int st = admin(OP_CREATE_MR, LEN_CREATE_MR);
        if (st != ASTS_OK) {
            freeMrs.push(index);
            throw new AdminException("CREATE_MR", st);
        }
        return new Mr(key, va, length, access);
    }

    public void deregMr(Mr mr) throws IOException {
        destroy(OP_DESTROY_MR, mr.key, "DESTROY_MR");
        freeMrs.push(mr.key >>> 8);
    }

    private void destroy(int op, int id, String what) throws IOException {
        le32(cmd(), 0, id);
        adminOk(op, LEN_DESTROY, what);
    }

    // ---- GIDs, header templates, AHs ------------------------------------------------------------------------

    /** A GID from an IP address literal: IPv4 becomes the IPv4-mapped GID ::ffff:a.b.c.d. */
    public static byte[] gid(String ip) {
        try {
            InetAddress a = InetAddress.getByName(ip); // a literal: no lookup
            byte[] g = new byte[16];
            if (a instanceof Inet4Address) {
                g[10] = (byte) 0xff;
                g[11] = (byte) 0xff;
                System.arraycopy(a.getAddress(), 0, g, 12, 4);
            } else if (a instanceof Inet6Address) {
                System.arraycopy(a.getAddress(), 0, g, 0, 16);
            }
            return g;
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ip, e);
        }
    }

    static boolean ipv4Mapped(byte[] g) {
        for (int i = 0; i < 10; i++) {
            if (g[i] != 0) {
                return false;
            }
        }
        return (g[10] & 0xff) == 0xff && (g[11] & 0xff) == 0xff;
    }

    /** Where a QP or AH sends: its MACs and GIDs (IPv4-mapped GIDs give an IPv4 template). */
    public record Path(long smac, long dmac, byte[] sgid, byte[] dgid, int hopLimit, int trafficClass, int udpSport) {
        public static Path of(String sip, String dip) {
            return new Path(0x02_00_00_00_00_01L, 0x02_00_00_00_00_02L, gid(sip), gid(dip), 64, 0, 0xc000);
        }

        public boolean ipv4() {
            return ipv4Mapped(dgid);
        }
    }

    /**
     * Writes the RoCEv2 header template at {@code at} (Ethernet, IPv4 with DF and tot_len 0xffff, or IPv6, then
     * UDP to 4791) as ionic_build_hdr does; returns its length.
     */
    int template(long at, Path p, boolean ecn) {
        long o = off(at);
        ram.asSlice(o, 128).fill((byte) 0);
        for (int i = 0; i < 6; i++) {
            u8(ram, o + i, (int) (p.dmac() >>> 8 * (5 - i)));
            u8(ram, o + 6 + i, (int) (p.smac() >>> 8 * (5 - i)));
        }
        boolean v4 = p.ipv4();
        be16(ram, o + 12, v4 ? 0x0800 : 0x86dd);
        long ip = o + 14, udp;
        int tc = p.trafficClass() | (ecn ? 2 : 0);
        if (v4) {
            u8(ram, ip, 0x45);
            u8(ram, ip + 1, tc);
            be16(ram, ip + 2, 0xffff);
            be16(ram, ip + 6, 0x4000);
            u8(ram, ip + 8, p.hopLimit());
            u8(ram, ip + 9, 17);
            MemorySegment.copy(p.sgid(), 12, ram, ValueLayout.JAVA_BYTE, ip + 12, 4);
            MemorySegment.copy(p.dgid(), 12, ram, ValueLayout.JAVA_BYTE, ip + 16, 4);
            udp = ip + 20;
        } else {
            be32(ram, ip, 6 << 28 | (tc & 0xff) << 20);
            u8(ram, ip + 6, 17);
            u8(ram, ip + 7, p.hopLimit());
            MemorySegment.copy(p.sgid(), 0, ram, ValueLayout.JAVA_BYTE, ip + 8, 16);
            MemorySegment.copy(p.dgid(), 0, ram, ValueLayout.JAVA_BYTE, ip + 24, 16);
            udp = ip + 40;
        }
        be16(ram, udp, p.udpSport());
        be16(ram, udp + 2, ROCE_UDP_PORT);
        return (int) (udp + 8 - o);
    }

    public record Ah(int id, Path path) {}

    public Ah createAh(Path p) throws IOException {
        int id = nextAh++;
        int len = template(scratch, p, false);
        MemorySegment c = cmd();
        le64(c, CAH_DMA_ADDR, scratch);
        le32(c, CAH_LENGTH, len);
        le32(c, CAH_PD_ID, 1);
        le32(c, CAH_ID_VER, id);
        le16(c, CAH_DBID_FLAGS, 0);
        u8(c, CAH_CSUM_PROFILE, p.ipv4() ? 0 : 2);
        adminOk(OP_CREATE_AH, LEN_CREATE_AH, "CREATE_AH");
        return new Ah(id, p);
    }

    public void destroyAh(Ah ah) throws IOException {
        destroy(OP_DESTROY_AH, ah.id, "DESTROY_AH");
    }

    // ---- CQs ---------------------------------------------------------------------------------------------------

    public final class Cq {
        public final int id;
        final int eq, depthLog2, mask;
        final long ring;
        int cons, armSeq;
        boolean color = true, event;
        /** A QP whose queue the device flushed: its outstanding WQEs are reported one by one. */
        Qp flushing;
        boolean flushingSq;

        Cq(int id, int eq, int depthLog2, long ring) {
            this.id = id;
            this.eq = eq;
            this.depthLog2 = depthLog2;
            this.mask = (1 << depthLog2) - 1;
            this.ring = ring;
        }

        /** Polls one completion into {@code wc}; false when there is none. */
        public boolean poll(Wc wc) {
            return RdmaVerbs.this.poll(this, wc);
        }

        /** Returns the slots read so far (ring 0) and arms for the next completion (ring 1) or solicited one (2). */
        public void arm(boolean solicitedOnly) {
            drv.doorbellPosted(dbPage + cqQtype * 8L, doorbell(id, 0, cons));
            drv.doorbellPosted(dbPage + cqQtype * 8L, doorbell(id, solicitedOnly ? 2 : 1, armSeq++));
        }

        /** Waits up to {@code millis} for this CQ's event (EQE in its EQ, MSI-X eventfd). */
        public boolean awaitEvent(int millis) throws IOException {
            return RdmaVerbs.this.awaitEvent(this, millis);
        }
    }

    public Cq createCq(int depthLog2) throws IOException {
        int id = nextCq++;
        long ring = drv.alloc((long) CQE_SIZE << depthLog2);
        int eq = pickEq();
        MemorySegment c = cmd();
        le32(c, CCQ_EQ_ID, eqBase + eq);
        u8(c, CCQ_DEPTH_LOG2, depthLog2);
        u8(c, CCQ_STRIDE_LOG2, CQE_STRIDE_LOG2);
        u8(c, CCQ_PAGE_SIZE_LOG2, 0);
        le32(c, CCQ_ID_VER, id);
        le32(c, CCQ_TBL_INDEX, -1);
        le32(c, CCQ_MAP_COUNT, 1);
        le64(c, CCQ_DMA_ADDR, ring);
        adminOk(OP_CREATE_CQ, LEN_CREATE_CQ, "CREATE_CQ");
        Cq cq = new Cq(id, eq, depthLog2, ring);
        cqs[id] = cq;
        return cq;
    }

    public void destroyCq(Cq cq) throws IOException {
        destroy(OP_DESTROY_CQ, cq.id, "DESTROY_CQ");
        cqs[cq.id] = null;
    }

    // ---- QPs ---------------------------------------------------------------------------------------------------

    public final class Qp {
        public final int id, type;
        public final Cq sendCq, recvCq;
        final long sqRing, rqRing;
        final int sqStrideLog2, rqStrideLog2, sqMask, rqMask;
        int sqProd, sqCons, rqProd, rqCons, state, ahId = -1;
        /** Remote-op sequence numbers (what the MSN counts). */
        int nextSeq;
        final long[] sqWrId, rqWrId;
        final int[] sqOp, sqLen, sqSeq;
        final boolean[] sqSignaled;

        Qp(int id, int type, Cq sendCq, Cq recvCq, long sqRing, int sqDepthLog2, int sqStrideLog2, long rqRing,
           int rqDepthLog2, int rqStrideLog2) {
            this.id = id;
            this.type = type;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
            this.sqRing = sqRing;
            this.rqRing = rqRing;
            this.sqStrideLog2 = sqStrideLog2;
            this.rqStrideLog2 = rqStrideLog2;
            this.sqMask = (1 << sqDepthLog2) - 1;
            this.rqMask = (1 << rqDepthLog2) - 1;
            sqWrId = new long[1 << sqDepthLog2];
            sqOp = new int[1 << sqDepthLog2];
            sqLen = new int[1 << sqDepthLog2];
            sqSeq = new int[1 << sqDepthLog2];
            sqSignaled = new boolean[1 << sqDepthLog2];
            rqWrId = new long[1 << rqDepthLog2];
        }

        public int state() {
            return state;
        }

        /** Send WQEs posted and not yet completed. */
        public int sqOutstanding() {
            return (sqProd - sqCons) & sqMask;
        }

        public int rqOutstanding() {
            return (rqProd - rqCons) & rqMask;
        }

        public int maxInline() {
            return (1 << sqStrideLog2) - WQE_PLD;
        }

        public int maxSge() {
            return Math.min(((1 << sqStrideLog2) - WQE_PLD) / SGE_SIZE, 8);
        }
    }

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
        MemorySegment c = cmd();
        le32(c, CQP_PD_ID, 1);
        be32(c, CQP_PRIV_FLAGS_BE, privFlags);
        le32(c, CQP_SQ_CQ_ID, sendCq.id);
        u8(c, CQP_SQ_DEPTH_LOG2, sqDepthLog2);
        u8(c, CQP_SQ_STRIDE_LOG2, strideLog2);
        u8(c, CQP_SQ_PAGE_SIZE_LOG2, 0);
        le32(c, CQP_SQ_TBL_INDEX, -1);
        le32(c, CQP_SQ_MAP_COUNT, 1);
        le64(c, CQP_SQ_DMA_ADDR, sq);
        le32(c, CQP_RQ_CQ_ID, recvCq.id);
        u8(c, CQP_RQ_DEPTH_LOG2, rqDepthLog2);
        u8(c, CQP_RQ_STRIDE_LOG2, strideLog2);
        u8(c, CQP_RQ_PAGE_SIZE_LOG2, 0);
        le32(c, CQP_RQ_TBL_INDEX, -1);
        le32(c, CQP_RQ_MAP_COUNT, 1);
        le64(c, CQP_RQ_DMA_ADDR, rq);
        le32(c, CQP_ID_VER, id);
        le16(c, CQP_DBID_FLAGS, 0);
        u8(c, CQP_TYPE_STATE, type);
        adminOk(OP_CREATE_QP, LEN_CREATE_QP, "CREATE_QP");
        Qp qp = new Qp(id, type, sendCq, recvCq, sq, sqDepthLog2, strideLog2, rq, rqDepthLog2, strideLog2);
        qps[id] = qp;
        return qp;
    }

    public void destroyQp(Qp qp) throws IOException {
        destroy(OP_DESTROY_QP, qp.id, "DESTROY_QP");
        qps[qp.id] = null;
    }

    /** The attributes of one MODIFY_QP; only those named in {@code mask} count. */
    public static final class QpAttr {
        public int mask, state, accessFlags, qkey, destQpn, rqPsn, sqPsn, pmtuLog2 = 12, retry = 7, rnrRetry = 7,
                rnrTimer = 12, timeout = 14, rsqDepth = 16, rrqDepth = 16;
        public Path path;
    }

    /** MODIFY_QP (every field filled, attr_mask saying which count); a path goes in as the header template. */
    public void modify(Qp qp, QpAttr a) throws IOException {
        MemorySegment c = cmd();
        int ahLen = 0;
        if ((a.mask & IB_QP_AV) != 0) {
            if (qp.ahId < 0) {
                qp.ahId = nextAh++; // each connected QP takes an AH id for its address vector
            }
            ahLen = qp.ahId | template(scratch, a.path, true) << 24;
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
        adminOk(OP_MODIFY_QP, LEN_MODIFY_QP, "MODIFY_QP");
        if ((a.mask & IB_QP_STATE) != 0) {
            if (a.state == RESET) {
                qp.sqProd = qp.sqCons = qp.rqProd = qp.rqCons = qp.nextSeq = 0;
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

    /** What QUERY_QP reports. */
    public record QpInfo(int state, int pmtu, int destQpnOrQkey, int accessFlags, int rqPsn, int sqPsn,
                         byte[] header) {}

    public QpInfo query(Qp qp) throws IOException {
        long hdr = scratch, sq = scratch + 256, rq = scratch + 512;
        ram.asSlice(off(scratch), 1024).fill((byte) 0);
        MemorySegment c = cmd();
        le64(c, QQP_HDR_DMA, hdr);
        le64(c, QQP_SQ_DMA, sq);
        le64(c, QQP_RQ_DMA, rq);
        le32(c, QQP_AH_ID, Math.max(qp.ahId, 0));
        le32(c, QQP_ID_VER, qp.id);
        adminOk(OP_QUERY_QP, LEN_QUERY_QP, "QUERY_QP");
        int sp = u8(ram, off(rq) + QRQ_STATE_PMTU);
        return new QpInfo(sp >>> 4, sp & 0xf, be32(ram, off(sq) + QSQ_QKEY_DEST_QPN_BE),
                be16(ram, off(sq) + QSQ_ACCESS_PERMS_BE), be32(ram, off(sq) + QSQ_RQ_PSN_BE),
                be32(ram, off(rq) + QRQ_SQ_PSN_BE), ram.asSlice(off(hdr), 128).toArray(ValueLayout.JAVA_BYTE));
    }

    // ---- posting -------------------------------------------------------------------------------------------

    /** A send work request, reused by the caller from one post to the next. */
    public static final class SendWr {
        public long wrId;
        public int opcode;
        public boolean signaled = true, solicited, fence;
        public int imm;
        public long remoteVa;
        public int rkey;
        public int numSge;
        public final long[] sgeVa = new long[8];
        public final int[] sgeLen = new int[8], sgeLkey = new int[8];
        /** Inline payload (copied into the WQE) when not null. */
        public MemorySegment inline;
        public Ah ah;
        public int destQpn, qkey;
        public long compare, swapAdd;

        public SendWr reset() {
            wrId = 0;
            opcode = SEND;
            signaled = true;
            solicited = fence = false;
            imm = 0;
            remoteVa = 0;
            rkey = 0;
            numSge = 0;
            inline = null;
            ah = null;
            destQpn = qkey = 0;
            compare = swapAdd = 0;
            return this;
        }

        public SendWr sge(long va, int len, int lkey) {
            sgeVa[numSge] = va;
            sgeLen[numSge] = len;
            sgeLkey[numSge] = lkey;
            numSge++;
            return this;
        }
    }

    /** Writes the WQE and rings the SQ doorbell. */
    public void postSend(Qp qp, SendWr wr) {
        postSend(qp, wr, true);
    }

    /**
     * Writes one send WQE (struct ionic_v1_wqe) at the SQ producer index; rings the doorbell (a posted 8-byte
     * store) when {@code ring}, else leaves that to {@link #ringSq}.
     */
    public void postSend(Qp qp, SendWr wr, boolean ring) {
        int idx = qp.sqProd;
        if (((idx + 1) & qp.sqMask) == qp.sqCons) {
            throw new IllegalStateException("QP " + qp.id + " send queue full");
        }
        int stride = 1 << qp.sqStrideLog2;
        long w = off(qp.sqRing) + ((long) idx << qp.sqStrideLog2);
        zero(w, stride);
        le64(ram, w + WQE_ID, idx);
        u8(ram, w + WQE_OP, wr.opcode);
        int flags = (wr.signaled ? WQE_FLAG_SIG : 0) | (wr.solicited ? WQE_FLAG_SOL : 0) | (wr.fence ? WQE_FLAG_FENCE : 0);
        long length = 0;
        boolean atomic = wr.opcode == ATOMIC_CS || wr.opcode == ATOMIC_FA;
        if (atomic) {
            u8(ram, w + WQE_NUM_SGE_KEY, 1);
            be32(ram, w + WQE_RDMA_VA_HIGH_BE, (int) (wr.remoteVa >>> 32));
            be32(ram, w + WQE_RDMA_VA_LOW_BE, (int) wr.remoteVa);
            be32(ram, w + WQE_RDMA_RKEY_BE, wr.rkey);
            be32(ram, w + WQE_ATOMIC_SWAP_ADD_HIGH_BE, (int) (wr.swapAdd >>> 32));
            be32(ram, w + WQE_ATOMIC_SWAP_ADD_LOW_BE, (int) wr.swapAdd);
            be32(ram, w + WQE_ATOMIC_COMPARE_HIGH_BE, (int) (wr.compare >>> 32));
            be32(ram, w + WQE_ATOMIC_COMPARE_LOW_BE, (int) wr.compare);
            be64(ram, w + WQE_ATOMIC_SGE + SGE_VA_BE, wr.sgeVa[0]);
            be32(ram, w + WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
            be32(ram, w + WQE_ATOMIC_SGE + SGE_LKEY_BE, wr.sgeLkey[0]);
            length = 8;
        } else {
            if (wr.inline != null) {
                length = wr.inline.byteSize();
                if (length > stride - WQE_PLD) {
                    throw new IllegalArgumentException("inline data of " + length + " bytes > " + (stride - WQE_PLD));
                }
                flags |= WQE_FLAG_INL;
                MemorySegment.copy(wr.inline, 0, ram, w + WQE_PLD, length);
            } else {
                if (wr.numSge > (stride - WQE_PLD) / SGE_SIZE) {
                    throw new IllegalArgumentException(wr.numSge + " SGEs do not fit a " + stride + "-byte WQE");
                }
                u8(ram, w + WQE_NUM_SGE_KEY, wr.numSge);
                for (int i = 0; i < wr.numSge; i++) {
                    long s = w + WQE_PLD + (long) i * SGE_SIZE;
                    be64(ram, s + SGE_VA_BE, wr.sgeVa[i]);
                    be32(ram, s + SGE_LEN_BE, wr.sgeLen[i]);
                    be32(ram, s + SGE_LKEY_BE, wr.sgeLkey[i]);
                    length += Integer.toUnsignedLong(wr.sgeLen[i]);
                }
            }
            if (qp.type == UD) {
                be32(ram, w + WQE_UD_AH_ID_BE, wr.ah == null ? 0 : wr.ah.id());
                be32(ram, w + WQE_UD_DEST_QPN_BE, wr.destQpn);
                be32(ram, w + WQE_UD_DEST_QKEY_BE, wr.qkey);
            } else {
                be32(ram, w + WQE_RDMA_VA_HIGH_BE, (int) (wr.remoteVa >>> 32));
                be32(ram, w + WQE_RDMA_VA_LOW_BE, (int) wr.remoteVa);
                be32(ram, w + WQE_RDMA_RKEY_BE, wr.rkey);
            }
            be32(ram, w + WQE_LENGTH_BE, (int) length);
        }
        if (wr.opcode == SEND_IMM || wr.opcode == WRITE_IMM || wr.opcode == SEND_INV) {
            be32(ram, w + WQE_IMM_DATA_KEY_BE, wr.imm);
        }
        be16(ram, w + WQE_FLAGS_BE, flags);
        qp.sqWrId[idx] = wr.wrId;
        qp.sqOp[idx] = wr.opcode;
        qp.sqLen[idx] = (int) length;
        qp.sqSignaled[idx] = wr.signaled;
        qp.sqSeq[idx] = qp.type == RC && wr.opcode <= ATOMIC_FA ? qp.nextSeq++ : -1;
        qp.sqProd = (idx + 1) & qp.sqMask;
        if (ring) {
            ringSq(qp);
        }
    }

    /** Zeroes a WQE slot in place (8 bytes at a time: no slice object per WQE). */
    private void zero(long at, int bytes) {
        for (int o = 0; o < bytes; o += 8) {
            ram.set(ValueLayout.JAVA_LONG_UNALIGNED, at + o, 0L);
        }
    }

    public void ringSq(Qp qp) {
        drv.doorbellPosted(dbPage + sqQtype * 8L, doorbell(qp.id, 0, qp.sqProd));
    }

    /** A receive with one SGE. */
    public void postRecv(Qp qp, long wrId, long va, int len, int lkey) {
        int idx = beginRecv(qp, wrId, 1, len);
        long s = off(qp.rqRing) + ((long) idx << qp.rqStrideLog2) + WQE_PLD;
        be64(ram, s + SGE_VA_BE, va);
        be32(ram, s + SGE_LEN_BE, len);
        be32(ram, s + SGE_LKEY_BE, lkey);
        endRecv(qp);
    }

    /** A receive with the SGEs of {@code wr} (its wrId and SGE list; the rest is ignored). */
    public void postRecv(Qp qp, SendWr wr) {
        long total = 0;
        for (int i = 0; i < wr.numSge; i++) {
            total += Integer.toUnsignedLong(wr.sgeLen[i]);
        }
        if (wr.numSge > ((1 << qp.rqStrideLog2) - WQE_PLD) / SGE_SIZE) {
            throw new IllegalArgumentException(wr.numSge + " SGEs do not fit the RQ stride");
        }
        int idx = beginRecv(qp, wr.wrId, wr.numSge, (int) total);
        long w = off(qp.rqRing) + ((long) idx << qp.rqStrideLog2);
        for (int i = 0; i < wr.numSge; i++) {
            long s = w + WQE_PLD + (long) i * SGE_SIZE;
            be64(ram, s + SGE_VA_BE, wr.sgeVa[i]);
            be32(ram, s + SGE_LEN_BE, wr.sgeLen[i]);
            be32(ram, s + SGE_LKEY_BE, wr.sgeLkey[i]);
        }
        endRecv(qp);
    }

    /** RECV WQE header: wqe_id = ring index (as libionic), num_sge, imm_data_key = total length. */
    private int beginRecv(Qp qp, long wrId, int numSge, int total) {
        int idx = qp.rqProd;
        if (((idx + 1) & qp.rqMask) == qp.rqCons) {
            throw new IllegalStateException("QP " + qp.id + " receive queue full");
        }
        long w = off(qp.rqRing) + ((long) idx << qp.rqStrideLog2);
        zero(w, 1 << qp.rqStrideLog2);
        le64(ram, w + WQE_ID, idx);
        u8(ram, w + WQE_NUM_SGE_KEY, numSge);
        be32(ram, w + WQE_IMM_DATA_KEY_BE, total);
        qp.rqWrId[idx] = wrId;
        return idx;
    }

    private void endRecv(Qp qp) {
        qp.rqProd = (qp.rqProd + 1) & qp.rqMask;
        drv.doorbellPosted(dbPage + rqQtype * 8L, doorbell(qp.id, 0, qp.rqProd));
    }

    // ---- completions ---------------------------------------------------------------------------------------

    /** A work completion, reused by the caller. */
    public static final class Wc {
        public long wrId;
        public int status, opcode, qpNum, srcQp, byteLen, imm, vendorErr;
        /** A SEND_INV arrived: {@link #imm} holds the rkey it invalidated. */
        public boolean withImm, withInv, ipv4, vlan;
        public long srcMac;
        public int vlanTag;

        public boolean ok() {
            return status == STS_OK;
        }

        @Override
        public String toString() {
            return "Wc[wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", qp=" + qpNum + ", src="
                    + srcQp + ", len=" + byteLen + ", imm=" + Integer.toHexString(imm) + "]";
        }
    }

    private static int wcOpcode(int sendOp) {
        return switch (sendOp) {
            case WRITE, WRITE_IMM -> WC_RDMA_WRITE;
            case READ -> WC_RDMA_READ;
            case ATOMIC_CS -> WC_COMP_SWAP;
            case ATOMIC_FA -> WC_FETCH_ADD;
            default -> WC_SEND;
        };
    }

    boolean poll(Cq cq, Wc wc) {
        for (;;) {
            if (cq.flushing != null && flushOne(cq, wc)) {
                return true;
            }
            long e = off(cq.ring) + ((long) cq.cons << CQE_STRIDE_LOG2);
            int qtf = be32(ram, e + CQE_QID_TYPE_FLAGS_BE);
            if (((qtf & CQE_COLOR) != 0) != cq.color) {
                return false;
            }
            cq.cons = (cq.cons + 1) & cq.mask;
            if (cq.cons == 0) {
                cq.color = !cq.color;
            }
            int qid = qtf >>> CQE_QID_SHIFT, type = qtf >>> CQE_TYPE_SHIFT & 7;
            boolean error = (qtf & CQE_ERROR) != 0;
            int statusLength = be32(ram, e + CQE_STATUS_LENGTH_BE);
            Qp qp = qid < qps.length ? qps[qid] : null;
            if (qp == null) {
                throw new IllegalStateException("CQE on CQ " + cq.id + " for unknown QP " + qid);
            }
            wc.qpNum = qid;
            wc.status = error ? statusLength : STS_OK;
            wc.vendorErr = error ? statusLength : 0;
            wc.withImm = wc.withInv = wc.ipv4 = wc.vlan = false;
            wc.imm = wc.srcQp = wc.byteLen = wc.vlanTag = 0;
            wc.srcMac = 0;
            switch (type) {
                case CQE_TYPE_RECV -> {
                    if (error && statusLength == STS_WQE_FLUSHED_ERR) {
                        cq.flushing = qp;
                        cq.flushingSq = false;
                        continue;
                    }
                    long idx = le64(ram, e + CQE_RECV_WQE_ID);
                    if (idx != qp.rqCons) {
                        throw new IllegalStateException("QP " + qid + " receive CQE names WQE " + idx + ", expected "
                                + qp.rqCons);
                    }
                    qp.rqCons = (qp.rqCons + 1) & qp.rqMask;
                    int srcQpnOp = be32(ram, e + CQE_RECV_SRC_QPN_OP_BE);
                    int op = srcQpnOp >>> CQE_RECV_OP_SHIFT & 0x1f;
                    wc.wrId = qp.rqWrId[(int) idx];
                    wc.opcode = op == 3 ? WC_RECV_RDMA_WITH_IMM : WC_RECV;
                    wc.withImm = op == 2 || op == 3;
                    wc.withInv = op == 1;
                    wc.imm = be32(ram, e + CQE_RECV_IMM_DATA_RKEY_BE);
                    wc.srcQp = srcQpnOp & 0xff_ffff;
                    wc.ipv4 = (srcQpnOp & CQE_RECV_IS_IPV4) != 0;
                    wc.vlan = (srcQpnOp & CQE_RECV_IS_VLAN) != 0;
                    wc.vlanTag = be16(ram, e + CQE_RECV_VLAN_TAG_BE);
                    for (int i = 0; i < 6; i++) {
                        wc.srcMac = wc.srcMac << 8 | u8(ram, e + CQE_RECV_SRC_MAC + i);
                    }
                    wc.byteLen = error ? 0 : statusLength;
                    return true;
                }
                case CQE_TYPE_SEND_MSN -> {
                    int msn = be32(ram, e + CQE_SEND_MSN_BE);
                    // Every remote WQE with seq < msn is done; the CQE speaks for seq msn - 1.
                    int last = -1;
                    while (qp.sqCons != qp.sqProd && qp.sqSeq[qp.sqCons] >= 0 && qp.sqSeq[qp.sqCons] - msn < 0) {
                        last = qp.sqCons;
                        qp.sqCons = (qp.sqCons + 1) & qp.sqMask;
                    }
                    if (last < 0 || qp.sqSeq[last] != msn - 1) {
                        throw new IllegalStateException("QP " + qid + ": bad msn " + msn);
                    }
                    if (qp.sqSignaled[last] || error) {
                        fillSend(qp, last, wc);
                        return true;
                    }
                }
                case CQE_TYPE_SEND_NPG -> {
                    if (error && statusLength == STS_WQE_FLUSHED_ERR) {
                        cq.flushing = qp;
                        cq.flushingSq = true;
                        continue;
                    }
                    int idx = (int) le64(ram, e + CQE_SEND_NPG_WQE_ID) & qp.sqMask;
                    if (idx != qp.sqCons) {
                        throw new IllegalStateException("QP " + qid + " send CQE names WQE " + idx + ", expected "
                                + qp.sqCons);
                    }
                    qp.sqCons = (idx + 1) & qp.sqMask;
                    if (qp.sqSignaled[idx] || error) {
                        fillSend(qp, idx, wc);
                        return true;
                    }
                }
                default -> throw new IllegalStateException("unexpected CQE type " + type + " on CQ " + cq.id);
            }
        }
    }

    private static void fillSend(Qp qp, int idx, Wc wc) {
        wc.wrId = qp.sqWrId[idx];
        wc.opcode = wcOpcode(qp.sqOp[idx]);
        wc.byteLen = qp.sqLen[idx];
        wc.srcQp = qp.id;
    }

    /** The next outstanding WQE of a flushed queue, reported with WR_FLUSH_ERR. */
    private boolean flushOne(Cq cq, Wc wc) {
        Qp qp = cq.flushing;
        wc.qpNum = qp.id;
        wc.status = wc.vendorErr = STS_WQE_FLUSHED_ERR;
        wc.byteLen = wc.imm = wc.srcQp = 0;
        wc.withImm = wc.withInv = false;
        if (cq.flushingSq && qp.sqCons != qp.sqProd) {
            fillSend(qp, qp.sqCons, wc);
            wc.byteLen = 0;
            qp.sqCons = (qp.sqCons + 1) & qp.sqMask;
            return true;
        }
        if (!cq.flushingSq && qp.rqCons != qp.rqProd) {
            wc.wrId = qp.rqWrId[qp.rqCons];
            wc.opcode = WC_RECV;
            qp.rqCons = (qp.rqCons + 1) & qp.rqMask;
            return true;
        }
        cq.flushing = null;
        return false;
    }

    /**
     * Waits for the event of {@code cq}: reads new EQEs of its EQ (color bit, BE32 {qid, code, type}), and when
     * there are none sleeps on the EQ's MSI-X eventfd, then gives the interrupt back (credits with UNMASK) as the
     * EQ handler does.
     */
    boolean awaitEvent(Cq cq, int millis) throws IOException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        for (;;) {
            drainEq(cq.eq);
            if (cq.event) {
                cq.event = false;
                return true;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            if (drv.awaitInterrupt(eqIntr[cq.eq], (int) Math.min(left, 100)) > 0) {
                drainEq(cq.eq);
                drv.intrUnmask(eqIntr[cq.eq]);
            }
        }
    }

    private void drainEq(int eq) {
        for (;;) {
            long at = off(eqRing[eq]) + (long) EQE_SIZE * eqCons[eq];
            int evt = be32(ram, at);
            if (((evt & EQE_COLOR) != 0) != eqColor[eq]) {
                return;
            }
            eqCons[eq] = (eqCons[eq] + 1) & ((1 << EQ_DEPTH_LOG2) - 1);
            if (eqCons[eq] == 0) {
                eqColor[eq] = !eqColor[eq];
            }
            int qid = evt >>> EQE_QID_SHIFT;
            if ((evt >>> EQE_TYPE_SHIFT & 7) == EQE_TYPE_CQ && qid < cqs.length && cqs[qid] != null) {
                cqs[qid].event = true;
            }
        }
    }

    /**
     * Polls {@code cq} until one completion arrives or {@code millis} pass. The device writes CQEs into the
     * shared memory, so this spins on the CQE's color; after a short spin it yields the CPU and then sleeps in
     * 10 µs steps, so that on a busy machine the device thread gets the core it needs to make progress.
     */
    public boolean pollWait(Cq cq, Wc wc, int millis) {
        long start = System.nanoTime(), deadline = start + millis * 1_000_000L;
        for (int spins = 0; ; spins++) {
            if (poll(cq, wc)) {
                return true;
            }
            if (spins < 200) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            if (now > deadline) {
                return false;
            }
            if (now - start < 50_000) {
                Thread.yield();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000);
            }
        }
    }
}
