package ernic.model.rdma;

/** A registered memory region in protection domain {@code pd}; lkey = rkey = index << 8 | an 8-bit key. */
public record Mr(int key, long va, long length, int access, int pd) {
    public int lkey() {
        return key;
    }

    public int rkey() {
        return key;
    }
}
