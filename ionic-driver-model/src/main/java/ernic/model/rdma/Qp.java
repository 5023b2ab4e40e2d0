package ernic.model.rdma;

import static ernic.model.rdma.Fw.SGE_SIZE;
import static ernic.model.rdma.Fw.WQE_PLD;

/**
 * A queue pair (CREATE_QP) with kernel-style direct rings, and what the driver remembers of each posted WQE to
 * turn CQEs into work completions.
 */
public final class Qp {
    public final int id, type;
    public final Cq sendCq, recvCq;
    final long sqRing, rqRing;
    final int sqStrideLog2, rqStrideLog2, sqMask, rqMask;
    int sqProd, sqCons, rqProd, rqCons, state, ahId = -1;
    /** Remote-op sequence numbers (what the MSN counts). */
    int nextSeq;
    final long[] sqWrId, rqWrId;
    final int[] sqOp, sqLen, sqSeq;
    final boolean[] sqSignaled;

    Qp(int id, int type, Cq sendCq, Cq recvCq, long sqRing, int sqDepthLog2, int sqStrideLog2, long rqRing,
       int rqDepthLog2, int rqStrideLog2) {
        this.id = id;
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.sqRing = sqRing;
        this.rqRing = rqRing;
        this.sqStrideLog2 = sqStrideLog2;
        this.rqStrideLog2 = rqStrideLog2;
        this.sqMask = (1 << sqDepthLog2) - 1;
        this.rqMask = (1 << rqDepthLog2) - 1;
        sqWrId = new long[1 << sqDepthLog2];
        sqOp = new int[1 << sqDepthLog2];
        sqLen = new int[1 << sqDepthLog2];
        sqSeq = new int[1 << sqDepthLog2];
        sqSignaled = new boolean[1 << sqDepthLog2];
        rqWrId = new long[1 << rqDepthLog2];
    }

    public int state() {
        return state;
    }

    /** Send WQEs posted and not yet completed. */
    public int sqOutstanding() {
        return (sqProd - sqCons) & sqMask;
    }

    public int rqOutstanding() {
        return (rqProd - rqCons) & rqMask;
    }

    public int maxInline() {
        return (1 << sqStrideLog2) - WQE_PLD;
    }

    public int maxSge() {
        return Math.min(((1 << sqStrideLog2) - WQE_PLD) / SGE_SIZE, 8);
    }

    /** Forgets every posted WQE, as a move to RESET does. */
    void clearRings() {
        sqProd = sqCons = rqProd = rqCons = nextSeq = 0;
    }
}
