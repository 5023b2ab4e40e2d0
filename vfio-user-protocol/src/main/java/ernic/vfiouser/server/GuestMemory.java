package ernic.vfiouser.server;

import java.lang.foreign.MemorySegment;

/**
 * Guest physical memory the client shared with DMA_MAP. Addresses and lengths come from the guest:
 * every method checks bounds and overflow and answers null / false instead of throwing.
 */
public interface GuestMemory {
    /**
     * The host memory behind {@code [iova, iova + length)} when it lies inside one mapping with an
     * fd, else null. A mapping the client shared read-only gives a read-only segment (writing it
     * throws). The segment stays valid until the mapping is removed; do not keep it across a return
     * to the event loop.
     */
    MemorySegment segment(long iova, long length);

    /**
     * The data path's way in, which allocates nothing (a {@link #segment} is a new slice each time): the host
     * memory of the whole mapping that holds all of {@code [iova, iova + length)}, when it has an fd and, for
     * {@code write}, is writable (a read-only mapping gives a read-only segment); null otherwise. The range starts
     * at {@code iova - mappingBase(iova)} in it. The same lifetime as a {@link #segment}. By default there is
     * none, and callers use {@link #segment}.
     */
    default MemorySegment mappingMemory(long iova, long length, boolean write) {
        return null;
    }

    /** The first address of the mapping that holds {@code iova}, as {@link #mappingMemory} found it. */
    default long mappingBase(long iova) {
        return iova;
    }

    /** As {@link #segment}, but null unless the mapping is writable: what a device writes through. */
    MemorySegment writableSegment(long iova, long length);

    /**
     * The longest run of host memory starting at {@code iova}, at most {@code length} bytes, within
     * one mapping; null when {@code iova} is not mapped. Read-only for a read-only mapping.
     */
    MemorySegment run(long iova, long length);

    /** Copies guest memory into {@code dst}, across mappings; false when any byte is unmapped. */
    boolean read(long iova, MemorySegment dst);

    /** Copies {@code src} into guest memory, across mappings, marking pages dirty; false when unmapped. */
    boolean write(long iova, MemorySegment src);

    /** Marks {@code [iova, iova + length)} dirty in the mappings' dirty bitmaps (after a direct write). */
    void markDirty(long iova, long length);

    /** Number of mappings. */
    int mappingCount();
}
