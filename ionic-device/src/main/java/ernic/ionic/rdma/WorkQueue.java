package ernic.ionic.rdma;

/** A send or receive queue of a QP: its ring, the host's producer index and the device's consumer index. */
final class WorkQueue {
    final PageTable mem;
    final int depthLog2, strideLog2;
    final boolean spec;
    int prod, cons;

    WorkQueue(PageTable mem, int depthLog2, int strideLog2, boolean spec) {
        this.mem = mem;
        this.depthLog2 = depthLog2;
        this.strideLog2 = strideLog2;
        this.spec = spec;
    }

    int mask() {
        return (1 << depthLog2) - 1;
    }

    boolean empty() {
        return prod == cons;
    }

    /** Bus address of slot {@code index}'s first byte (a WQE never spans a page: stride <= page). */
    long slot(int index) {
        return mem.addr((long) (index & mask()) << strideLog2);
    }

    int stride() {
        return 1 << strideLog2;
    }

    void reset() {
        prod = 0;
        cons = 0;
    }
}
