package ernic.roce.rc;

import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The send side of a connected QP on the wire, as the device drives it: {@link RcRequester} (reliable) or
 * {@link UcRequester} (unreliable). Single-threaded, no clock of its own: {@link #poll} transmits,
 * {@link #receive} takes a response, {@link #tick} fires what {@link #nextDeadline} announced.
 */
public interface ConnectedRequester {
    /**
     * A {@link #post} flag: the sender asks for a solicited event at the receiver (IBV_SEND_SOLICITED), carried
     * as the SE bit of the message's last packet when it is a SEND or an RDMA WRITE with immediate.
     */
    int SOLICITED = 1;
    /**
     * A {@link #post} flag (IBV_SEND_FENCE): the message is not begun until every RDMA READ and atomic posted
     * before it has completed (IBTA vol. 1, 10.8.3.3).
     */
    int FENCE = 2;

    /**
     * Posts a message. {@code flags} are {@link #SOLICITED} and {@link #FENCE}; {@code length} is ignored for
     * atomics (8 bytes); {@code va} and {@code rkey} are the remote ones (not used by SENDs); {@code immOrInv} is
     * the immediate data or the rkey to invalidate; {@code swapAdd} and {@code compare} are the atomic's operands.
     *
     * @return false when the send queue is full
     */
    boolean post(long wrId, RcOp op, int flags, int length, long va, int rkey, int immOrInv, long swapAdd,
                 long compare);

    /**
     * Transmits up to {@code budget} packets.
     *
     * @return the packets transmitted
     */
    int poll(long now, int budget);

    /** Takes one packet addressed to this side (a response, on RC). */
    void receive(TransportHeader r, MemorySegment data, long offset, int length, long now);

    /** Fires the timers due by {@code now}. */
    void tick(long now);

    /** When {@link #tick} next has work, or Long.MAX_VALUE. */
    long nextDeadline();

    /** The QP failed: nothing more is sent, every message has completed. */
    boolean failed();

    /** Messages posted and not yet completed. */
    int outstanding();
}
