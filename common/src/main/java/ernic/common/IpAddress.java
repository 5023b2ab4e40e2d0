package ernic.common;

import java.util.Arrays;

/**
 * An IPv4 or IPv6 address as RoCE sees it: 16 bytes, an IPv4 address v4-mapped ({@code ::ffff:a.b.c.d}), which is
 * also its GID. Immutable; parsing never resolves a name.
 */
public final class IpAddress {
    private final byte[] bytes;

    private IpAddress(byte[] bytes) {
        this.bytes = bytes;
    }

    /** The IPv4 address {@code ipv4} (host order, a.b.c.d as {@code a << 24 | ...}). */
    public static IpAddress ofIpv4(int ipv4) {
        byte[] b = new byte[16];
        putV4Mapped(b, ipv4);
        return new IpAddress(b);
    }

    /** Writes {@code ipv4} into the 16 bytes of {@code gid}, v4-mapped; allocates nothing (for the data path). */
    public static void putV4Mapped(byte[] gid, int ipv4) {
        Arrays.fill(gid, 0, 10, (byte) 0);
        gid[10] = gid[11] = (byte) 0xff;
        gid[12] = (byte) (ipv4 >>> 24);
        gid[13] = (byte) (ipv4 >>> 16);
        gid[14] = (byte) (ipv4 >>> 8);
        gid[15] = (byte) ipv4;
    }

    /** True when the 16 bytes of {@code gid} are a v4-mapped IPv4 address ({@code ::ffff:a.b.c.d}). */
    public static boolean isV4Mapped(byte[] gid) {
        for (int i = 0; i < 10; i++) {
            if (gid[i] != 0) {
                return false;
            }
        }
        return gid[10] == (byte) 0xff && gid[11] == (byte) 0xff;
    }

    /** The last four bytes of {@code gid} as an int (a.b.c.d as {@code a << 24 | ...}): its IPv4 address if v4-mapped. */
    public static int ipv4Of(byte[] gid) {
        return (gid[12] & 0xff) << 24 | (gid[13] & 0xff) << 16 | (gid[14] & 0xff) << 8 | gid[15] & 0xff;
    }

    /** The first 8 bytes of a 16-byte GID as a big-endian long (a GID as two longs, allocation-free). */
    public static long high(byte[] gid) {
        return half(gid, 0);
    }

    /** The last 8 bytes of a 16-byte GID as a big-endian long. */
    public static long low(byte[] gid) {
        return half(gid, 8);
    }

    private static long half(byte[] gid, int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = v << 8 | gid[i] & 0xff;
        }
        return v;
    }

    /** The address whose 16 bytes (a GID) are {@code gid}. */
    public static IpAddress ofGid(byte[] gid) {
        if (gid.length != 16) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + gid.length);
        }
        return new IpAddress(gid.clone());
    }

    /**
     * A dotted IPv4 address ({@code 10.0.0.1}), or an IPv6 address in any RFC 4291 text form; anything else is an
     * {@link IllegalArgumentException} that says what was given.
     */
    public static IpAddress parse(String text) {
        if (text != null && text.indexOf(':') < 0) {
            return ofIpv4(parseIpv4(text));
        }
        return new IpAddress(parseIpv6(text));
    }

    /** A dotted IPv4 address as an int (a.b.c.d as {@code a << 24 | ...}). */
    public static int parseIpv4(String dotted) {
        String[] parts = dotted == null ? new String[0] : dotted.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: " + dotted);
        }
        int a = 0;
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit) || Integer.parseInt(p) > 255) {
                throw new IllegalArgumentException("not an IPv4 address: " + dotted);
            }
            a = a << 8 | Integer.parseInt(p);
        }
        return a;
    }

    private static byte[] parseIpv6(String text) {
        if (text == null || text.isEmpty() || text.chars().anyMatch(c -> Character.digit(c, 16) < 0 && c != ':' && c != '.')) {
            throw new IllegalArgumentException("not an IP address: " + text);
        }
        int gap = text.indexOf("::");
        if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
            throw new IllegalArgumentException("not an IPv6 address (two '::'): " + text);
        }
        int[] head = groups(gap < 0 ? text : text.substring(0, gap), text);
        int[] tail = gap < 0 ? new int[0] : groups(text.substring(gap + 2), text);
        if (gap < 0 ? head.length != 8 : head.length + tail.length > 7) {
            throw new IllegalArgumentException("not an IPv6 address (eight groups): " + text);
        }
        byte[] b = new byte[16];
        for (int i = 0; i < head.length; i++) {
            b[2 * i] = (byte) (head[i] >>> 8);
            b[2 * i + 1] = (byte) head[i];
        }
        for (int i = 0; i < tail.length; i++) {
            int g = 8 - tail.length + i;
            b[2 * g] = (byte) (tail[i] >>> 8);
            b[2 * g + 1] = (byte) tail[i];
        }
        return b;
    }

    /** The 16-bit groups of one side of a '::' (an IPv4 tail counts as two). */
    private static int[] groups(String side, String text) {
        if (side.isEmpty()) {
            return new int[0];
        }
        String[] parts = side.split(":", -1);
        int last = parts.length - 1;
        boolean v4Tail = parts[last].contains(".");
        int[] out = new int[parts.length + (v4Tail ? 1 : 0)];
        for (int i = 0; i < parts.length; i++) {
            if (v4Tail && i == last) {
                int v4 = parseIpv4(parts[i]);
                out[i] = v4 >>> 16;
                out[i + 1] = v4 & 0xffff;
            } else if (parts[i].isEmpty() || parts[i].length() > 4 || parts[i].contains(".")) {
                throw new IllegalArgumentException("not an IPv6 address: " + text);
            } else {
                out[i] = Integer.parseInt(parts[i], 16);
            }
        }
        return out;
    }

    /** True for an IPv4 address (v4-mapped). */
    public boolean isIpv4() {
        return isV4Mapped(bytes);
    }

    /** The IPv4 address as an int; only for {@link #isIpv4()}. */
    public int ipv4() {
        if (!isIpv4()) {
            throw new IllegalStateException(this + " is not an IPv4 address");
        }
        return ipv4Of(bytes);
    }

    /** A copy of the 16 bytes: the address's GID. */
    public byte[] gid() {
        return bytes.clone();
    }

    /** True when {@code gid} (16 bytes, or null) is this address. */
    public boolean isGid(byte[] gid) {
        return gid != null && Arrays.equals(gid, bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpAddress a && Arrays.equals(a.bytes, bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** Dotted for IPv4, else eight colon-separated hex groups (not compressed). */
    @Override
    public String toString() {
        if (isIpv4()) {
            return (bytes[12] & 0xff) + "." + (bytes[13] & 0xff) + "." + (bytes[14] & 0xff) + "." + (bytes[15] & 0xff);
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 16; i += 2) {
            s.append(i == 0 ? "" : ":").append(Integer.toHexString((bytes[i] & 0xff) << 8 | bytes[i + 1] & 0xff));
        }
        return s.toString();
    }
}
