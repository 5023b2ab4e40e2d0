package ernic.model.rdma;

import ernic.model.IonicDriverModel;

import java.io.IOException;
import java.nio.ByteBuffer;

import static ernic.model.rdma.Fw.*;

/**
 * The RDMA event queues: one per MSI-X vector after vector 0 (the Ethernet admin queue's), created at probe over
 * the Ethernet admin queue; an EQE is one __be32 {qid, code, type, color}. A CQ event marks its {@link Cq}.
 */
final class Events {
    static final int DEPTH_LOG2 = 10, MAX_EQS = 4;

    private final IonicDriverModel drv;
    private final Cq[] cqs;
    final int count;
    private final long[] ring = new long[MAX_EQS];
    private final int[] cons = new int[MAX_EQS], intr = new int[MAX_EQS];
    private final boolean[] color = new boolean[MAX_EQS];

    Events(IonicDriverModel drv, Cq[] cqs, int identityCount) {
        this.drv = drv;
        this.cqs = cqs;
        this.count = Math.min(Math.min(identityCount, MAX_EQS), drv.vectors() - 1);
    }

    /** RDMA_CREATE_EQ for each EQ, {@code eqBase + i} on interrupt i + 1, masked while it is created. */
    void create(int eqBase) throws IOException {
        for (int i = 0; i < count; i++) {
            ring[i] = drv.alloc((long) EQE_SIZE << DEPTH_LOG2);
            intr[i] = i + 1;
            color[i] = true;
            drv.intrMask(intr[i], true, true);
            ByteBuffer c = RdmaVerbs.queueCmd(CMD_RDMA_CREATE_EQ, eqBase + i, intr[i], DEPTH_LOG2, 2, ring[i]);
            IonicDriverModel.expectOk(drv.adminq(c), "RDMA_CREATE_EQ " + i);
            drv.intrMask(intr[i], false, true);
        }
    }

    /**
     * Waits for the event of {@code cq}: reads new EQEs of its EQ, and when there are none waits for the EQ's
     * MSI-X, then gives the interrupt back (credits with UNMASK) as the EQ handler does.
     */
    boolean await(Cq cq, int millis) throws IOException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        for (;;) {
            drain(cq.eq);
            if (cq.event) {
                cq.event = false;
                return true;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            if (drv.awaitInterrupt(intr[cq.eq], (int) Math.min(left, 100)) > 0) {
                drain(cq.eq);
                drv.intrUnmask(intr[cq.eq]);
            }
        }
    }

    private void drain(int eq) {
        while (next(eq) != -1) {
            // each EQE marks its CQ
        }
    }

    /**
     * The next EQE of EQ {@code eq} (by its color; a CQ event marks its {@link Cq}), or -1 when there is none.
     * An EQE with its color bit set is never -1, and one without is read only on odd passes of the ring.
     */
    int next(int eq) {
        long at = ring[eq] - drv.ramIova() + (long) EQE_SIZE * cons[eq];
        int evt = be32(drv.ram(), at);
        if (((evt & EQE_COLOR) != 0) != color[eq]) {
            return -1;
        }
        cons[eq] = (cons[eq] + 1) & ((1 << DEPTH_LOG2) - 1);
        if (cons[eq] == 0) {
            color[eq] = !color[eq];
        }
        int qid = evt >>> EQE_QID_SHIFT;
        if ((evt >>> EQE_TYPE_SHIFT & 7) == EQE_TYPE_CQ && qid < cqs.length && cqs[qid] != null) {
            cqs[qid].event = true;
        }
        return evt;
    }
}
