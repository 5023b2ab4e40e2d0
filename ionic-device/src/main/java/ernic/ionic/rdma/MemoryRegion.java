package ernic.ionic.rdma;

/**
 * An MR or a memory window under its index (the MR table holds both: ionic_rdma takes a window's id from
 * the MR ids and creates it with CREATE_MR and IONIC_MRF_IS_MW): the 8-bit key of the current lkey/rkey,
 * the va range, the access flags, and for an MR its page table (null for a fast-registration MR not yet
 * registered, and always for a window).
 *
 * <p>A window ({@link #windowType} 1 or 2) opens part of an MR once bound: {@link #va} and {@link #length}
 * are then the bound range in the MR's address space, {@link #flags} the rights the bind granted,
 * {@link #target} the MR and, for type 2, {@link #boundQp} the QP it was bound on; {@link #valid} says it is
 * bound (a type 1 window is never invalidated, only rebound; a type 2 one is free again after invalidation).
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
    /** 0 for an MR; 1 or 2 for a memory window of that type. */
    final int windowType;
    /** A bound window: the MR it opens (null while unbound). */
    MemoryRegion target;
    /** A bound type 2 window: the QP it was bound on, the only one whose peers may use it. */
    QueuePair boundQp;
    /** An MR: windows bound to it. While there are any it is not deregistered, invalidated or registered again. */
    int windows;

    MemoryRegion(int index) {
        this(index, 0);
    }

    MemoryRegion(int index, int windowType) {
        this.index = index;
        this.windowType = windowType;
    }

    int lkey() {
        return index << 8 | key;
    }

    boolean window() {
        return windowType != 0;
    }

    /** True when {@code [va, va + len)} is inside the region (no wrap). */
    boolean covers(long at, long len) {
        return valid && mem != null && within(offset(at), len, length);
    }

    /** True when {@code len} bytes from offset {@code off} lie inside {@code [0, length)} (unsigned, no wrap). */
    static boolean within(long off, long len, long length) {
        return len >= 0 && Long.compareUnsigned(off, length) <= 0 && Long.compareUnsigned(len, length - off) <= 0;
    }

    /** Offset inside the region of address {@code at} (after {@link #covers}). */
    long offset(long at) {
        return (flags & V1.MRF_ZERO_BASED) != 0 ? at : at - va;
    }

    /** A window lets go of its MR (and QP): unbound, as after allocation (type 1) or invalidation (type 2). */
    void unbind() {
        if (target != null) {
            target.windows--;
            target = null;
        }
        boundQp = null;
        va = 0;
        length = 0;
        flags = 0;
        valid = false;
    }
}
