package ernic.counters;

/** One counter of an enum-described set: its name after the set's prefix ("sq.wqes" in "rdma.sq.wqes"). */
public interface Counter {
    String key();

    /** True for a value that goes up and down (objects in use, bytes queued): a gauge, not a counter. */
    default boolean gauge() {
        return false;
    }
}
