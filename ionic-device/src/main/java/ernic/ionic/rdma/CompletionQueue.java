package ernic.ionic.rdma;

import ernic.ionic.base.Dma;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;

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
     * After {@link #hold} the entry takes its slot but stays unseen until {@link #release}.
     */
    boolean write(Dma dma, MemorySegment cqe, boolean solicited) {
        int qtf = BE.u32(cqe, V1.Cqe.QID_TYPE_FLAGS);
        BE.put32(cqe, V1.Cqe.QID_TYPE_FLAGS, color ? qtf | V1.Cqe.COLOR : qtf & ~V1.Cqe.COLOR);
        long at = mem.addr((long) prod << strideLog2);
        if (holdNext) {
            holdNext = false;
            heldAt = at;
            MemorySegment.copy(cqe, 0, held(), 0, V1.Cqe.SIZE);
        } else {
            if (at >= 0) {
                dma.publish(at, cqe, V1.Cqe.SIZE, V1.Cqe.QID_TYPE_FLAGS, 4);
            }
        }
        prod = (prod + 1) & (depth() - 1);
        if (prod == 0) {
            color = !color;
        }
        written++;
        if (heldAt != NONE) { // the event waits until the held entry is out
            unnotified = true;
            return false;
        }
        return eventDue(solicited || (qtf & V1.Cqe.ERROR) != 0);
    }

    /** Whether the entry just written raises the event: it disarms an armed CQ. */
    private boolean eventDue(boolean solicitedOrError) {
        if (armed == ARM_ANY || armed == ARM_SOLICITED && solicitedOrError) {
            armed = ARM_NONE;
            unnotified = false;
            return true;
        }
        unnotified = true;
        return false;
    }

    // ---------------------------------------------------------------------------------------------
    // An error completion that waits for the flush behind it

    private static final long NONE = Long.MIN_VALUE;
    private boolean holdNext;
    /** Where the held entry goes ({@link #NONE} when nothing is held; negative when unmapped). */
    private long heldAt = NONE;
    private MemorySegment heldEntry;

    /**
     * Holds the next entry back until {@link #release}: an error completion that moves its QP to ERROR is
     * seen by the host only together with the flush completion written after it, if any. libionic
     * (rdma-core 65, ionic_poll_vcq_cq) drops the flush it owes when a poll call fills its array with the
     * error completion and finds no entry after it (pyverbs polls one entry at a time, so that is every
     * such poll): the work posted behind the error would then never complete.
     */
    void hold() {
        holdNext = true;
    }

    /** Whether an entry is held back ({@link #hold}): an error completion waits for what follows it. */
    boolean holding() {
        return heldAt != NONE;
    }

    /** Lets the held entry be seen; returns true when an event is due (an error completion). */
    boolean release(Dma dma) {
        holdNext = false;
        if (heldAt == NONE) {
            return false;
        }
        if (heldAt >= 0) {
            dma.publish(heldAt, heldEntry, V1.Cqe.SIZE, V1.Cqe.QID_TYPE_FLAGS, 4);
        }
        heldAt = NONE;
        return eventDue(true);
    }

    private MemorySegment held() {
        if (heldEntry == null) {
            heldEntry = Arena.ofAuto().allocate(V1.Cqe.SIZE, 8);
        }
        return heldEntry;
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
