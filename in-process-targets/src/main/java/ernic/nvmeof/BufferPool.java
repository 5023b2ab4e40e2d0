package ernic.nvmeof;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers for data that goes through the I/O executor (file namespaces) or is built by the
 * controller (Identify, log pages), in power-of-two classes from 4 KiB to the largest transfer. Taken and
 * given back on the device thread; a buffer in use belongs to one command. Grows to the peak number of
 * commands in flight and is reused after that.
 */
final class BufferPool {
    private static final int MIN_SHIFT = 12;
    private final ArrayDeque<ByteBuffer>[] free;

    @SuppressWarnings("unchecked")
    BufferPool(int maxBytes) {
        int classes = 32 - Integer.numberOfLeadingZeros(Math.max(maxBytes - 1, 1)) - MIN_SHIFT + 1;
        free = new ArrayDeque[Math.max(classes, 1)];
        for (int i = 0; i < free.length; i++) {
            free[i] = new ArrayDeque<>();
        }
    }

    private static int classOf(int bytes) {
        int shift = 32 - Integer.numberOfLeadingZeros(Math.max(bytes - 1, 1));
        return Math.max(shift - MIN_SHIFT, 0);
    }

    /** A cleared buffer with {@code bytes} remaining. */
    ByteBuffer take(int bytes) {
        int c = classOf(bytes);
        ByteBuffer b = free[c].poll();
        if (b == null) {
            b = ByteBuffer.allocateDirect(1 << (c + MIN_SHIFT));
        }
        return b.clear().limit(bytes);
    }

    void give(ByteBuffer b) {
        free[classOf(b.capacity())].push(b);
    }
}
