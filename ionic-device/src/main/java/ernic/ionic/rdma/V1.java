package ernic.ionic.rdma;

import ernic.ionic.layout.Struct;

import static ernic.common.Endian.BE;

/**
 * The RDMA "fw abi v1" structures of ionic_fw.h and the RDMA queue device command of ionic_if.h,
 * as flyweights and named constants. The admin commands' layouts are in {@link AdminWqe}.
 */
public final class V1 {
    private V1() {}

    /** enum ionic_v1_admin_op. */
    public static final int ADMIN_NOOP = 0, ADMIN_CREATE_CQ = 1, ADMIN_CREATE_QP = 2, ADMIN_CREATE_MR = 3,
            ADMIN_STATS_HDRS = 4, ADMIN_STATS_VALS = 5, ADMIN_DESTROY_MR = 6, ADMIN_RSVD_7 = 7,
            ADMIN_DESTROY_CQ = 8, ADMIN_MODIFY_QP = 9, ADMIN_QUERY_QP = 10, ADMIN_DESTROY_QP = 11,
            ADMIN_DEBUG = 12, ADMIN_CREATE_AH = 13, ADMIN_QUERY_AH = 14, ADMIN_MODIFY_DCQCN = 15,
            ADMIN_DESTROY_AH = 16, ADMIN_QP_STATS_HDRS = 17, ADMIN_QP_STATS_VALS = 18, ADMIN_OPCODES_MAX = 19;

    /** enum ionic_v1_admin_status. */
    public static final int ASTS_OK = 0, ASTS_BAD_CMD = 1, ASTS_BAD_INDEX = 2, ASTS_BAD_STATE = 3,
            ASTS_BAD_TYPE = 4, ASTS_BAD_ATTR = 5, ASTS_MSG_TOO_BIG = 6;

    /** enum ionic_status (CQE status when the error bit is set). */
    public static final int STS_OK = 0, STS_LOCAL_LEN_ERR = 1, STS_LOCAL_QP_OPER_ERR = 2, STS_LOCAL_PROT_ERR = 3,
            STS_WQE_FLUSHED_ERR = 4, STS_MEM_MGMT_OPER_ERR = 5, STS_BAD_RESP_ERR = 6, STS_LOCAL_ACC_ERR = 7,
            STS_REMOTE_INV_REQ_ERR = 8, STS_REMOTE_ACC_ERR = 9, STS_REMOTE_OPER_ERR = 10, STS_RETRY_EXCEEDED = 11,
            STS_RNR_RETRY_EXCEEDED = 12;

    /** enum ionic_qp_type. */
    public static final int QPT_RC = 0, QPT_UC = 1, QPT_RD = 2, QPT_UD = 3;
    /** enum ionic_qp_state. */
    public static final int QPS_RESET = 0, QPS_INIT = 1, QPS_RTR = 2, QPS_RTS = 3, QPS_SQD = 4, QPS_SQE = 5,
            QPS_ERR = 6;
    /** enum ionic_qp_flags. */
    public static final int QPF_REMOTE_WRITE = 1, QPF_REMOTE_READ = 2, QPF_REMOTE_ATOMIC = 4,
            QPF_SQ_SPEC = 1 << 8, QPF_RQ_SPEC = 1 << 9, QPF_PRIVILEGED = 1 << 15;
    /** enum ionic_mr_flags. */
    public static final int MRF_LOCAL_WRITE = 1, MRF_REMOTE_WRITE = 2, MRF_REMOTE_READ = 4, MRF_REMOTE_ATOMIC = 8,
            MRF_MW_BIND = 0x10, MRF_ZERO_BASED = 0x20, MRF_ACCESS_MASK = (1 << 12) - 1,
            MRF_UKEY_EN = 1 << 13, MRF_IS_MW = 1 << 14, MRF_INV_EN = 1 << 15;

    /** IB_QP_* attr_mask bits (ib_verbs.h) that MODIFY_QP honours. */
    public static final int IB_QP_STATE = 1, IB_QP_CUR_STATE = 1 << 1, IB_QP_ACCESS_FLAGS = 1 << 3,
            IB_QP_PKEY_INDEX = 1 << 4, IB_QP_QKEY = 1 << 6, IB_QP_AV = 1 << 7, IB_QP_PATH_MTU = 1 << 8,
            IB_QP_TIMEOUT = 1 << 9, IB_QP_RETRY_CNT = 1 << 10, IB_QP_RNR_RETRY = 1 << 11, IB_QP_RQ_PSN = 1 << 12,
            IB_QP_MAX_QP_RD_ATOMIC = 1 << 13, IB_QP_MIN_RNR_TIMER = 1 << 15, IB_QP_SQ_PSN = 1 << 16,
            IB_QP_MAX_DEST_RD_ATOMIC = 1 << 17, IB_QP_DEST_QPN = 1 << 20;

    /** struct ionic_rdma_queue_cmd (devcmds 51..53) and ionic_rdma_reset_cmd (50). */
    public static final class QueueCmd extends Struct<QueueCmd> {
        static final int LIF_INDEX = 2;   // __le16 lif_index
        static final int QID_VER = 4;     // __le32 qid_ver (qid | version << 24)
        static final int CID = 8;         // __le32 cid: intr (EQ), eq id (CQ), cq id (AQ)
        static final int DBID = 12;       // __le16 dbid
        static final int DEPTH_LOG2 = 14; // u8 depth_log2
        static final int STRIDE_LOG2 = 15; // u8 stride_log2
        static final int DMA_ADDR = 16;   // __le64 dma_addr

        public int lifIndex() { return u16(LIF_INDEX); }
        public int qid() { return u32(QID_VER) & 0xff_ffff; }
        public int cid() { return u32(CID); }
        public int dbid() { return u16(DBID); }
        public int depthLog2() { return u8(DEPTH_LOG2); }
        public int strideLog2() { return u8(STRIDE_LOG2); }
        public long dmaAddr() { return u64(DMA_ADDR); }

        public QueueCmd opcode(int v) { put8(0, v); return this; }
        public QueueCmd lifIndex(int v) { put16(LIF_INDEX, v); return this; }
        public QueueCmd qid(int v) { put32(QID_VER, v); return this; }
        public QueueCmd cid(int v) { put32(CID, v); return this; }
        public QueueCmd depthStride(int depth, int stride) { put8(DEPTH_LOG2, depth); put8(STRIDE_LOG2, stride); return this; }
        public QueueCmd dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
    }

    /** struct ionic_v1_cqe (32 bytes). */
    public static final class Cqe extends Struct<Cqe> {
        public static final int SIZE = 32;
        public static final int TYPE_ADMIN = 0, TYPE_RECV = 1, TYPE_SEND_MSN = 2, TYPE_SEND_NPG = 3;
        public static final int COLOR = 1, ERROR = 2, TYPE_SHIFT = 5, QID_SHIFT = 8;
        public static final int RECV_OP_SEND = 0, RECV_OP_SEND_INV = 1, RECV_OP_SEND_IMM = 2, RECV_OP_RDMA_IMM = 3;
        public static final int RECV_IS_IPV4 = 1 << 31, RECV_IS_VLAN = 1 << 30;
        static final int ADMIN_CMD_IDX = 0;   // admin.cmd_idx __be16
        static final int ADMIN_CMD_OP = 2;    // admin.cmd_op u8
        static final int RECV_WQE_ID = 0;     // recv.wqe_id __u64 (LE)
        static final int RECV_SRC_QPN_OP = 8; // recv.src_qpn_op __be32
        static final int RECV_SRC_MAC = 12;   // recv.src_mac[6]
        static final int RECV_VLAN_TAG = 18;  // recv.vlan_tag __be16
        static final int RECV_IMM_DATA_RKEY = 20; // recv.imm_data_rkey __be32
        static final int SEND_MSG_MSN = 4;    // send.msg_msn __be32
        static final int SEND_NPG_WQE_ID = 16; // send.npg_wqe_id __u64 (LE)
        public static final int STATUS_LENGTH = 24; // __be32 status_length
        public static final int QID_TYPE_FLAGS = 28; // __be32 qid_type_flags (holds the color: written last)

        public Cqe clear() { zero(SIZE); return this; }
        public int cmdIdx() { return BE.u16(seg, base + ADMIN_CMD_IDX); }
        public long wqeId() { return u64(RECV_WQE_ID); }
        public int srcQpnOp() { return BE.u32(seg, base + RECV_SRC_QPN_OP); }
        public int immDataRkey() { return BE.u32(seg, base + RECV_IMM_DATA_RKEY); }
        public int msn() { return BE.u32(seg, base + SEND_MSG_MSN); }
        public long npgWqeId() { return u64(SEND_NPG_WQE_ID); }
        public int statusLength() { return BE.u32(seg, base + STATUS_LENGTH); }
        public int qidTypeFlags() { return BE.u32(seg, base + QID_TYPE_FLAGS); }
        public boolean color() { return (qidTypeFlags() & COLOR) != 0; }
        public boolean error() { return (qidTypeFlags() & ERROR) != 0; }
        public int type() { return qidTypeFlags() >>> TYPE_SHIFT & 7; }
        public int qid() { return qidTypeFlags() >>> QID_SHIFT; }

        public Cqe cmdIdx(int v) { BE.put16(seg, base + ADMIN_CMD_IDX, v); return this; }
        public Cqe cmdOp(int v) { put8(ADMIN_CMD_OP, v); return this; }
        public Cqe wqeId(long v) { put64(RECV_WQE_ID, v); return this; }
        public Cqe srcQpnOp(int v) { BE.put32(seg, base + RECV_SRC_QPN_OP, v); return this; }
        public Cqe immDataRkey(int v) { BE.put32(seg, base + RECV_IMM_DATA_RKEY, v); return this; }
        public Cqe srcMac(long mac) { ernic.ionic.layout.Mac.write(seg, base + RECV_SRC_MAC, mac); return this; }
        public Cqe vlanTag(int v) { BE.put16(seg, base + RECV_VLAN_TAG, v); return this; }
        public Cqe msn(int v) { BE.put32(seg, base + SEND_MSG_MSN, v); return this; }
        public Cqe npgWqeId(long v) { put64(SEND_NPG_WQE_ID, v); return this; }
        public Cqe statusLength(int v) { BE.put32(seg, base + STATUS_LENGTH, v); return this; }
        /** qid, type and error; the color is added when the entry is written. */
        public Cqe qidType(int qid, int type, boolean error) {
            BE.put32(seg, base + QID_TYPE_FLAGS, qid << QID_SHIFT | type << TYPE_SHIFT | (error ? ERROR : 0));
            return this;
        }
        public Cqe color(boolean c) {
            int v = qidTypeFlags();
            BE.put32(seg, base + QID_TYPE_FLAGS, c ? v | COLOR : v & ~COLOR);
            return this;
        }
    }

    /** struct ionic_v1_eqe: one __be32 evt. */
    public static final class Eqe {
        public static final int SIZE = 4;
        public static final int COLOR = 1, TYPE_SHIFT = 1, CODE_SHIFT = 4, QID_SHIFT = 8;
        public static final int TYPE_CQ = 0, TYPE_QP = 1;
        public static final int CQ_NOTIFY = 0, CQ_ERR = 8;

        private Eqe() {}

        public static int encode(int type, int code, int qid, boolean color) {
            return qid << QID_SHIFT | (code & 0xf) << CODE_SHIFT | (type & 7) << TYPE_SHIFT | (color ? COLOR : 0);
        }
    }

    /** struct ionic_v1_wqe: base header and the bodies (BE unless noted). */
    public static final class Wqe extends Struct<Wqe> {
        public static final int MIN_SIZE = 64;
        /** enum ionic_v1_op ({@code base.op}); each opcode's properties are in {@link WqeOpcode}. */
        public static final int OP_SEND = 0, OP_SEND_INV = 1, OP_SEND_IMM = 2, OP_RDMA_READ = 3, OP_RDMA_WRITE = 4,
                OP_RDMA_WRITE_IMM = 5, OP_ATOMIC_CS = 6, OP_ATOMIC_FA = 7, OP_REG_MR = 8, OP_LOCAL_INV = 9,
                OP_BIND_MW = 10;
        public static final int FLAG_FENCE = 1, FLAG_SOL = 2, FLAG_INL = 4, FLAG_SIG = 8;
        public static final int FLAG_SPEC32 = 1 << 12, FLAG_SPEC16 = 2 << 12, SPEC_MASK = 0xf << 12;
        public static final int SGE_SIZE = 16;
        static final int WQE_ID = 0;          // base.wqe_id __u64 (LE)
        static final int OP = 8;              // base.op u8
        static final int NUM_SGE_KEY = 9;     // base.num_sge_key u8
        static final int FLAGS = 10;          // base.flags __be16
        static final int IMM_DATA_KEY = 12;   // base.imm_data_key __be32
        static final int UD_AH_ID = 16;       // common.send.ah_id
        static final int UD_DEST_QPN = 20;    // common.send.dest_qpn
        static final int UD_DEST_QKEY = 24;   // common.send.dest_qkey
        static final int RDMA_VA_HIGH = 16;   // common.rdma.remote_va_high
        static final int RDMA_VA_LOW = 20;    // common.rdma.remote_va_low
        static final int RDMA_RKEY = 24;      // common.rdma.remote_rkey
        static final int LENGTH = 28;         // common.length
        public static final int PLD = 32;     // common.pld / recv.pld
        public static final int SPEC_SGL = 64; // the SGEs after spec32[8] / spec16[16]
        static final int ATOMIC_SWAP_ADD_HIGH = 28, ATOMIC_SWAP_ADD_LOW = 32, ATOMIC_COMPARE_HIGH = 36,
                ATOMIC_COMPARE_LOW = 40, ATOMIC_SGE = 48;

        public long wqeId() { return u64(WQE_ID); }
        public int op() { return u8(OP); }
        public int numSgeKey() { return u8(NUM_SGE_KEY); }
        public int flags() { return BE.u16(seg, base + FLAGS); }
        public int immDataKey() { return BE.u32(seg, base + IMM_DATA_KEY); }
        public int ahId() { return BE.u32(seg, base + UD_AH_ID); }
        public int destQpn() { return BE.u32(seg, base + UD_DEST_QPN); }
        public int destQkey() { return BE.u32(seg, base + UD_DEST_QKEY); }
        public long remoteVa() {
            return (long) BE.u32(seg, base + RDMA_VA_HIGH) << 32 | Integer.toUnsignedLong(BE.u32(seg, base + RDMA_VA_LOW));
        }
        public int rkey() { return BE.u32(seg, base + RDMA_RKEY); }
        public long length() { return Integer.toUnsignedLong(BE.u32(seg, base + LENGTH)); }
        public long swapAdd() {
            return (long) BE.u32(seg, base + ATOMIC_SWAP_ADD_HIGH) << 32
                    | Integer.toUnsignedLong(BE.u32(seg, base + ATOMIC_SWAP_ADD_LOW));
        }
        public long compare() {
            return (long) BE.u32(seg, base + ATOMIC_COMPARE_HIGH) << 32
                    | Integer.toUnsignedLong(BE.u32(seg, base + ATOMIC_COMPARE_LOW));
        }
        // struct ionic_v1_atomic: after compare, rsvd[4], then the local SGE that takes the old value.
        static final int ATOMIC_SGE_VA = ATOMIC_SGE, ATOMIC_SGE_LKEY = ATOMIC_SGE + 12;
        // struct ionic_v1_reg_mr (base.imm_data_key = mr_id, base.num_sge_key = the new key).
        static final int REG_MR_VA = 16;          // va __be64
        static final int REG_MR_LENGTH = 24;      // length __be64
        static final int REG_MR_OFFSET = 32;      // offset __be64
        static final int REG_MR_DMA_ADDR = 40;    // dma_addr __be64: the page list (or the one page)
        static final int REG_MR_MAP_COUNT = 48;   // map_count __be32
        static final int REG_MR_FLAGS = 52;       // flags __be16
        static final int REG_MR_PAGE_SIZE_LOG2 = 55; // page_size_log2 u8

        /** The atomic's local SGE, which takes the value the target held. */
        public long atomicSgeVa() { return BE.u64(seg, base + ATOMIC_SGE_VA); }
        public int atomicSgeLkey() { return BE.u32(seg, base + ATOMIC_SGE_LKEY); }

        public long regMrVa() { return BE.u64(seg, base + REG_MR_VA); }
        public long regMrLength() { return BE.u64(seg, base + REG_MR_LENGTH); }
        public long regMrOffset() { return BE.u64(seg, base + REG_MR_OFFSET); }
        public long regMrPageList() { return BE.u64(seg, base + REG_MR_DMA_ADDR); }
        public int regMrMapCount() { return BE.u32(seg, base + REG_MR_MAP_COUNT); }
        public int regMrFlags() { return BE.u16(seg, base + REG_MR_FLAGS); }
        public int regMrPageShift() { return u8(REG_MR_PAGE_SIZE_LOG2); }

        // struct ionic_v1_bind_mw_bdy (base.imm_data_key = the window's rkey, base.num_sge_key = its new key).
        static final int BIND_MW_VA = 16;         // va __be64
        static final int BIND_MW_LENGTH = 24;     // length __be64
        static final int BIND_MW_LKEY = 32;       // lkey __be32: the MR the window opens
        static final int BIND_MW_FLAGS = 36;      // flags __be16: enum ionic_mr_flags (access, IS_MW, INV_EN)

        public long bindMwVa() { return BE.u64(seg, base + BIND_MW_VA); }
        public long bindMwLength() { return BE.u64(seg, base + BIND_MW_LENGTH); }
        public int bindMwLkey() { return BE.u32(seg, base + BIND_MW_LKEY); }
        public int bindMwFlags() { return BE.u16(seg, base + BIND_MW_FLAGS); }

        /** SGE {@code i} whose list starts at {@code sgl}: va __be64, len __be32, lkey __be32. */
        public long sgeVa(int sgl, int i) { return BE.u64(seg, base + sgl + (long) i * SGE_SIZE); }
        public long sgeLen(int sgl, int i) { return Integer.toUnsignedLong(BE.u32(seg, base + sgl + (long) i * SGE_SIZE + 8)); }
        public int sgeLkey(int sgl, int i) { return BE.u32(seg, base + sgl + (long) i * SGE_SIZE + 12); }

        public Wqe wqeId(long v) { put64(WQE_ID, v); return this; }
        public Wqe op(int v) { put8(OP, v); return this; }
        public Wqe numSgeKey(int v) { put8(NUM_SGE_KEY, v); return this; }
        public Wqe flags(int v) { BE.put16(seg, base + FLAGS, v); return this; }
        public Wqe immDataKey(int v) { BE.put32(seg, base + IMM_DATA_KEY, v); return this; }
        public Wqe ud(int ahId, int destQpn, int qkey) {
            BE.put32(seg, base + UD_AH_ID, ahId); BE.put32(seg, base + UD_DEST_QPN, destQpn);
            BE.put32(seg, base + UD_DEST_QKEY, qkey); return this;
        }
        public Wqe rdma(long va, int rkey) {
            BE.put32(seg, base + RDMA_VA_HIGH, (int) (va >>> 32)); BE.put32(seg, base + RDMA_VA_LOW, (int) va);
            BE.put32(seg, base + RDMA_RKEY, rkey); return this;
        }
        public Wqe length(long v) { BE.put32(seg, base + LENGTH, (int) v); return this; }
        public Wqe sge(int sgl, int i, long va, long len, int lkey) {
            long at = base + sgl + (long) i * SGE_SIZE;
            BE.put64(seg, at, va); BE.put32(seg, at + 8, (int) len); BE.put32(seg, at + 12, lkey); return this;
        }
    }
}
