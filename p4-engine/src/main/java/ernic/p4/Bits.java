package ernic.p4;

/** Big-endian bit fields in byte arrays, as headers lay them out on the wire. */
final class Bits {
    private Bits() {
    }

    /** The {@code width} (1..64) bits at bit offset {@code bit} of {@code b}, as an unsigned value. */
    static long read(byte[] b, int bit, int width) {
        long v = 0;
        int end = bit + width;
        int i = bit;
        // Byte-aligned runs go a byte at a time; the edges a bit at a time.
        while (i < end) {
            if ((i & 7) == 0 && end - i >= 8) {
                v = (v << 8) | (b[i >> 3] & 0xff);
                i += 8;
            } else {
                v = (v << 1) | ((b[i >> 3] >> (7 - (i & 7))) & 1);
                i++;
            }
        }
        return v;
    }

    /** Writes the low {@code width} (1..64) bits of {@code v} at bit offset {@code bit} of {@code b}. */
    static void write(byte[] b, int bit, int width, long v) {
        int i = bit + width - 1;
        while (i >= bit) {
            if ((i & 7) == 7 && i - bit >= 7) {
                b[i >> 3] = (byte) v;
                v >>>= 8;
                i -= 8;
            } else {
                int mask = 1 << (7 - (i & 7));
                b[i >> 3] = (byte) ((v & 1) != 0 ? b[i >> 3] | mask : b[i >> 3] & ~mask);
                v >>>= 1;
                i--;
            }
        }
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
