package ernic.vfiouser.sys;

import io.netty.buffer.ByteBuf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/** Native memory by address, for copies to and from a direct buffer's memory address. */
public final class NativeMemory {
    /**
     * All of the address space as one segment: a copy at a direct ByteBuf's {@code memoryAddress()} makes no
     * segment (no allocation) per copy. It checks no bounds: the caller keeps within its buffer.
     */
    public static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private NativeMemory() {
    }

    /**
     * Copies {@code count} bytes of {@code src} at {@code index} to the start of {@code buffer}, allocating nothing:
     * by address from a direct ByteBuf, from the array of a heap one, else through {@code view} ({@code buffer} as a
     * ByteBuffer, made once by its owner).
     */
    public static void copy(ByteBuf src, int index, MemorySegment buffer, ByteBuffer view, int count) {
        if (src.hasMemoryAddress()) {
            MemorySegment.copy(ALL, src.memoryAddress() + index, buffer, 0, count);
        } else if (src.hasArray()) {
            MemorySegment.copy(src.array(), src.arrayOffset() + index, buffer, ValueLayout.JAVA_BYTE, 0, count);
        } else {
            src.getBytes(index, view.clear().limit(count));
        }
    }

    /** Writes the first {@code count} bytes of {@code buffer} (with its {@code view}, as above) to {@code dst}. */
    public static void append(MemorySegment buffer, ByteBuffer view, int count, ByteBuf dst) {
        int at = dst.writerIndex();
        if (dst.hasMemoryAddress()) {
            MemorySegment.copy(buffer, 0, ALL, dst.memoryAddress() + at, count);
            dst.writerIndex(at + count);
        } else if (dst.hasArray()) {
            MemorySegment.copy(buffer, ValueLayout.JAVA_BYTE, 0, dst.array(), dst.arrayOffset() + at, count);
            dst.writerIndex(at + count);
        } else {
            dst.writeBytes(view.clear().limit(count));
        }
    }
}
