package ernic.attach;

/** The completion statuses an attached peer may give a guest's request (the verbs' ibv_wc_status names). */
public enum WcStatus {
    SUCCESS,
    /** The request's local memory could not be read. */
    LOCAL_PROTECTION_ERROR,
    /** The message is longer than the receive the peer posted. */
    REMOTE_INVALID_REQUEST_ERROR,
    /** The peer refused access (no buffer for this RDMA operation). */
    REMOTE_ACCESS_ERROR
}
