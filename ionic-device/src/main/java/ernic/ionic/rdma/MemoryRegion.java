package ernic.ionic.rdma;

/**
 * An MR (or MW) under its index: the 8-bit key of the current lkey/rkey, the va range, the access
 * flags, and its page table (null for a fast-registration MR not yet registered).
 */
final class MemoryRegion {
    final int index;
    int key;
    long va;
    long length;
    int flags;
    PageTable mem;
    boolean valid;
    /** Its protection domain (CREATE_MR pd_id): only QPs of the same PD may use its keys. */
    int pd;

    MemoryRegion(int index) {
        this.index = index;
    }

    int lkey() {
        return index << 8 | key;
    }

    /** True when {@code [va, va + len)} is inside the region (no wrap). */
    boolean covers(long at, long len) {
        if (!valid || mem == null || len < 0) {
            return false;
        }
        long off = at - va;
        if ((flags & V1.MRF_ZERO_BASED) != 0) {
            off = at;
        }
        return Long.compareUnsigned(off, length) <= 0 && Long.compareUnsigned(len, length - off) <= 0;
    }

    /** Offset inside the region of address {@code at} (after {@link #covers}). */
    long offset(long at) {
        return (flags & V1.MRF_ZERO_BASED) != 0 ? at : at - va;
    }
}
