package ernic.common;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian, unaligned accessors: every ionic Ethernet and device-command field is little-endian. */
public final class Le {
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Le() {}

    public static int u8(MemorySegment s, long at) {
        return s.get(U8, at) & 0xff;
    }

    public static int u16(MemorySegment s, long at) {
        return s.get(U16, at) & 0xffff;
    }

    /** The raw 32 bits; use {@link Integer#toUnsignedLong} where the value is unsigned. */
    public static int u32(MemorySegment s, long at) {
        return s.get(U32, at);
    }

    public static long u64(MemorySegment s, long at) {
        return s.get(U64, at);
    }

    public static void put8(MemorySegment s, long at, int v) {
        s.set(U8, at, (byte) v);
    }

    public static void put16(MemorySegment s, long at, int v) {
        s.set(U16, at, (short) v);
    }

    public static void put32(MemorySegment s, long at, int v) {
        s.set(U32, at, v);
    }

    public static void put64(MemorySegment s, long at, long v) {
        s.set(U64, at, v);
    }

    /** Writes {@code text} as ASCII into a {@code width}-byte NUL-padded field (at most width - 1 characters). */
    public static void putString(MemorySegment s, long at, int width, String text) {
        s.asSlice(at, width).fill((byte) 0);
        int n = Math.min(text.length(), width - 1);
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            s.set(U8, at + i, (byte) (c < 0x20 || c > 0x7e ? '?' : c));
        }
    }

    /** Reads a NUL-terminated ASCII field of {@code width} bytes. */
    public static String string(MemorySegment s, long at, int width) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < width; i++) {
            int c = u8(s, at + i);
            if (c == 0) {
                break;
            }
            b.append((char) c);
        }
        return b.toString();
    }
}
