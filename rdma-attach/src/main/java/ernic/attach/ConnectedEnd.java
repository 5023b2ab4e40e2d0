package ernic.attach;

/**
 * The end a connected guest QP is bound to ({@link GuestQps#bind}): what the guest's requests on it do. An
 * attached peer posts no buffers for the guest's RDMA WRITE, READ or atomics: the device answers them with a
 * remote access error, as a real peer without such buffers does. Device thread only.
 */
public interface ConnectedEnd {
    /** A SEND (or SEND_IMM, SEND_INV) of {@code payload}; the status completes the guest's WQE. */
    WcStatus send(Payload payload);
}
