package ernic.roce.rc;

/**
 * A completion's status, named as rdma-core's {@code enum ibv_wc_status} names it (only those the RC transport
 * gives).
 */
public enum RcStatus {
    SUCCESS,
    /** Responder: a SEND longer than the posted receive. */
    LOC_LEN_ERR,
    /** Responder: the QP failed while this receive was in progress. */
    LOC_QP_OP_ERR,
    /** Not executed: the QP failed before this work request completed. */
    WR_FLUSH_ERR,
    /** Requester: the responder NAKed with invalid request. */
    REM_INV_REQ_ERR,
    /** Requester: the responder NAKed with remote access error. */
    REM_ACCESS_ERR,
    /** Requester: the responder NAKed with remote operational error. */
    REM_OP_ERR,
    /** Requester: the retransmission timer expired retry_cnt + 1 times with no progress. */
    RETRY_EXC_ERR,
    /** Requester: RNR NAKs went on past rnr_retry. */
    RNR_RETRY_EXC_ERR,
    /** Requester: the responder NAKed with invalid RD request. */
    REM_INV_RD_REQ_ERR
}
