package ernic.ionic.base;

/**
 * BAR 2, the doorbell BAR: 4 KiB doorbell pages, all of them LIF 0's (hw_index 0). The kernel rings on
 * page 0 (its pid); each user context gets its own page (its dbid) from ionic_rdma. Within a page the
 * byte offset selects the queue type, eight bytes a type.
 */
public final class Bar2 {
    public static final long SIZE = 4L * 1024 * 1024;
    public static final int PAGE = 4096;
    /** ndbpgs_per_lif: every page of the BAR, so 1,023 user contexts can be open at once. */
    public static final int PAGES = (int) (SIZE / PAGE);

    private Bar2() {}

    /** Whether {@code dbid} names a doorbell page of LIF 0. */
    public static boolean validPage(int dbid) {
        return dbid >= 0 && dbid < PAGES;
    }
}
