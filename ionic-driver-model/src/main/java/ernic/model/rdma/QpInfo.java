package ernic.model.rdma;

/** What QUERY_QP reports. */
public record QpInfo(int state, int pmtu, int destQpnOrQkey, int accessFlags, int rqPsn, int sqPsn, byte[] header) {}
