package ernic.ionic.rdma;

/** An RDMA admin queue (devcmd CREATE_ADMINQ): 64-byte slots in contiguous memory, and its CQ. */
final class AdminQueue {
    final int id;
    final int cqId;
    final long ring;
    final int depthLog2;
    /** The doorbell page its doorbells must come on (0: the kernel's). */
    int dbid;
    /** The host's producer index (last doorbell) and the device's consumer index. */
    int prod, cons;
    long executed;
    /** The slot of the MODIFY_QP waiting for a GID's owner (-1: none), and since when. */
    int waitSlot = -1;
    long waitSince;

    AdminQueue(int id, int cqId, long ring, int depthLog2) {
        this.id = id;
        this.cqId = cqId;
        this.ring = ring;
        this.depthLog2 = depthLog2;
    }

    int depth() {
        return 1 << depthLog2;
    }

    int mask() {
        return depth() - 1;
    }

    /** Slots posted and not yet consumed. */
    int pending() {
        return (prod - cons) & mask();
    }
}
