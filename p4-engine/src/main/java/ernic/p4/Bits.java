package ernic.p4;

/** Big-endian bit fields in byte arrays, as headers lay them out on the wire. */
final class Bits {
    private Bits() {
    }

    /** The {@code width} (1..64) bits at bit offset {@code bit} of {@code b}, as an unsigned value. */
    static long read(byte[] b, int bit, int width) {
        if (((bit | width) & 7) == 0) {
            // Whole bytes (most fields of most headers): no shift, no mask.
            long v = 0;
            for (int i = bit >> 3, end = (bit + width) >> 3; i < end; i++) {
                v = (v << 8) | (b[i] & 0xff);
            }
            return v;
        }
        int first = bit >> 3;
        int last = (bit + width - 1) >> 3;
        if (last - first < 8) {
            // The bytes the field spans fit a long: gather them, then drop the bits after the field.
            long v = 0;
            for (int i = first; i <= last; i++) {
                v = (v << 8) | (b[i] & 0xff);
            }
            return truncate(v >>> (7 - ((bit + width - 1) & 7)), width);
        }
        // Nine bytes (a field of 58 to 64 bits not starting on a byte): the head, then the rest.
        int head = 8 - (bit & 7);
        long hi = b[first] & ((1 << head) - 1);
        return (hi << (width - head)) | read(b, bit + head, width - head);
    }

    /** Writes the low {@code width} (1..64) bits of {@code v} at bit offset {@code bit} of {@code b}. */
    static void write(byte[] b, int bit, int width, long v) {
        if (((bit | width) & 7) == 0) {
            for (int i = ((bit + width) >> 3) - 1, first = bit >> 3; i >= first; i--) {
                b[i] = (byte) v;
                v >>>= 8;
            }
            return;
        }
        int first = bit >> 3;
        int last = (bit + width - 1) >> 3;
        if (last - first < 8) {
            // Read the bytes the field spans, replace the field's bits, write them back.
            int shift = 7 - ((bit + width - 1) & 7);
            long mask = (width == 64 ? -1L : (1L << width) - 1) << shift;
            long old = 0;
            for (int i = first; i <= last; i++) {
                old = (old << 8) | (b[i] & 0xff);
            }
            long w = (old & ~mask) | ((v << shift) & mask);
            for (int i = last; i >= first; i--) {
                b[i] = (byte) w;
                w >>>= 8;
            }
            return;
        }
        int head = 8 - (bit & 7);
        write(b, bit + head, width - head, v);
        write(b, bit, head, v >>> (width - head));
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
