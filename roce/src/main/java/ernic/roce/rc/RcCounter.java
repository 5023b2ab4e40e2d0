package ernic.roce.rc;

import ernic.counters.Counter;

/**
 * What a connected engine counts: its traffic, its recoveries, and each distinct cause for which it refuses a
 * packet from the wire ({@code REQ_DROP_*} for an RC requester, {@code RESP_DROP_*} and {@code RESP_NAK_*} for an RC
 * responder, {@code UC_*} for the UC engines, which count their packets under {@code REQ_PACKETS} and
 * {@code RESP_PACKETS} too). An engine counts into the {@code Counters} of these it is given (the project's counter
 * set, shared by a device's QPs for its registry).
 */
public enum RcCounter implements Counter.CamelCase {
    // requester
    /** Packets transmitted, retransmissions included. */
    REQ_PACKETS,
    /** Packets transmitted again (go-back-N after a NAK, a timeout or an RNR wait). */
    REQ_RETRANSMITTED,
    /** Retransmission timer expiries. */
    REQ_TIMEOUTS,
    REQ_ACKS,
    REQ_READ_RESPONSES,
    REQ_ATOMIC_ACKS,
    REQ_SEQ_NAKS,
    REQ_RNR_NAKS,
    /** Remote access, invalid request, remote operational, invalid RD request NAKs. */
    REQ_FATAL_NAKS,
    /** An ACK or response that implies a READ or atomic response was lost. */
    REQ_IMPLIED_NAKS,
    /** Not an RC response opcode (unknown, another transport, or a request). */
    REQ_DROP_NOT_RESPONSE,
    /** A response to a PSN that was never sent. */
    REQ_DROP_PSN_OUT_OF_WINDOW,
    /** A response to PSNs already acknowledged. */
    REQ_DROP_DUPLICATE,
    /** A response that is not the one the outstanding message expects (kind or FIRST/MIDDLE/LAST). */
    REQ_DROP_UNEXPECTED,
    /** A READ response whose payload is not the length its place in the message calls for. */
    REQ_DROP_BAD_LENGTH,
    /** A reserved AETH syndrome, or a NAK syndrome where only an ACK may be. */
    REQ_DROP_BAD_SYNDROME,
    /** A NAK that asks for a retry while one from the same PSN is under way. */
    REQ_DROP_RETRY_UNDER_WAY,
    /** Anything received after the QP failed. */
    REQ_DROP_QP_ERROR,

    // responder
    /** Request packets executed (in order, first time). */
    RESP_PACKETS,
    RESP_ACKS,
    RESP_READ_RESPONSES,
    RESP_ATOMIC_ACKS,
    /** Requests behind the expected PSN. */
    RESP_DUPLICATES,
    /** Requests ahead of the expected PSN (dropped; one sequence NAK per gap). */
    RESP_OUT_OF_SEQUENCE,
    RESP_SEQ_NAKS,
    RESP_RNR_NAKS,
    /** Duplicate atomics answered from their replay record. */
    RESP_ATOMIC_REPLAYS,
    /** Not an RC request opcode (unknown, another transport, or a response). */
    RESP_DROP_NOT_REQUEST,
    /** A duplicate READ or atomic with no replay record left. */
    RESP_DROP_NO_RECORD,
    /** Anything received after the QP failed. */
    RESP_DROP_QP_ERROR,
    /** NAK invalid request: an opcode out of its message's FIRST/MIDDLE/LAST order. */
    RESP_NAK_OPCODE_SEQUENCE,
    /** NAK invalid request: a payload or DMA length the opcode or the RETH does not allow. */
    RESP_NAK_BAD_LENGTH,
    /** NAK invalid request: a SEND longer than its receive buffer. */
    RESP_NAK_RECEIVE_TOO_SHORT,
    /** NAK invalid request: a READ or an atomic to a responder whose max_dest_rd_atomic is 0. */
    RESP_NAK_NO_RD_ATOMIC_RESOURCES,
    /** NAK invalid request: an atomic at an address not 8-byte aligned. */
    RESP_NAK_MISALIGNED_ATOMIC,
    /** NAK invalid request: a SEND with invalidate whose rkey cannot be invalidated. */
    RESP_NAK_INVALIDATE,
    /** NAK remote access: rkey 0, unknown, without the access, or the range outside its region. */
    RESP_NAK_ACCESS,

    // UC: nothing is acknowledged; a message that cannot be taken whole is dropped in silence (class D/E of 9.9.3)
    /** A packet sent to a UC requester, which expects none. */
    UC_REQ_DROP_UNEXPECTED,
    /** Packets of a message with a PSN gap before them, dropped until the next FIRST or ONLY. */
    UC_DROP_OUT_OF_SEQUENCE,
    /** A MIDDLE or LAST outside a message, or of another kind than the message in progress. */
    UC_DROP_OPCODE_SEQUENCE,
    /** A payload or DMA length the opcode or the RETH does not allow. */
    UC_DROP_BAD_LENGTH,
    /** A SEND (or WRITE with immediate) with no receive posted. */
    UC_DROP_NO_RECEIVE,
    /** A SEND longer than its receive buffer. */
    UC_DROP_RECEIVE_TOO_SHORT,
    /** A WRITE to rkey 0, an unknown rkey, one without remote write, or outside its region. */
    UC_DROP_ACCESS,
    /** Messages given up part way (a PSN gap, a missing LAST, or one of the drops above). */
    UC_MESSAGES_DROPPED
}
