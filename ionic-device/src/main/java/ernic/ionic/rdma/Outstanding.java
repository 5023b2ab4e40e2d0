package ernic.ionic.rdma;

/**
 * A QP's issued send WQEs not yet completed, by SQ slot: opcode, status ({@link Requester#PENDING} until
 * an end answers), bytes moved; and for requests sent to a peer their sequence number, when they went and
 * the READ budget they asked. Completions are posted in SQ order from {@link #done}.
 */
final class Outstanding {
    final int[] op, status;
    final long[] seq, bytes, sinceNanos;
    /** READ data a slot's request asked of its node's 32 MiB budget (0 when none). */
    final long[] readAsked;
    /** The next SQ slot to complete; the WQEs from here to the SQ's consumer index were issued. */
    int done;
    long nextSeq = 1;
    /**
     * Requests numbered below this were given up (flushed or timed out). A flush or a time-out gives up
     * every request issued so far, and later ones are numbered higher, so this one number tells which
     * queued requests to take back.
     */
    long givenUpBelow = 1;

    Outstanding(int depth) {
        op = new int[depth];
        status = new int[depth];
        seq = new long[depth];
        bytes = new long[depth];
        sinceNanos = new long[depth];
        readAsked = new long[depth];
    }

    /** Whether {@code slot} is in the window of issued, not yet completed WQEs [done, consumer index). */
    boolean issued(int slot, WorkQueue sq) {
        int mask = sq.mask();
        return slot >= 0 && slot <= mask && ((slot - done) & mask) < ((sq.cons - done) & mask);
    }
}
