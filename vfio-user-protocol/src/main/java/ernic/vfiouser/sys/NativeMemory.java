package ernic.vfiouser.sys;

import java.lang.foreign.MemorySegment;

/** Native memory by address, for copies to and from a direct buffer's memory address. */
public final class NativeMemory {
    /**
     * All of the address space as one segment: a copy at a direct ByteBuf's {@code memoryAddress()} makes no
     * segment (no allocation) per copy. It checks no bounds: the caller keeps within its buffer.
     */
    public static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NativeMemory() {
    }
}
