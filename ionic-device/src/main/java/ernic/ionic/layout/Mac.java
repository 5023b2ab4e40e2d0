package ernic.ionic.layout;

import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.LE;

/** A MAC address as a long: the first byte on the wire in bits 47..40. */
public final class Mac {
    public static final long BROADCAST = 0xffff_ffff_ffffL;

    private Mac() {}

    public static long read(MemorySegment s, long at) {
        long v = 0;
        for (int i = 0; i < 6; i++) {
            v = v << 8 | LE.u8(s, at + i);
        }
        return v;
    }

    public static void write(MemorySegment s, long at, long mac) {
        for (int i = 0; i < 6; i++) {
            LE.put8(s, at + i, (int) (mac >>> 8 * (5 - i)));
        }
    }

    /** Group (multicast or broadcast) bit: bit 0 of the first byte. */
    /** Parses {@code xx:xx:xx:xx:xx:xx}; IllegalArgumentException otherwise. */
    public static long parse(String text) {
        String[] bytes = text.trim().split(":");
        if (bytes.length != 6) {
            throw new IllegalArgumentException("MAC '" + text + "': expected six hex bytes separated by ':'");
        }
        long mac = 0;
        for (String b : bytes) {
            if (b.length() != 2) {
                throw new IllegalArgumentException("MAC '" + text + "': '" + b + "' is not one hex byte");
            }
            mac = mac << 8 | Integer.parseInt(b, 16);
        }
        return mac;
    }

    public static boolean isMulticast(long mac) {
        return (mac >>> 40 & 1) != 0;
    }

    public static String format(long mac) {
        StringBuilder b = new StringBuilder(17);
        for (int i = 5; i >= 0; i--) {
            b.append(String.format("%02x", mac >>> 8 * i & 0xff));
            if (i > 0) {
                b.append(':');
            }
        }
        return b.toString();
    }
}
