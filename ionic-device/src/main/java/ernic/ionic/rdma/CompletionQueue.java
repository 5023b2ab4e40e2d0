package ernic.ionic.rdma;

import ernic.ionic.layout.Be;
import ernic.ionic.base.Dma;

import java.lang.foreign.MemorySegment;

/**
 * An RDMA completion queue: a ring of 32-byte CQEs (stride 2^stride_log2), its EQ, the device's
 * producer index and color, and the arm state. Arming is a level: a CQE written while armed sends
 * one EQE {CQ, NOTIFY, cqid} and disarms; an arm while CQEs the host has not been told about are
 * waiting fires at once. A new CQ starts armed.
 */
final class CompletionQueue {
    static final int ARM_NONE = 0, ARM_ANY = 1, ARM_SOLICITED = 2;

    final int id;
    final int eqId;
    final PageTable mem;
    final int depthLog2, strideLog2;
    /** The doorbell page its doorbells must come on (dbid_flags; 0 for the kernel's). */
    int dbid;
    private int prod;
    private boolean color = true;
    /**
     * A new CQ starts armed: libionic defers ibv_req_notify_cq's arm doorbell to the next poll or
     * post, so a consumer that arms and then sleeps (the passive side of ibv_rc_pingpong -e, rping)
     * needs the first CQE to raise an event. An extra event is harmless: every host re-polls.
     */
    private int armed = ARM_ANY;
    /** A CQE was written since the last event (or the host's credit covered it). */
    private boolean unnotified;
    private long written;

    CompletionQueue(int id, int eqId, PageTable mem, int depthLog2, int strideLog2) {
        this.id = id;
        this.eqId = eqId;
        this.mem = mem;
        this.depthLog2 = depthLog2;
        this.strideLog2 = strideLog2;
    }

    int depth() {
        return 1 << depthLog2;
    }

    /**
     * Writes {@code cqe} (32 bytes, color bit clear) at the producer index with the current color,
     * the word holding the color last. Returns true when an event is due (the caller posts the EQE).
     */
    boolean write(Dma dma, MemorySegment cqe, boolean solicited) {
        int qtf = Be.u32(cqe, V1.Cqe.QID_TYPE_FLAGS);
        Be.put32(cqe, V1.Cqe.QID_TYPE_FLAGS, color ? qtf | V1.Cqe.COLOR : qtf & ~V1.Cqe.COLOR);
        long at = mem.addr((long) prod << strideLog2);
        if (at >= 0) {
            dma.publish(at, cqe, V1.Cqe.SIZE, V1.Cqe.QID_TYPE_FLAGS, 4);
        }
        prod = (prod + 1) & (depth() - 1);
        if (prod == 0) {
            color = !color;
        }
        written++;
        boolean error = (qtf & V1.Cqe.ERROR) != 0;
        if (armed == ARM_ANY || armed == ARM_SOLICITED && (solicited || error)) {
            armed = ARM_NONE;
            unnotified = false;
            return true;
        }
        unnotified = true;
        return false;
    }

    /** A CQ doorbell; returns true when an event is due now. */
    boolean doorbell(int ring, int index) {
        switch (ring) {
            case 0 -> {
                if ((index & (depth() - 1)) == prod) {
                    unnotified = false; // the host has read everything
                }
                return false;
            }
            case ARM_ANY, ARM_SOLICITED -> {
                if (unnotified) {
                    unnotified = false;
                    armed = ARM_NONE;
                    return true;
                }
                armed = ring;
                return false;
            }
            default -> {
                return false;
            }
        }
    }

    long written() {
        return written;
    }

    int producer() {
        return prod;
    }
}
