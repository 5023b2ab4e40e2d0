package ernic.model.rdma;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.common.Endian.BE;
import static ernic.common.Endian.LE;

/**
 * The RDMA interface as the driver model writes it: offsets of Linux {@code drivers/infiniband/hw/ionic/ionic_fw.h}
 * ("fw abi v1"), the RDMA part of {@code ionic_if.h} and rdma-core {@code providers/ionic}, taken from the headers
 * and the bring-up reference (not from the device's code). Admin command offsets are within {@code cmd}, i.e. the
 * slot offset minus the 4-byte {@code op, rsvd, len} header. Little-endian unless the name says BE.
 */
public final class Fw {
    private Fw() {}

    // ---- ionic_lif_identity, RDMA part (offsets in the LIF_IDENTIFY data) --------------------------------------
    public static final int LID_RDMA_VERSION = 392, LID_RDMA_QP_OPCODES = 393, LID_RDMA_ADMIN_OPCODES = 394,
            LID_RDMA_NPTS = 396, LID_RDMA_NMRS = 400, LID_RDMA_NAHS = 404, LID_RDMA_MAX_STRIDE = 408;
    /** struct ionic_lif_logical_qtype {u8 qtype; u8 rsvd[3]; __le32 qid_count; __le32 qid_base}. */
    public static final int LID_RDMA_AQ = 424, LID_RDMA_SQ = 436, LID_RDMA_RQ = 448, LID_RDMA_CQ = 460, LID_RDMA_EQ = 472;
    public static final int LQT_QTYPE = 0, LQT_COUNT = 4, LQT_BASE = 8;
    /** ionic_dev_identity.ndbpgs_per_lif. */
    public static final int DID_NDBPGS_PER_LIF = 16;

    // ---- enum ionic_cmd_opcode: RDMA bootstrap, and struct ionic_rdma_queue_cmd -------------------------------
    public static final int CMD_RDMA_RESET_LIF = 50, CMD_RDMA_CREATE_EQ = 51, CMD_RDMA_CREATE_CQ = 52,
            CMD_RDMA_CREATE_ADMINQ = 53;
    public static final int RQC_LIF_INDEX = 2, RQC_QID_VER = 4, RQC_CID = 8, RQC_DBID = 12, RQC_DEPTH_LOG2 = 14,
            RQC_STRIDE_LOG2 = 15, RQC_DMA_ADDR = 16;

    // ---- admin queue: struct ionic_v1_admin_wqe -----------------------------------------------------------
    public static final int AQ_STRIDE = 64, AWQE_OP = 0, AWQE_LEN = 2, AWQE_CMD = 4;
    /** enum ionic_v1_admin_op. */
    public static final int OP_NOOP = 0, OP_CREATE_CQ = 1, OP_CREATE_QP = 2, OP_CREATE_MR = 3, OP_STATS_HDRS = 4,
            OP_STATS_VALS = 5, OP_DESTROY_MR = 6, OP_DESTROY_CQ = 8, OP_MODIFY_QP = 9, OP_QUERY_QP = 10,
            OP_DESTROY_QP = 11, OP_CREATE_AH = 13, OP_QUERY_AH = 14, OP_MODIFY_DCQCN = 15, OP_DESTROY_AH = 16,
            OP_QP_STATS_HDRS = 17, OP_QP_STATS_VALS = 18;
    /** struct ionic_admin_stats_hdr (STATS_* and QP_STATS_*; len 17). */
    public static final int STATS_DMA_ADDR = 0, STATS_LENGTH = 8, STATS_ID_VER = 12, STATS_TYPE_STATE = 16,
            LEN_STATS = 17;
    /** One stats header: BE32 type << 28 | offset, then a 28-byte name; type 0 ends the array. */
    public static final int STATS_HDR_SIZE = 32, STATS_HDR_NAME = 4, STATS_HDR_NAME_SIZE = 28;
    /** Command lengths the kernel sends (sizeof the admin structs). */
    public static final int LEN_CREATE_CQ = 34, LEN_CREATE_QP = 64, LEN_CREATE_MR = 45, LEN_MODIFY_QP = 60,
            LEN_QUERY_QP = 34, LEN_CREATE_AH = 24, LEN_DESTROY = 4;

    /** struct ionic_admin_create_cq. */
    public static final int CCQ_EQ_ID = 0, CCQ_DEPTH_LOG2 = 4, CCQ_STRIDE_LOG2 = 5, CCQ_PAGE_SIZE_LOG2 = 7,
            CCQ_FLAGS = 8, CCQ_ID_VER = 12, CCQ_TBL_INDEX = 16, CCQ_MAP_COUNT = 20, CCQ_DMA_ADDR = 24,
            CCQ_DBID_FLAGS = 32;
    /** struct ionic_admin_create_qp; priv_flags is __be32. */
    public static final int CQP_PD_ID = 0, CQP_PRIV_FLAGS_BE = 4, CQP_SQ_CQ_ID = 8, CQP_SQ_DEPTH_LOG2 = 12,
            CQP_SQ_STRIDE_LOG2 = 13, CQP_SQ_PAGE_SIZE_LOG2 = 15, CQP_SQ_TBL_INDEX = 16, CQP_SQ_MAP_COUNT = 20,
            CQP_SQ_DMA_ADDR = 24, CQP_RQ_CQ_ID = 32, CQP_RQ_DEPTH_LOG2 = 36, CQP_RQ_STRIDE_LOG2 = 37,
            CQP_RQ_PAGE_SIZE_LOG2 = 39, CQP_RQ_TBL_INDEX = 40, CQP_RQ_MAP_COUNT = 44, CQP_RQ_DMA_ADDR = 48,
            CQP_ID_VER = 56, CQP_DBID_FLAGS = 60, CQP_TYPE_STATE = 62;
    /** struct ionic_admin_create_mr. */
    public static final int CMR_VA = 0, CMR_LENGTH = 8, CMR_PD_ID = 16, CMR_ID_VER = 20, CMR_TBL_INDEX = 24,
            CMR_MAP_COUNT = 28, CMR_DMA_ADDR = 32, CMR_DBID_FLAGS = 40, CMR_PT_TYPE = 42, CMR_DIR_SIZE_LOG2 = 43,
            CMR_PAGE_SIZE_LOG2 = 44;
    /** struct ionic_admin_mod_qp; attr_mask __be32, access_flags __be16. */
    public static final int MQP_ATTR_MASK_BE = 0, MQP_ACCESS_FLAGS_BE = 6, MQP_RQ_PSN = 8, MQP_SQ_PSN = 12,
            MQP_QKEY_DEST_QPN = 16, MQP_PMTU = 24, MQP_RETRY = 25, MQP_RNR_TIMER = 26, MQP_RETRY_TIMEOUT = 27,
            MQP_RSQ_DEPTH = 28, MQP_RRQ_DEPTH = 29, MQP_PKEY_ID = 30, MQP_AH_ID_LEN = 32, MQP_TYPE_STATE = 39,
            MQP_DMA_ADDR = 48, MQP_ID_VER = 56;
    /** struct ionic_admin_query_qp and the two structs the device writes back. */
    public static final int QQP_HDR_DMA = 0, QQP_SQ_DMA = 8, QQP_RQ_DMA = 16, QQP_AH_ID = 24, QQP_ID_VER = 28;
    public static final int QSQ_ACCESS_PERMS_BE = 2, QSQ_QKEY_DEST_QPN_BE = 8, QSQ_RQ_PSN_BE = 16, QSQ_SIZE = 20;
    public static final int QRQ_STATE_PMTU = 0, QRQ_SQ_PSN_BE = 4, QRQ_SIZE = 12;
    /** struct ionic_admin_create_ah. */
    public static final int CAH_DMA_ADDR = 0, CAH_LENGTH = 8, CAH_PD_ID = 12, CAH_ID_VER = 16, CAH_DBID_FLAGS = 20,
            CAH_CSUM_PROFILE = 22;

    /** IB_QP_* attribute mask bits (ib_verbs.h). */
    public static final int IB_QP_STATE = 1, IB_QP_CUR_STATE = 1 << 1, IB_QP_ACCESS_FLAGS = 1 << 3,
            IB_QP_PKEY_INDEX = 1 << 4, IB_QP_QKEY = 1 << 6, IB_QP_AV = 1 << 7, IB_QP_PATH_MTU = 1 << 8,
            IB_QP_TIMEOUT = 1 << 9, IB_QP_RETRY_CNT = 1 << 10, IB_QP_RNR_RETRY = 1 << 11, IB_QP_RQ_PSN = 1 << 12,
            IB_QP_MAX_QP_RD_ATOMIC = 1 << 13, IB_QP_MIN_RNR_TIMER = 1 << 15, IB_QP_SQ_PSN = 1 << 16,
            IB_QP_MAX_DEST_RD_ATOMIC = 1 << 17, IB_QP_DEST_QPN = 1 << 20;

    // ---- data path: struct ionic_v1_wqe ---------------------------------------------------------------------
    public static final int WQE_ID = 0, WQE_OP = 8, WQE_NUM_SGE_KEY = 9, WQE_FLAGS_BE = 10, WQE_IMM_DATA_KEY_BE = 12;
    public static final int WQE_UD_AH_ID_BE = 16, WQE_UD_DEST_QPN_BE = 20, WQE_UD_DEST_QKEY_BE = 24;
    public static final int WQE_RDMA_VA_HIGH_BE = 16, WQE_RDMA_VA_LOW_BE = 20, WQE_RDMA_RKEY_BE = 24, WQE_LENGTH_BE = 28;
    public static final int WQE_PLD = 32, SGE_SIZE = 16, SGE_VA_BE = 0, SGE_LEN_BE = 8, SGE_LKEY_BE = 12;
    /** The v1 atomic body: swap_add, compare, then one SGE at 48 (va 48, len 56, lkey 60). */
    public static final int WQE_ATOMIC_SWAP_ADD_HIGH_BE = 28, WQE_ATOMIC_SWAP_ADD_LOW_BE = 32,
            WQE_ATOMIC_COMPARE_HIGH_BE = 36, WQE_ATOMIC_COMPARE_LOW_BE = 40, WQE_ATOMIC_SGE = 48;
    public static final int WQE_FLAG_FENCE = 1, WQE_FLAG_SOL = 2, WQE_FLAG_INL = 4, WQE_FLAG_SIG = 8;
    /** struct ionic_v1_bind_mw_bdy (48 bytes after the base header): va, length, lkey, flags, rsvd[26]. */
    public static final int WQE_BIND_MW_VA_BE = 16, WQE_BIND_MW_LENGTH_BE = 24, WQE_BIND_MW_LKEY_BE = 32,
            WQE_BIND_MW_FLAGS_BE = 36;

    // ---- enum ionic_mr_flags (CREATE_MR dbid_flags; the REG_MR and BIND_MW WQEs' flags) ------------------------
    public static final int MRF_LOCAL_WRITE = 1, MRF_REMOTE_WRITE = 2, MRF_REMOTE_READ = 4, MRF_REMOTE_ATOMIC = 8,
            MRF_MW_BIND = 0x10, MRF_ZERO_BASED = 0x20, MRF_UKEY_EN = 1 << 13, MRF_IS_MW = 1 << 14,
            MRF_INV_EN = 1 << 15;
    /** The bits libionic's to_ionic_mr_flags can set from ibv access flags (same values as IBV_ACCESS_*). */
    public static final int MRF_FROM_IBV = MRF_LOCAL_WRITE | MRF_REMOTE_WRITE | MRF_REMOTE_READ | MRF_REMOTE_ATOMIC
            | MRF_MW_BIND | MRF_ZERO_BASED;
    /** What ionic_alloc_mw creates a window with (Linux ionic_fw.h IONIC_MRF_MW_1, IONIC_MRF_MW_2). */
    public static final int MRF_MW_1 = MRF_UKEY_EN | MRF_IS_MW, MRF_MW_2 = MRF_UKEY_EN | MRF_IS_MW | MRF_INV_EN;
    /** What libionic adds to a BIND_MW WQE's flags (rdma-core ionic_fw_types.h IONIC_MRF_MW_1, _2: no UKEY_EN). */
    public static final int MRF_BIND_MW_1 = MRF_IS_MW, MRF_BIND_MW_2 = MRF_IS_MW | MRF_INV_EN;

    // ---- struct ionic_v1_cqe (32 bytes) ---------------------------------------------------------------------
    public static final int CQE_SIZE = 32, CQE_STRIDE_LOG2 = 5;
    public static final int CQE_ADMIN_CMD_IDX_BE = 0, CQE_RECV_WQE_ID = 0, CQE_RECV_SRC_QPN_OP_BE = 8,
            CQE_RECV_SRC_MAC = 12, CQE_RECV_VLAN_TAG_BE = 18, CQE_RECV_IMM_DATA_RKEY_BE = 20, CQE_SEND_MSN_BE = 4,
            CQE_SEND_NPG_WQE_ID = 16, CQE_STATUS_LENGTH_BE = 24, CQE_QID_TYPE_FLAGS_BE = 28;
    public static final int CQE_COLOR = 1, CQE_ERROR = 2, CQE_TYPE_SHIFT = 5, CQE_QID_SHIFT = 8;
    public static final int CQE_TYPE_ADMIN = 0, CQE_TYPE_RECV = 1, CQE_TYPE_SEND_MSN = 2, CQE_TYPE_SEND_NPG = 3;
    /** The op of a receive CQE (src_qpn_op bits 28..24). */
    public static final int CQE_RECV_OP_SEND = 0, CQE_RECV_OP_SEND_INV = 1, CQE_RECV_OP_SEND_IMM = 2,
            CQE_RECV_OP_RDMA_IMM = 3;
    public static final int CQE_RECV_IS_IPV4 = 1 << 31, CQE_RECV_IS_VLAN = 1 << 30, CQE_RECV_OP_SHIFT = 24;

    // ---- struct ionic_v1_eqe: one __be32 --------------------------------------------------------------------
    public static final int EQE_SIZE = 4, EQE_COLOR = 1, EQE_TYPE_SHIFT = 1, EQE_CODE_SHIFT = 4, EQE_QID_SHIFT = 8;
    public static final int EQE_TYPE_CQ = 0, EQE_TYPE_QP = 1;

    // ---- doorbell value (ionic_regs.h): qid 47..24, ring 18..16, index 15..0 -----------------------------------
    public static long doorbell(int qid, int ring, int index) {
        return (long) qid << 24 | (long) (ring & 7) << 16 | (index & 0xffff);
    }

    // ---- byte order helpers on guest memory, on ernic.common's Be and Le layouts ----------------------------
    public static final ValueLayout.OfInt BE32 = BE.u32();
    public static final ValueLayout.OfShort BE16 = BE.u16();
    public static final ValueLayout.OfLong BE64 = BE.u64();
    public static final ValueLayout.OfInt LE32 = LE.u32();
    public static final ValueLayout.OfShort LE16 = LE.u16();
    public static final ValueLayout.OfLong LE64 = LE.u64();

    public static int be32(MemorySegment s, long at) { return s.get(BE32, at); }
    public static void be32(MemorySegment s, long at, int v) { s.set(BE32, at, v); }
    public static int be16(MemorySegment s, long at) { return s.get(BE16, at) & 0xffff; }
    public static void be16(MemorySegment s, long at, int v) { s.set(BE16, at, (short) v); }
    public static long be64(MemorySegment s, long at) { return s.get(BE64, at); }
    public static void be64(MemorySegment s, long at, long v) { s.set(BE64, at, v); }
    public static int le32(MemorySegment s, long at) { return s.get(LE32, at); }
    public static void le32(MemorySegment s, long at, int v) { s.set(LE32, at, v); }
    public static void le16(MemorySegment s, long at, int v) { s.set(LE16, at, (short) v); }
    public static long le64(MemorySegment s, long at) { return s.get(LE64, at); }
    public static void le64(MemorySegment s, long at, long v) { s.set(LE64, at, v); }
    public static int u8(MemorySegment s, long at) { return s.get(ValueLayout.JAVA_BYTE, at) & 0xff; }
    public static void u8(MemorySegment s, long at, int v) { s.set(ValueLayout.JAVA_BYTE, at, (byte) v); }
}
