package ernic.ionic.rdma;

/** A QP as the device knows it: type, state, rings, CQs, and what MODIFY_QP recorded. */
final class QueuePair {
    final int id;
    final int type;
    final int privFlags;
    final int sqCqId, rqCqId;
    final WorkQueue sq, rq;
    /** Its protection domain (CREATE_QP pd_id): the MRs its keys may open. */
    int pd;
    /** The doorbell page its SQ and RQ doorbells must come on (dbid_flags; 0 for the kernel's). */
    int dbid;
    int state = V1.QPS_RESET;
    int accessFlags;
    int qkey;
    /** Whether MODIFY_QP gave it a Q_Key (IB_QP_QKEY): a controlled key in a UD WQE stands for that one. */
    boolean hasQkey;
    int destQpn;
    int sqPsn, rqPsn;
    int pmtu;
    int retry, rnrTimer, retryTimeout, rsqDepth, rrqDepth, pkeyId, rateLimit;
    int ahId;
    /** The address vector parsed from the header template at RTR (null: none recorded). */
    AddressHandle av;
    /** The header template given with IB_QP_AV, for QUERY_QP. */
    byte[] header;
    /** Remote-op WQEs finished since the QP left RESET (msg_msn). */
    int msn;
    /** Per-QP counters: the first {@link RdmaCounters#QP_COUNTERS} device counters, for this QP. */
    final ernic.counters.Counters<RdmaCounters.Device> counters = RdmaCounters.newQp();
    /** Numbered afresh at every creation: names this QP's requests on the wire. */
    int generation;
    /** For a connected QP, the mesh node that owns its destination GID, or -1 when the peer is local. */
    int node = -1;
    /** The end this QP's requests go to when an attached peer bound it ({@link BoundEnd}); null: by {@link #node}. */
    End end;
    /** Placed on the wire at MODIFY_QP (RC, {@code --roce}, a destination that is no one's here). */
    boolean onWire;
    /** Its RoCEv2 transport while on the wire (from RTR); null otherwise. */
    WireQp wire;
    /** A UD QP: the PSN of its next datagram on the wire (receivers do not check it). */
    int wirePsn;
    /** Its send queue's issued WQEs not yet completed (created when the SQ first runs). */
    Outstanding outstanding;
    /** Requests from a peer waiting for a receive (receiver not ready), oldest first; null when none. */
    java.util.ArrayDeque<RemoteResponder.Held> held;
    /** When its SQ began waiting for a receive on its (local) destination. */
    long blockedSinceNanos;
    /** Since it entered ERROR, a flush completion told the driver to flush its SQ, its RQ. */
    boolean sqFlushed, rqFlushed;
    /** In the remote path's list of QPs it checks for time-outs. */
    boolean watched;
    /**
     * {@code --inject}: the SQ slot of the WQE whose RDMA faults are decided (-1: none), while it is at the head of
     * the SQ, and the error status it is to complete with ({@link V1#STS_OK}: none). Decided once per WQE, so a
     * WQE that waits (added latency, a receive, room) and is issued again is neither counted nor chosen twice.
     */
    int faultSlot = -1;
    int faultStatus;
    /** Its head WQE waits out an added latency ({@code rdma-latency}) until {@link #delayedUntil} (RDMA clock). */
    boolean delayed;
    long delayedUntil;

    QueuePair(int id, int type, int privFlags, int sqCqId, int rqCqId, WorkQueue sq, WorkQueue rq) {
        this.id = id;
        this.type = type;
        this.privFlags = privFlags;
        this.sqCqId = sqCqId;
        this.rqCqId = rqCqId;
        this.sq = sq;
        this.rq = rq;
    }

    boolean privileged() {
        return (privFlags & V1.QPF_PRIVILEGED) != 0;
    }

    boolean datagram() {
        return type == V1.QPT_UD;
    }

    boolean remote() {
        return node >= 0;
    }

    boolean connected() {
        return type == V1.QPT_RC || type == V1.QPT_UC;
    }

    /** Back to RESET: indices and MSN start over. */
    void reset() {
        if (sq != null) {
            sq.reset();
        }
        if (rq != null) {
            rq.reset();
        }
        msn = 0;
        sqFlushed = rqFlushed = false;
        faultSlot = -1;
        if (outstanding != null) {
            outstanding.done = 0;
        }
    }

    /** In ERROR: work posted from now on is flushed, not executed. */
    boolean inError() {
        return state == V1.QPS_ERR;
    }
}
