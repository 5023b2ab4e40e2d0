package ernic.counters;

/** One counter of an enum-described set: its name after the set's prefix ("sq.wqes" in "rdma.sq.wqes"). */
public interface Counter {
    String key();
}
