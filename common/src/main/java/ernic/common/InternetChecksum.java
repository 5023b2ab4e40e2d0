package ernic.common;

import java.lang.foreign.ValueLayout;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;
import static ernic.common.Endian.LE;

/**
 * The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of 16-bit big-endian words,
 * an odd last byte padded with zero. IPv4 headers, ICMP, TCP and UDP (with {@link #pseudoSum}) use it.
 */
public final class InternetChecksum {
    private InternetChecksum() {}

    /** The ones' complement sum of {@code len} bytes at {@code off}, added to {@code seed} (not complemented). */
    public static int sum(byte[] b, int off, int len, int seed) {
        long s = seed & 0xffffffffL;
        int i = off, end = off + len;
        for (; i + 1 < end; i += 2) {
            s += (b[i] & 0xff) << 8 | b[i + 1] & 0xff;
        }
        if (i < end) {
            s += (b[i] & 0xff) << 8;
        }
        return fold(s);
    }

    /** The same over a segment. */
    public static int sum(MemorySegment m, long off, int len, int seed) {
        long s = seed & 0xffffffffL;
        long i = off, end = off + len;
        for (; i + 1 < end; i += 2) {
            s += BE.u16(m, i);
        }
        if (i < end) {
            s += (m.get(ValueLayout.JAVA_BYTE, i) & 0xff) << 8;
        }
        return fold(s);
    }

    /** The checksum of a range (its checksum field zero), seeded with a pseudo-header's {@link #pseudoSum}. */
    public static int of(byte[] b, int off, int len, int seed) {
        return ~sum(b, off, len, seed) & 0xffff;
    }

    /** The checksum of a range of a segment (its checksum field zero). */
    public static int of(MemorySegment m, long off, int len) {
        return ~sum(m, off, len, 0) & 0xffff;
    }

    /** The IPv4 pseudo-header's sum for TCP and UDP (RFC 9293 3.1, RFC 768): addresses, protocol, length. */
    public static int pseudoSum(int src, int dst, int proto, int len) {
        return fold((src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + (long) proto + len);
    }

    private static int fold(long s) {
        while ((s >>> 16) != 0) {
            s = (s & 0xffff) + (s >>> 16);
        }
        return (int) s;
    }
}
