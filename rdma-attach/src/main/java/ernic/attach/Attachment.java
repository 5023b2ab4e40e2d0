package ernic.attach;

/**
 * An in-process peer on the device's RDMA side, at an address of its own (the NVMe-oF target). The device asks
 * each attachment whether it owns a destination GID: a guest QP addressed to it is served here, not by the mesh
 * or the wire; its datagrams are offered to it ({@link #datagram}); the guest QPs it connects are bound to it
 * through {@link GuestQps#bind}. Everything runs on the device thread; the device names no attachment.
 */
public interface Attachment {
    /** True when {@code gid} (16 bytes) is this peer's address. */
    boolean owns(byte[] gid);

    /**
     * A datagram a guest QP sent to this peer's address (GSI: a CM MAD to QP 1). True when the peer took it;
     * false when it found no taker and is lost, as on a wire. The sender completes either way.
     */
    boolean datagram(Datagram d);

    /** The guest posted receives on QP {@code qpn} (and after every SQ doorbell, with -1): deliver what waited. */
    void receivesPosted(int qpn);

    /** The RDMA tick (every 100 ms): time-outs, keep-alive. */
    void tick();

    /** Guest QP {@code qpn} is destroyed: whatever it was bound to ends with it. */
    void forget(int qpn);

    /** Power-on reset of the device: every connection ends, nothing waits for the guest any more. */
    void reset();
}
