package ernic.attach;

import java.lang.foreign.MemorySegment;

/**
 * What the device offers an {@link Attachment}: the guest's QPs as a peer on the wire would reach them, and the
 * guest's memory by rkey. Device thread only.
 */
public interface GuestQps {
    /** The outcome of delivering a message into a guest QP's receive queue. */
    enum Delivery {
        /** In the next posted receive, with its completion. */
        DELIVERED,
        /** No receive posted (receiver not ready): nothing happened; try again when receives are posted. */
        NO_RECEIVE,
        /** The receive failed (too short, a bad key): the QP is in ERROR now, as on a wire. */
        FAILED
    }

    /** Guest memory by the keys the guest handed out, as a remote peer's READ and WRITE reach it. */
    HostMemory memory();

    /**
     * Delivers a datagram of {@code payload} into guest UD QP {@code qpn}'s next receive, with a GRH from
     * {@code sourceGid} to {@code destGid}, under {@code qkey}, as from Ethernet MAC {@code sourceMac} on
     * {@code vlan} (-1: none). {@link Delivery#NO_RECEIVE} when the QP is no UD QP or has no receive posted.
     */
    Delivery datagram(int qpn, int qkey, byte[] sourceGid, byte[] destGid, MemorySegment payload, long sourceMac,
                      int vlan);

    /**
     * Binds guest QP {@code qpn} to {@code end}: its SENDs go there. The QP must exist, be RC, have destination QP
     * {@code peerQpn} and an address vector to a GID {@code owner} owns, and be bound to nothing. Null when bound,
     * else why not (a few words that follow "the QP ").
     */
    String bind(int qpn, int peerQpn, Attachment owner, ConnectedEnd end);

    /** Undoes {@link #bind} (nothing when the QP is bound to another end or gone). */
    void unbind(int qpn, ConnectedEnd end);

    /** True when guest QP {@code qpn} takes receives now (RTR, RTS or SQD). */
    boolean receiving(int qpn);

    /**
     * Delivers the {@code length} bytes at {@code offset} of {@code message} into connected guest QP {@code qpn}'s
     * next receive as a SEND from peer QP {@code srcQpn}; with {@code invalidate}, a SEND_INV that invalidates
     * {@code rkey}.
     */
    Delivery send(int qpn, int srcQpn, MemorySegment message, long offset, long length, boolean invalidate, int rkey);

    /** Guest QP {@code qpn} goes to ERROR (its connection broke), what it had is flushed. */
    void fail(int qpn);

    /** Counts and logs (once per cause) a refusal of the guest's input. */
    void refuse(String cause, String detail);
}
