package ernic.model.rdma;

import java.lang.foreign.MemorySegment;

import static ernic.model.rdma.Fw.*;

/**
 * The admin commands that both {@link RdmaVerbs} (as ionic_rdma sends them) and {@link RdmaRaw} (with a test's
 * ids) write, filled field by field into the zeroed {@code cmd} of {@link RdmaAdminQueue#cmd()}.
 */
final class AdminCommands {
    private AdminCommands() {}

    /** The RQ half of struct ionic_admin_create_qp stands this many bytes after the SQ half, field for field. */
    static final int QP_RQ = CQP_RQ_CQ_ID - CQP_SQ_CQ_ID;

    /** struct ionic_admin_create_cq of one direct ring: tbl_index ~0, map_count 1, 32-byte CQEs. */
    static void createCq(MemorySegment c, int id, int eqId, int depthLog2, long ring, int dbid) {
        le16(c, CCQ_DBID_FLAGS, dbid);
        le32(c, CCQ_EQ_ID, eqId);
        u8(c, CCQ_DEPTH_LOG2, depthLog2);
        u8(c, CCQ_STRIDE_LOG2, CQE_STRIDE_LOG2);
        u8(c, CCQ_PAGE_SIZE_LOG2, 0);
        le32(c, CCQ_ID_VER, id);
        le32(c, CCQ_TBL_INDEX, -1);
        le32(c, CCQ_MAP_COUNT, 1);
        le64(c, CCQ_DMA_ADDR, ring);
    }

    /**
     * One direct ring of struct ionic_admin_create_qp, its SQ half ({@code half} 0) or its RQ half ({@link #QP_RQ}):
     * the CQ it completes on, 2^depthLog2 WQEs of 2^strideLog2 bytes, tbl_index ~0, map_count 1.
     */
    static void createQpRing(MemorySegment c, int half, int cq, int depthLog2, int strideLog2, long ring) {
        le32(c, half + CQP_SQ_CQ_ID, cq);
        u8(c, half + CQP_SQ_DEPTH_LOG2, depthLog2);
        u8(c, half + CQP_SQ_STRIDE_LOG2, strideLog2);
        u8(c, half + CQP_SQ_PAGE_SIZE_LOG2, 0);
        le32(c, half + CQP_SQ_TBL_INDEX, -1);
        le32(c, half + CQP_SQ_MAP_COUNT, 1);
        le64(c, half + CQP_SQ_DMA_ADDR, ring);
    }

    /**
     * struct ionic_admin_create_mr: an MR of {@code length} bytes at {@code va} in protection domain {@code pd},
     * {@code mapCount} pages at {@code dma} (the direct address, or a table of le64 page addresses), tbl_index ~0;
     * a memory window has no range and no pages.
     */
    static void createMr(MemorySegment c, int pd, int id, long va, long length, int flags, int mapCount, long dma,
                         int pageLog2) {
        le64(c, CMR_VA, va);
        le64(c, CMR_LENGTH, length);
        le32(c, CMR_PD_ID, pd);
        le32(c, CMR_ID_VER, id);
        le32(c, CMR_TBL_INDEX, -1);
        le32(c, CMR_MAP_COUNT, mapCount);
        le64(c, CMR_DMA_ADDR, dma);
        le16(c, CMR_DBID_FLAGS, flags);
        u8(c, CMR_PT_TYPE, 0);
        u8(c, CMR_DIR_SIZE_LOG2, 0);
        u8(c, CMR_PAGE_SIZE_LOG2, pageLog2);
    }
}
