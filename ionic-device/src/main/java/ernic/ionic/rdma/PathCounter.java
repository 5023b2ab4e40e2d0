package ernic.ionic.rdma;

import ernic.counters.Counter;

/** The data path's own totals, under {@code rdma.} (the hw_counters the guest reads are {@link RdmaCounters}). */
public enum PathCounter implements Counter.Grouped {
    /** QPs moved to ERROR. */
    QP_FLUSHES,
    /** Send WQEs completed, and those that completed with an error. */
    SQ_WQES, SQ_ERRORS,
    /** Receive WQEs consumed. */
    RQ_WQES,
    /** Datagrams that found no taker (no QP, wrong Q_Key, no receive). */
    UD_DROPPED,
    /** Of those, the ones under a Q_Key that was not the destination's own (refusal {@code rdma-ud-qkey}). */
    UD_QKEY_MISMATCH,
    /** Datagrams for a UD QP that MODIFY_QP never gave a Q_Key, which takes any (the seed's rule). */
    UD_UNKEYED,
    /** Bytes copied through the MR table. */
    BYTES,
    /** SQs whose destination in this guest had no receive for 5 s. */
    RNR_FAILURES,
    /**
     * Remote WRITEs, READs and atomics a QP's access flags do not allow (rejected on RC, dropped on UC), requests
     * naming memory by rkey 0 with a non-zero length, UD sends with an AH of another protection domain, and UD
     * sends with a controlled Q_Key from a QP that has none.
     */
    ACCESS_DENIED,
    /** Memory windows: binds done (unbinds of type 1 included) and refused (completed MEM_MGMT_OPER_ERR). */
    MW_BINDS, MW_BIND_ERRORS,
    /** Type 2 windows freed by LOCAL_INV or SEND_INV, and invalidations a window refused (type 1, not bound). */
    MW_INVALIDATIONS, MW_INVALIDATE_ERRORS,
    /** Remote accesses a window refused (not bound, other PD or QP, rights, range): a remote access error. */
    MW_ACCESS_DENIED,
    /** In-process target transfers refused (bad key, key 0, no remote access, out of bounds). */
    TARGET_REFUSED
}
