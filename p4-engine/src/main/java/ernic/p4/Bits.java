package ernic.p4;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Big-endian bit fields in byte arrays, as headers lay them out on the wire. */
final class Bits {
    private Bits() {
    }

    /** A big-endian long at any byte offset of a byte array: one load or store for most fields. */
    private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** The {@code width} (1..64) bits at bit offset {@code bit} of {@code b}, as an unsigned value. */
    static long read(byte[] b, int bit, int width) {
        int first = bit >> 3;
        int off = bit & 7;
        if (off + width <= 64 && first + 8 <= b.length) {
            // The field lies in the eight bytes from its first: load them, drop the bits before and after it.
            return ((long) LONG_BE.get(b, first) << off) >>> (64 - width);
        }
        int last = (bit + width - 1) >> 3;
        if (last - first < 8) {
            // Near the end of the array: gather the bytes the field spans, then drop the bits after it.
            long v = 0;
            for (int i = first; i <= last; i++) {
                v = (v << 8) | (b[i] & 0xff);
            }
            return truncate(v >>> (7 - ((bit + width - 1) & 7)), width);
        }
        // Nine bytes (a field of 58 to 64 bits not starting on a byte): the head, then the rest.
        int head = 8 - off;
        long hi = b[first] & ((1 << head) - 1);
        return (hi << (width - head)) | read(b, bit + head, width - head);
    }

    /** Writes the low {@code width} (1..64) bits of {@code v} at bit offset {@code bit} of {@code b}. */
    static void write(byte[] b, int bit, int width, long v) {
        if (((bit | width) & 7) == 0) {
            // Whole bytes: stores only, no load of the bytes around the field (which, right after the store of
            // the field before it, would wait for that store).
            for (int i = ((bit + width) >> 3) - 1, first = bit >> 3; i >= first; i--) {
                b[i] = (byte) v;
                v >>>= 8;
            }
            return;
        }
        int first = bit >> 3;
        int off = bit & 7;
        long bits = width == 64 ? -1L : (1L << width) - 1;
        if (off + width <= 64 && first + 8 <= b.length) {
            // Replace the field's bits in the eight bytes from its first.
            int shift = 64 - off - width;
            long old = (long) LONG_BE.get(b, first);
            LONG_BE.set(b, first, (old & ~(bits << shift)) | ((v & bits) << shift));
            return;
        }
        int last = (bit + width - 1) >> 3;
        if (last - first < 8) {
            // Near the end of the array: the same on the bytes the field spans.
            int shift = 7 - ((bit + width - 1) & 7);
            long w = 0;
            for (int i = first; i <= last; i++) {
                w = (w << 8) | (b[i] & 0xff);
            }
            w = (w & ~(bits << shift)) | ((v & bits) << shift);
            for (int i = last; i >= first; i--) {
                b[i] = (byte) w;
                w >>>= 8;
            }
            return;
        }
        int head = 8 - off;
        write(b, bit + head, width - head, v);
        write(b, bit, head, v >>> (width - head));
    }

    /** Stores {@code v} as eight big-endian bytes at byte {@code at} of {@code b} (which must have them). */
    static void putLong(byte[] b, int at, long v) {
        LONG_BE.set(b, at, v);
    }

    /** Copies {@code width} bits from {@code src} at bit {@code sbit} to {@code dst} at bit {@code dbit}. */
    static void copy(byte[] src, int sbit, byte[] dst, int dbit, int width) {
        if ((sbit & 7) == 0 && (dbit & 7) == 0 && (width & 7) == 0) {
            System.arraycopy(src, sbit >> 3, dst, dbit >> 3, width >> 3);
            return;
        }
        for (int done = 0; done < width; ) {
            int n = Math.min(64, width - done);
            write(dst, dbit + done, n, read(src, sbit + done, n));
            done += n;
        }
    }

    /** The value truncated to {@code width} bits (unsigned representation). */
    static long truncate(long v, int width) {
        return width >= 64 ? v : v & ((1L << width) - 1);
    }

    /** The {@code width}-bit two's complement value {@code v}, sign-extended to a long. */
    static long signExtend(long v, int width) {
        return width >= 64 ? v : (v << (64 - width)) >> (64 - width);
    }

    /** Writes {@code v} big-endian into {@code dst[off..off+n)}, keeping its low 8n bits (sign-filled beyond 64). */
    static void longToBytes(long v, byte[] dst, int off, int n) {
        for (int i = n - 1; i >= 0; i--) {
            dst[off + i] = (byte) v;
            v >>= 8;
        }
    }

    /** The low 64 bits of the big-endian bytes {@code src[off..off+n)}. */
    static long bytesToLong(byte[] src, int off, int n) {
        long v = 0;
        for (int i = Math.max(0, n - 8); i < n; i++) {
            v = (v << 8) | (src[off + i] & 0xff);
        }
        return v;
    }
}
