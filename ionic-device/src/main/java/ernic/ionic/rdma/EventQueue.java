package ernic.ionic.rdma;

import ernic.ionic.base.Dma;
import ernic.ionic.regs.InterruptController;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;

/**
 * An RDMA event queue (devcmd CREATE_EQ): a ring of 4-byte BE32 EQEs in contiguous guest memory
 * and the interrupt index it raises. The expected color starts at 1 and flips on each wrap. There
 * is no EQ doorbell: the device only learns of progress through the interrupt unmask.
 */
final class EventQueue {
    final int id;
    final int intr;
    private final long ring;
    private final int depth;
    private int prod;
    private boolean color = true;
    private long posted;
    private final MemorySegment buf = Arena.ofAuto().allocate(V1.Eqe.SIZE, 4);

    EventQueue(int id, int intr, long ring, int depthLog2) {
        this.id = id;
        this.intr = intr;
        this.ring = ring;
        this.depth = 1 << depthLog2;
    }

    /** Writes one EQE and raises the EQ's interrupt; false when the write missed guest memory. */
    boolean post(Dma dma, InterruptController ic, int type, int code, int qid) {
        BE.put32(buf, 0, V1.Eqe.encode(type, code, qid, color));
        boolean ok = dma.write(ring + (long) prod * V1.Eqe.SIZE, buf, 0, V1.Eqe.SIZE);
        prod = (prod + 1) & (depth - 1);
        if (prod == 0) {
            color = !color;
        }
        posted++;
        ic.raise(intr);
        return ok;
    }

    long posted() {
        return posted;
    }
}
