package ernic.ionic.rdma;

/**
 * One send WQE on its way to an {@link End}: what the {@link Requester} read and checked. One instance,
 * reused for every WQE (no allocation per operation); valid only during the end's call.
 */
final class Request {
    QueuePair qp;
    /** The WQE's SQ slot (its completion's wqe index). */
    int slot;
    /** The WQE as read from the SQ ring (a V1.Wqe opcode in {@code wqe.op()}). */
    final V1.Wqe wqe = new V1.Wqe();
    /** The WQE's opcode ({@code wqe.op()} in the table), never null while an end has it. */
    WqeOpcode opcode;
    /** The data to send, checked for local read (SEND, WRITE; for a datagram its GRH area first). */
    final Spans payload = new Spans();
    /** Where an answer lands, checked for local write: a READ's SGEs, an atomic's 8-byte result. */
    final Spans local = new Spans();
    /** A READ's length. */
    long length;
    /** A datagram's address handle, destination QPN and Q_Key (the QP's own for a controlled key). */
    AddressHandle ah;
    int destQpn, qkey;
    /** Bytes the WQE moved, once it succeeds (set by the end). */
    long moved;
    /** It went out as RoCEv2 packets (the wire end traces those itself). */
    boolean wire;

    boolean solicited() {
        return (wqe.flags() & V1.Wqe.FLAG_SOL) != 0;
    }

    boolean fenced() {
        return (wqe.flags() & V1.Wqe.FLAG_FENCE) != 0;
    }
}
