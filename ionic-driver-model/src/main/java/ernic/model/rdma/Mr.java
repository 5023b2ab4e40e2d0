package ernic.model.rdma;

/** A registered memory region; lkey = rkey = index << 8 | an 8-bit key. */
public record Mr(int key, long va, long length, int access) {
    public int lkey() {
        return key;
    }

    public int rkey() {
        return key;
    }
}
