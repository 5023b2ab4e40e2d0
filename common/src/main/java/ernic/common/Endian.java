package ernic.common;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Unaligned accessors in one byte order: {@link #LE} for every ionic Ethernet and device-command field, {@link #BE}
 * for the RDMA CQE, EQE and WQE fields marked __be in ionic_fw.h and for network headers. A record, so that the JIT
 * folds the layouts of the two constants as it would static fields.
 */
public record Endian(ValueLayout.OfShort u16, ValueLayout.OfInt u32, ValueLayout.OfLong u64) {
    public static final Endian LE = of(ByteOrder.LITTLE_ENDIAN);
    public static final Endian BE = of(ByteOrder.BIG_ENDIAN);

    private static Endian of(ByteOrder order) {
        return new Endian(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(order),
                ValueLayout.JAVA_INT_UNALIGNED.withOrder(order), ValueLayout.JAVA_LONG_UNALIGNED.withOrder(order));
    }

    public int u8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at) & 0xff;
    }

    public int u16(MemorySegment s, long at) {
        return s.get(u16, at) & 0xffff;
    }

    /** The raw 32 bits; use {@link Integer#toUnsignedLong} where the value is unsigned. */
    public int u32(MemorySegment s, long at) {
        return s.get(u32, at);
    }

    public long u64(MemorySegment s, long at) {
        return s.get(u64, at);
    }

    public void put8(MemorySegment s, long at, int v) {
        s.set(ValueLayout.JAVA_BYTE, at, (byte) v);
    }

    public void put16(MemorySegment s, long at, int v) {
        s.set(u16, at, (short) v);
    }

    public void put32(MemorySegment s, long at, int v) {
        s.set(u32, at, v);
    }

    public void put64(MemorySegment s, long at, long v) {
        s.set(u64, at, v);
    }

    /** Writes {@code text} as ASCII into a {@code width}-byte NUL-padded field (at most width - 1 characters). */
    public static void putString(MemorySegment s, long at, int width, String text) {
        s.asSlice(at, width).fill((byte) 0);
        int n = Math.min(text.length(), width - 1);
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            s.set(ValueLayout.JAVA_BYTE, at + i, (byte) (c < 0x20 || c > 0x7e ? '?' : c));
        }
    }

    /** Reads a NUL-terminated ASCII field of {@code width} bytes. */
    public static String string(MemorySegment s, long at, int width) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < width; i++) {
            int c = s.get(ValueLayout.JAVA_BYTE, at + i) & 0xff;
            if (c == 0) {
                break;
            }
            b.append((char) c);
        }
        return b.toString();
    }
}
