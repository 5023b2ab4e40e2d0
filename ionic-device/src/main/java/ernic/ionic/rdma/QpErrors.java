package ernic.ionic.rdma;

/**
 * What happens to a connected QP after one of its own completions carries an error: as on hardware (and
 * Soft-RoCE), it stops and moves to ERROR, and what it still had posted is flushed. The data path
 * implements it; the requester and the responder report the error completions they post.
 */
interface QpErrors {
    /** {@code qp} posted an error completion (a send WQE or a receive failed). */
    void failed(QueuePair qp);
}
