package ernic.ionic.rdma;

/**
 * Where a requester's operation is carried out: a QP of this device ({@link LocalEnd}, which calls the
 * {@link Responder} at once), a peer server's guest ({@link RemotePath}: the request is sent, the WQE waits,
 * the reply completes it) or an in-process peer that bound the QP ({@link BoundEnd}, for an
 * {@link ernic.attach.Attachment}). The {@link Requester} has read the WQE and checked its local memory before it
 * calls an end; an end moves data only through the request's spans and the responder. A new kind of end implements
 * this and is chosen in {@code Requester.end}; a new in-process peer needs neither: it is an attachment.
 *
 * <p>Each method returns the WQE's final ionic status, or {@link Requester#PENDING} (answered later through
 * {@link Requester#answered}), {@link Requester#WAIT_RECEIVE} (the destination has no receive posted: the
 * SQ waits for one, at most 5 s) or {@link Requester#WAIT_ROOM} (the way to the destination is full: the
 * SQ stops until {@link Requester#retry} runs it again). The bytes the WQE moved go in {@link Request#moved}.
 */
interface End {
    /** SEND, SEND_IMM or SEND_INV on a connected QP, with {@link Request#payload}. */
    int send(Request r);

    /** RDMA WRITE or WRITE_IMM of {@link Request#payload} to the WQE's rkey and remote address. */
    int write(Request r);

    /** RDMA READ of {@link Request#length} bytes into {@link Request#local}. */
    int read(Request r);

    /** ATOMIC_CS or ATOMIC_FA; the old value goes to {@link Request#local} (8 bytes). */
    int atomic(Request r);

    /** A datagram (its GRH first in {@link Request#payload}) to {@link Request#ah}. */
    int datagram(Request r);
}
