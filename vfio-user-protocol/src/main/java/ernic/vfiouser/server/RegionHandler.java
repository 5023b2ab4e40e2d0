package ernic.vfiouser.server;

import java.lang.foreign.MemorySegment;

/**
 * Region accesses. The framework has checked that {@code [offset, offset + size)} lies inside the
 * region. The segment is valid only during the call. Guest data is untrusted: a handler must not
 * throw on odd values; it answers as the hardware would.
 */
public interface RegionHandler {
    /** Fill {@code dst} with the bytes at {@code offset}. */
    void read(long offset, MemorySegment dst);

    /** Apply the bytes of {@code src} at {@code offset}. */
    void write(long offset, MemorySegment src);
}
