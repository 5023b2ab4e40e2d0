package ernic.ionic.eth;

/**
 * Device-side state of one Ethernet queue: where its rings are (from Q_INIT), the host's producer
 * index (from the last doorbell), the device's consumer index, and the completion ring's index and
 * color. Q_INIT restarts the indices at 0 and the color at 1.
 */
final class EthQueue {
    final int type;
    final int index;
    boolean initialized;
    boolean enabled;
    boolean irq;
    boolean sg;
    int ver;
    int log2;
    int mask;
    long ringBase;
    long cqBase;
    long sgBase;
    int intr;
    /** The doorbell page its doorbells must come on (Q_INIT pid; 0 for the kernel). */
    int pid;
    /** Host producer index from the last doorbell. */
    int head;
    /** Next descriptor the device consumes. */
    int tail;
    /** Next completion slot and its color. */
    int cqIndex;
    boolean color;
    /** Bumped by every Q_INIT, so a loop notices its queue was re-initialized under it. */
    int generation;

    EthQueue(int type, int index) {
        this.type = type;
        this.index = index;
    }

    void init(int ver, int log2, long ringBase, long cqBase, long sgBase, int intr, boolean irq, boolean sg,
              boolean enable) {
        this.initialized = true;
        this.enabled = enable;
        this.ver = ver;
        this.log2 = log2;
        this.mask = (1 << log2) - 1;
        this.ringBase = ringBase;
        this.cqBase = cqBase;
        this.sgBase = sgBase;
        this.intr = intr;
        this.irq = irq;
        this.sg = sg;
        head = tail = cqIndex = 0;
        color = true;
        generation++;
    }

    void clear() {
        initialized = enabled = irq = sg = false;
        ver = log2 = mask = intr = head = tail = cqIndex = 0;
        ringBase = cqBase = sgBase = 0;
        color = true;
        generation++;
    }

    int depth() {
        return mask + 1;
    }

    boolean empty() {
        return tail == head;
    }

    /** Advances the completion ring; the color flips when it wraps to slot 0. */
    void nextCompletion() {
        cqIndex = cqIndex + 1 & mask;
        if (cqIndex == 0) {
            color = !color;
        }
    }
}
