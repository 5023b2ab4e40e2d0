package ernic.ionic.rdma;

import ernic.counters.Counter;

/**
 * The remote data path's totals, under {@code rdma.remote.} (keys such as {@code requestsSent}): requests and replies
 * to and from peer servers.
 */
public enum RemoteCounter implements Counter.CamelCase {
    REQUESTS_SENT, REPLIES_RECEIVED, REQUESTS_RECEIVED, REPLIES_SENT,
    /** Replies the mesh could not take (the requester's WQE times out). */
    REPLIES_DROPPED,
    /** Replies for a destroyed QP or a flushed, reset or timed-out WQE: ignored. */
    STALE_REPLIES,
    /** Requests no connection could carry. */
    NO_ROUTE,
    /** Requests unanswered for 30 s. */
    TIMEOUTS,
    /** Requests that waited for a receive (receiver not ready), and those that gave up after 5 s. */
    RNR_WAITS, RNR_FAILURES,
    /** Messages from a peer that are no ionic request or reply. */
    BAD_MESSAGES,
    /** Times the responder stopped reading from its peers (held messages over their limit). */
    READ_PAUSES,
    /** Queued requests of a flushed or timed-out QP taken back before they were written. */
    TAKEN_BACK,
    /** MODIFY_QPs to RTR that waited for the mesh to name the owner of their destination GID (at most 1 s). */
    RTR_WAITS,
    /**
     * Pieces of long WRITEs sent and received before their last message ({@code WireHeader.FLAG_MORE}); the
     * request counters count each WRITE once, by its last message.
     */
    PIECES_SENT, PIECES_RECEIVED
}
