package ernic.model.rdma;

import java.io.IOException;

/** A completion queue (CREATE_CQ): a ring of 32-byte CQEs in guest memory, read by the color bit. */
public final class Cq {
    public final int id;
    private final RdmaVerbs verbs;
    final int eq, depthLog2, mask;
    final long ring;
    int cons, armSeq;
    boolean color = true, event;
    /** A QP whose queue the device flushed: its outstanding WQEs are reported one by one. */
    Qp flushing;
    boolean flushingSq;

    Cq(RdmaVerbs verbs, int id, int eq, int depthLog2, long ring) {
        this.verbs = verbs;
        this.id = id;
        this.eq = eq;
        this.depthLog2 = depthLog2;
        this.mask = (1 << depthLog2) - 1;
        this.ring = ring;
    }

    /** Polls one completion into {@code wc}; false when there is none. */
    public boolean poll(Wc wc) {
        return verbs.dataPath.poll(this, wc);
    }

    /** Returns the slots read so far (ring 0) and arms for the next completion (ring 1) or solicited one (2). */
    public void arm(boolean solicitedOnly) {
        verbs.dataPath.arm(this, solicitedOnly);
    }

    /** Waits up to {@code millis} for this CQ's event (EQE in its EQ, MSI-X). */
    public boolean awaitEvent(int millis) throws IOException {
        return verbs.events.await(this, millis);
    }
}
