package ernic.ionic.rdma;

import ernic.counters.Counter;

/** The remote data path's totals, under {@code rdma.remote.}: requests and replies to and from peer servers. */
public enum RemoteCounter implements Counter {
    REQUESTS_SENT("requestsSent"), REPLIES_RECEIVED("repliesReceived"), REQUESTS_RECEIVED("requestsReceived"),
    REPLIES_SENT("repliesSent"),
    /** Replies the mesh could not take (the requester's WQE times out). */
    REPLIES_DROPPED("repliesDropped"),
    /** Replies for a destroyed QP or a flushed, reset or timed-out WQE: ignored. */
    STALE_REPLIES("staleReplies"),
    /** Requests no connection could carry. */
    NO_ROUTE("noRoute"),
    /** Requests unanswered for 30 s. */
    TIMEOUTS("timeouts"),
    /** Requests that waited for a receive (receiver not ready), and those that gave up after 5 s. */
    RNR_WAITS("rnrWaits"), RNR_FAILURES("rnrFailures"),
    /** Messages from a peer that are no ionic request or reply. */
    BAD_MESSAGES("badMessages"),
    /** Times the responder stopped reading from its peers (held messages over their limit). */
    READ_PAUSES("readPauses"),
    /** Queued requests of a flushed or timed-out QP taken back before they were written. */
    TAKEN_BACK("takenBack"),
    /** MODIFY_QPs to RTR that waited for the mesh to name the owner of their destination GID (at most 1 s). */
    RTR_WAITS("rtrWaits"),
    /**
     * Pieces of long WRITEs sent and received before their last message ({@code WireHeader.FLAG_MORE}); the
     * request counters count each WRITE once, by its last message.
     */
    PIECES_SENT("piecesSent"), PIECES_RECEIVED("piecesReceived");

    private final String key;

    RemoteCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
