package ernic.ionic.base;

/**
 * The RDMA part of LIF_IDENTIFY (struct ionic_lif_identity.eth.rdma in ionic_if.h): what ionic_rdma and
 * libionic need to attach. The Ethernet side reports these; the RDMA side sizes its tables by them.
 */
public final class RdmaIdentity {
    public static final int VERSION = 1, MINOR_VERSION = 0, QP_OPCODES = 11, ADMIN_OPCODES = 19;
    /** max_mr_size = npts * 4096 / 2 = 4 TiB. */
    public static final int NPTS_PER_LIF = 1 << 31;
    public static final int NMRS_PER_LIF = 1 << 16, NAHS_PER_LIF = 1 << 16;
    public static final int MAX_STRIDE = 8, CL_STRIDE = 6, PTE_STRIDE = 3, RRQ_STRIDE = 6, RSQ_STRIDE = 6;
    public static final int UDMA_SHIFT = 3;
    /** stats_type: bit 0 device hw_counters (STATS_HDRS/VALS), bit 1 per-QP (QP_STATS_HDRS/VALS). */
    public static final int STATS_GLOBAL = 1, STATS_QP = 2, STATS_TYPE = STATS_GLOBAL | STATS_QP;
    /** 4 KiB | 2 MiB | 1 GiB. */
    public static final long PAGE_SIZE_CAP = 0x4020_1000L;
    /** Queue types (the qtype of a doorbell and of the admin commands). */
    public static final int AQ_QTYPE = 5, SQ_QTYPE = 6, RQ_QTYPE = 7, CQ_QTYPE = 8, EQ_QTYPE = 9;
    public static final int AQ_COUNT = 4, QP_COUNT = 1 << 12, RQ_COUNT = 1 << 13, CQ_COUNT = 1 << 13;

    private RdmaIdentity() {}
}
