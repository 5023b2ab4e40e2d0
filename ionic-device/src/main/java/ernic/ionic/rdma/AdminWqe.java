package ernic.ionic.rdma;

import ernic.ionic.layout.Struct;

import static ernic.common.Endian.BE;

/**
 * Flyweights over the RDMA admin queue (ionic_fw.h): the slot header of {@code struct ionic_v1_admin_wqe},
 * the members of its {@code cmd} union, and the QUERY_QP replies the device writes into guest memory.
 * Command offsets are within {@code cmd} (the slot offset minus the 4-byte header); a command longer
 * than one slot continues in the next slots, so the device reassembles it into one buffer first.
 * Fields are little-endian unless marked __be; the byte order is chosen in each accessor.
 */
public final class AdminWqe {
    /** ADMIN_WQE_STRIDE (one slot) and ADMIN_WQE_HDR_LEN (op, rsvd, len). */
    public static final int STRIDE = 64, HDR_LEN = 4;
    /** Longest command accepted: four slots (CREATE_QP, the longest the driver sends, is 64). */
    public static final int CMD_MAX = 4 * STRIDE - HDR_LEN;

    private AdminWqe() {}

    /** The low 24 bits of an {@code id_ver} field: the object id (the version is in 31..24). */
    static int id(int idVer) {
        return idVer & 0xff_ffff;
    }

    /** struct ionic_v1_admin_wqe: the header of the first slot; the command follows at {@link #CMD}. */
    public static final class Header extends Struct<Header> {
        static final int OP = 0;          // u8 op (enum ionic_v1_admin_op)
        static final int LEN = 2;         // __le16 len: bytes of cmd
        public static final int CMD = 4;  // union cmd

        public int op() { return u8(OP); }
        public int len() { return u16(LEN); }
        /** Slots the command occupies, the first included. */
        public int slots() { return (len() + HDR_LEN + STRIDE - 1) / STRIDE; }

        public Header op(int v) { put8(OP, v); return this; }
        public Header len(int v) { put16(LEN, v); return this; }
    }

    /** struct ionic_admin_create_cq (len 34). */
    public static final class CreateCq extends Struct<CreateCq> {
        public static final int LEN = 34;
        static final int EQ_ID = 0;           // __le32 eq_id
        static final int DEPTH_LOG2 = 4;      // u8 depth_log2
        static final int STRIDE_LOG2 = 5;     // u8 stride_log2
        static final int PAGE_SIZE_LOG2 = 7;  // u8 page_size_log2
        static final int ID_VER = 12;         // __le32 id_ver
        static final int TBL_INDEX = 16;      // __le32 tbl_index
        static final int MAP_COUNT = 20;      // __le32 map_count
        static final int DMA_ADDR = 24;       // __le64 dma_addr
        static final int DBID_FLAGS = 32;     // __le16 dbid_flags: the doorbell page the CQ is rung on

        public int eqId() { return u32(EQ_ID); }
        public int depthLog2() { return u8(DEPTH_LOG2); }
        public int strideLog2() { return u8(STRIDE_LOG2); }
        public int pageSizeLog2() { return u8(PAGE_SIZE_LOG2); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }
        public int mapCount() { return u32(MAP_COUNT); }
        public int dbid() { return u16(DBID_FLAGS); }
        public long dmaAddr() { return u64(DMA_ADDR); }

        public CreateCq eqId(int v) { put32(EQ_ID, v); return this; }
        public CreateCq depthStride(int depth, int stride) { put8(DEPTH_LOG2, depth); put8(STRIDE_LOG2, stride); return this; }
        public CreateCq idVer(int v) { put32(ID_VER, v); return this; }
        public CreateCq tblIndex(int v) { put32(TBL_INDEX, v); return this; }
        public CreateCq mapCount(int v) { put32(MAP_COUNT, v); return this; }
        public CreateCq dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
        public CreateCq dbid(int v) { put16(DBID_FLAGS, v); return this; }
    }

    /**
     * struct ionic_admin_create_qp (len 64): the QP and its two rings, each described by
     * {cq_id, depth_log2, stride_log2, page_size_log2, tbl_index, map_count, dma_addr} ({@link Ring}).
     */
    public static final class CreateQp extends Struct<CreateQp> {
        public static final int LEN = 64;
        static final int PD_ID = 0;           // __le32 pd_id
        static final int PRIV_FLAGS = 4;      // __be32 priv_flags (enum ionic_qp_flags)
        static final int SQ = 8;              // sq_cq_id .. sq_dma_addr
        static final int RQ = 32;             // rq_cq_id .. rq_dma_addr
        static final int ID_VER = 56;         // __le32 id_ver
        static final int DBID_FLAGS = 60;     // __le16 dbid_flags: the doorbell page its SQ and RQ are rung on
        static final int TYPE_STATE = 62;     // u8 type_state: type 3..0

        /** Ring fields, relative to SQ or RQ. */
        static final int CQ_ID = 0;           // __le32 {sq,rq}_cq_id
        static final int DEPTH_LOG2 = 4;      // u8 {sq,rq}_depth_log2
        static final int STRIDE_LOG2 = 5;     // u8 {sq,rq}_stride_log2
        static final int PAGE_SIZE_LOG2 = 7;  // u8 {sq,rq}_page_size_log2
        static final int TBL_INDEX = 8;       // __le32 {sq,rq}_tbl_index
        static final int MAP_COUNT = 12;      // __le32 {sq,rq}_map_count
        static final int DMA_ADDR = 16;       // __le64 {sq,rq}_dma_addr

        /** Which ring: the send queue or the receive queue. */
        public enum Ring {
            SQ(CreateQp.SQ), RQ(CreateQp.RQ);

            final int at;

            Ring(int at) {
                this.at = at;
            }
        }

        public int privFlags() { return BE.u32(seg, base + PRIV_FLAGS); }
        public int pdId() { return u32(PD_ID); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }
        public int dbid() { return u16(DBID_FLAGS); }
        public int type() { return u8(TYPE_STATE) & 0xf; }
        public int cqId(Ring r) { return u32(r.at + CQ_ID); }
        public int depthLog2(Ring r) { return u8(r.at + DEPTH_LOG2); }
        public int strideLog2(Ring r) { return u8(r.at + STRIDE_LOG2); }
        public int pageSizeLog2(Ring r) { return u8(r.at + PAGE_SIZE_LOG2); }
        public int mapCount(Ring r) { return u32(r.at + MAP_COUNT); }
        public long dmaAddr(Ring r) { return u64(r.at + DMA_ADDR); }

        public CreateQp privFlags(int v) { BE.put32(seg, base + PRIV_FLAGS, v); return this; }
        public CreateQp idVer(int v) { put32(ID_VER, v); return this; }
        public CreateQp typeState(int v) { put8(TYPE_STATE, v); return this; }
        /** One ring: its CQ, geometry and memory (tbl_index -1, as the kernel driver sends). */
        public CreateQp ring(Ring r, int cqId, int depthLog2, int strideLog2, int mapCount, long dmaAddr) {
            put32(r.at + CQ_ID, cqId);
            put8(r.at + DEPTH_LOG2, depthLog2);
            put8(r.at + STRIDE_LOG2, strideLog2);
            put32(r.at + TBL_INDEX, -1);
            put32(r.at + MAP_COUNT, mapCount);
            put64(r.at + DMA_ADDR, dmaAddr);
            return this;
        }
    }

    /** struct ionic_admin_mod_qp (len 60): the attributes named by attr_mask (IB_QP_*). */
    public static final class ModifyQp extends Struct<ModifyQp> {
        public static final int LEN = 60;
        static final int ATTR_MASK = 0;       // __be32 attr_mask
        static final int ACCESS_FLAGS = 6;    // __be16 access_flags
        static final int RQ_PSN = 8;          // __le32 rq_psn
        static final int SQ_PSN = 12;         // __le32 sq_psn
        static final int QKEY_DEST_QPN = 16;  // __le32 qkey_dest_qpn
        static final int PMTU = 24;           // u8 pmtu
        static final int RETRY = 25;          // u8 retry
        static final int RNR_TIMER = 26;      // u8 rnr_timer
        static final int RETRY_TIMEOUT = 27;  // u8 retry_timeout
        static final int RSQ_DEPTH = 28;      // u8 rsq_depth
        static final int RRQ_DEPTH = 29;      // u8 rrq_depth
        static final int PKEY_ID = 30;        // __le16 pkey_id
        static final int AH_ID_LEN = 32;      // __le32 ah_id_len: ah id 23..0, header length 31..24
        static final int TYPE_STATE = 39;     // u8 type_state: new state 3..0, current state 7..4
        static final int DMA_ADDR = 48;       // __le64 dma_addr: the header template
        static final int ID_VER = 56;         // __le32 id_ver

        public int attrMask() { return BE.u32(seg, base + ATTR_MASK); }
        public int accessFlags() { return BE.u16(seg, base + ACCESS_FLAGS); }
        public int rqPsn() { return u32(RQ_PSN); }
        public int sqPsn() { return u32(SQ_PSN); }
        public int qkey() { return u32(QKEY_DEST_QPN); }
        public int destQpn() { return u32(QKEY_DEST_QPN) & 0xff_ffff; }
        public int pmtu() { return u8(PMTU); }
        public int retry() { return u8(RETRY); }
        public int rnrTimer() { return u8(RNR_TIMER); }
        public int retryTimeout() { return u8(RETRY_TIMEOUT); }
        public int rsqDepth() { return u8(RSQ_DEPTH); }
        public int rrqDepth() { return u8(RRQ_DEPTH); }
        public int pkeyId() { return u16(PKEY_ID); }
        public int ahId() { return u32(AH_ID_LEN) & 0xff_ffff; }
        public int headerLength() { return u32(AH_ID_LEN) >>> 24; }
        public int state() { return u8(TYPE_STATE) & 0xf; }
        public int currentState() { return u8(TYPE_STATE) >>> 4; }
        public long dmaAddr() { return u64(DMA_ADDR); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }

        public ModifyQp attrMask(int v) { BE.put32(seg, base + ATTR_MASK, v); return this; }
        public ModifyQp qkeyDestQpn(int v) { put32(QKEY_DEST_QPN, v); return this; }
        public ModifyQp pmtu(int v) { put8(PMTU, v); return this; }
        public ModifyQp states(int to, int from) { put8(TYPE_STATE, to & 0xf | from << 4); return this; }
        public ModifyQp ahIdLen(int ahId, int headerLength) { put32(AH_ID_LEN, ahId & 0xff_ffff | headerLength << 24); return this; }
        public ModifyQp dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
        public ModifyQp idVer(int v) { put32(ID_VER, v); return this; }
    }

    /** struct ionic_admin_query_qp (len 34): where to write the SQ and RQ replies and the header template. */
    public static final class QueryQp extends Struct<QueryQp> {
        public static final int LEN = 34;
        static final int HDR_DMA_ADDR = 0;    // __le64 hdr_dma_addr
        static final int SQ_DMA_ADDR = 8;     // __le64 sq_dma_addr
        static final int RQ_DMA_ADDR = 16;    // __le64 rq_dma_addr
        static final int ID_VER = 28;         // __le32 id_ver

        public long hdrDmaAddr() { return u64(HDR_DMA_ADDR); }
        public long sqDmaAddr() { return u64(SQ_DMA_ADDR); }
        public long rqDmaAddr() { return u64(RQ_DMA_ADDR); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }

        public QueryQp hdrDmaAddr(long v) { put64(HDR_DMA_ADDR, v); return this; }
        public QueryQp sqDmaAddr(long v) { put64(SQ_DMA_ADDR, v); return this; }
        public QueryQp rqDmaAddr(long v) { put64(RQ_DMA_ADDR, v); return this; }
        public QueryQp idVer(int v) { put32(ID_VER, v); return this; }
    }

    /** struct ionic_v1_admin_query_qp_sq (20 bytes): the send side of a QUERY_QP reply. */
    public static final class QueryQpSq extends Struct<QueryQpSq> {
        public static final int SIZE = 20;
        static final int RNR_TIMER = 0;       // u8 rnr_timer
        static final int RETRY_TIMEOUT = 1;   // u8 retry_timeout
        static final int ACCESS_PERMS = 2;    // __be16 access_perms_flags
        static final int PKEY_ID = 6;         // __be16 pkey_id
        static final int QKEY_DEST_QPN = 8;   // __be32 qkey_dest_qpn
        static final int RATE_LIMIT = 12;     // __be32 rate_limit_kbps
        static final int RQ_PSN = 16;         // __be32 rq_psn

        public QueryQpSq clear() { zero(SIZE); return this; }
        public int rnrTimer() { return u8(RNR_TIMER); }
        public int retryTimeout() { return u8(RETRY_TIMEOUT); }
        public int accessPerms() { return BE.u16(seg, base + ACCESS_PERMS); }
        public int pkeyId() { return BE.u16(seg, base + PKEY_ID); }
        public int qkeyDestQpn() { return BE.u32(seg, base + QKEY_DEST_QPN); }
        public int rateLimit() { return BE.u32(seg, base + RATE_LIMIT); }
        public int rqPsn() { return BE.u32(seg, base + RQ_PSN); }

        public QueryQpSq rnrTimer(int v) { put8(RNR_TIMER, v); return this; }
        public QueryQpSq retryTimeout(int v) { put8(RETRY_TIMEOUT, v); return this; }
        public QueryQpSq accessPerms(int v) { BE.put16(seg, base + ACCESS_PERMS, v); return this; }
        public QueryQpSq pkeyId(int v) { BE.put16(seg, base + PKEY_ID, v); return this; }
        public QueryQpSq qkeyDestQpn(int v) { BE.put32(seg, base + QKEY_DEST_QPN, v); return this; }
        public QueryQpSq rateLimit(int v) { BE.put32(seg, base + RATE_LIMIT, v); return this; }
        public QueryQpSq rqPsn(int v) { BE.put32(seg, base + RQ_PSN, v); return this; }
    }

    /** struct ionic_v1_admin_query_qp_rq (12 bytes): the receive side of a QUERY_QP reply. */
    public static final class QueryQpRq extends Struct<QueryQpRq> {
        public static final int SIZE = 12;
        static final int STATE_PMTU = 0;      // u8 state_pmtu: state 7..4, pmtu 3..0
        static final int RETRY_RNRTRY = 1;    // u8 retry_rnrtry
        static final int RRQ_DEPTH = 2;       // u8 rrq_depth
        static final int RSQ_DEPTH = 3;       // u8 rsq_depth
        static final int SQ_PSN = 4;          // __be32 sq_psn
        static final int ACCESS_PERMS = 8;    // __be16 access_perms_flags

        public QueryQpRq clear() { zero(SIZE); return this; }
        public int state() { return u8(STATE_PMTU) >>> 4; }
        public int pmtu() { return u8(STATE_PMTU) & 0xf; }
        public int retryRnrRetry() { return u8(RETRY_RNRTRY); }
        public int rrqDepth() { return u8(RRQ_DEPTH); }
        public int rsqDepth() { return u8(RSQ_DEPTH); }
        public int sqPsn() { return BE.u32(seg, base + SQ_PSN); }
        public int accessPerms() { return BE.u16(seg, base + ACCESS_PERMS); }

        public QueryQpRq statePmtu(int state, int pmtu) { put8(STATE_PMTU, state << 4 | pmtu & 0xf); return this; }
        public QueryQpRq retryRnrRetry(int v) { put8(RETRY_RNRTRY, v); return this; }
        public QueryQpRq rrqDepth(int v) { put8(RRQ_DEPTH, v); return this; }
        public QueryQpRq rsqDepth(int v) { put8(RSQ_DEPTH, v); return this; }
        public QueryQpRq sqPsn(int v) { BE.put32(seg, base + SQ_PSN, v); return this; }
        public QueryQpRq accessPerms(int v) { BE.put16(seg, base + ACCESS_PERMS, v); return this; }
    }

    /** struct ionic_admin_create_mr (len 45); the same command registers a user MR (reg_mr). */
    public static final class CreateMr extends Struct<CreateMr> {
        public static final int LEN = 45;
        static final int VA = 0;              // __le64 va
        static final int LENGTH = 8;          // __le64 length
        static final int PD_ID = 16;          // __le32 pd_id
        static final int ID_VER = 20;         // __le32 id_ver: the mrid (index 31..8, key 7..0)
        static final int TBL_INDEX = 24;      // __le32 tbl_index
        static final int MAP_COUNT = 28;      // __le32 map_count
        static final int DMA_ADDR = 32;       // __le64 dma_addr: the page or the page table
        static final int DBID_FLAGS = 40;     // __le16 dbid_flags (enum ionic_mr_flags)
        static final int PAGE_SIZE_LOG2 = 44; // u8 page_size_log2

        public long va() { return u64(VA); }
        public long length() { return u64(LENGTH); }
        /** The whole id_ver: an MR id keeps its key in the low byte. */
        public int mrid() { return u32(ID_VER); }
        public int pdId() { return u32(PD_ID); }
        public int mapCount() { return u32(MAP_COUNT); }
        public long dmaAddr() { return u64(DMA_ADDR); }
        public int flags() { return u16(DBID_FLAGS); }
        public int pageSizeLog2() { return u8(PAGE_SIZE_LOG2); }

        public CreateMr va(long v) { put64(VA, v); return this; }
        public CreateMr length(long v) { put64(LENGTH, v); return this; }
        public CreateMr mrid(int v) { put32(ID_VER, v); return this; }
        public CreateMr tblIndex(int v) { put32(TBL_INDEX, v); return this; }
        public CreateMr mapCount(int v) { put32(MAP_COUNT, v); return this; }
        public CreateMr dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
        public CreateMr flags(int v) { put16(DBID_FLAGS, v); return this; }
        public CreateMr pageSizeLog2(int v) { put8(PAGE_SIZE_LOG2, v); return this; }
    }

    /** struct ionic_admin_create_ah (len 24): the header template in guest memory. */
    public static final class CreateAh extends Struct<CreateAh> {
        public static final int LEN = 24;
        static final int DMA_ADDR = 0;        // __le64 dma_addr
        static final int LENGTH = 8;          // __le32 length
        static final int PD_ID = 12;          // __le32 pd_id
        static final int ID_VER = 16;         // __le32 id_ver

        public long dmaAddr() { return u64(DMA_ADDR); }
        public int length() { return u32(LENGTH); }
        public int pdId() { return u32(PD_ID); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }

        public CreateAh dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
        public CreateAh length(int v) { put32(LENGTH, v); return this; }
        public CreateAh pdId(int v) { put32(PD_ID, v); return this; }
        public CreateAh idVer(int v) { put32(ID_VER, v); return this; }
    }

    /** struct ionic_admin_destroy_{cq,qp,mr,ah} (len 4): the one id. */
    public static final class Destroy extends Struct<Destroy> {
        public static final int LEN = 4;
        static final int ID = 0;              // __le32 cq_id / qp_id / mr_id / ah_id

        public int id() { return u32(ID); }
        public Destroy id(int v) { put32(ID, v); return this; }
    }

    /** struct ionic_admin_stats_hdr (len 17): STATS_HDRS/VALS, QP_STATS_HDRS/VALS. */
    public static final class Stats extends Struct<Stats> {
        public static final int LEN = 17;
        static final int DMA_ADDR = 0;        // __le64 dma_addr
        static final int LENGTH = 8;          // __le32 length
        static final int ID_VER = 12;         // __le32 id_ver: the QP (per-QP commands)

        public long dmaAddr() { return u64(DMA_ADDR); }
        public long length() { return Integer.toUnsignedLong(u32(LENGTH)); }
        public int id() { return AdminWqe.id(u32(ID_VER)); }

        public Stats dmaAddr(long v) { put64(DMA_ADDR, v); return this; }
        public Stats length(int v) { put32(LENGTH, v); return this; }
        public Stats idVer(int v) { put32(ID_VER, v); return this; }
    }
}
