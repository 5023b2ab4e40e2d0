package ernic.model.rdma;

/** The attributes of one MODIFY_QP; only those named in {@code mask} (IB_QP_* bits) count. */
public final class QpAttr {
    public int mask, state, accessFlags, qkey, destQpn, rqPsn, sqPsn, pmtuLog2 = 12, retry = 7, rnrRetry = 7,
            rnrTimer = 12, timeout = 14, rsqDepth = 16, rrqDepth = 16;
    public Path path;
}
