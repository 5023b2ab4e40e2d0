package ernic.mesh;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;

/**
 * A 128-bit RoCE GID, compared by value. An IPv4 address becomes its IPv4-mapped IPv6 form
 * ({@code ::ffff:a.b.c.d}), as RoCE v2 writes it.
 */
public final class Gid implements Comparable<Gid> {
    public static final int BYTES = 16;

    private final long hi;
    private final long lo;

    private Gid(long hi, long lo) {
        this.hi = hi;
        this.lo = lo;
    }

    public static Gid of(long hi, long lo) {
        return new Gid(hi, lo);
    }

    /** The GID in network byte order, exactly 16 bytes. */
    public static Gid of(byte[] raw) {
        if (raw.length != BYTES) {
            throw new IllegalArgumentException("a GID has 16 bytes, not " + raw.length);
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (raw[i] & 0xff);
            lo = (lo << 8) | (raw[i + 8] & 0xff);
        }
        return new Gid(hi, lo);
    }

    /** An IPv6 or IPv4 literal (no name lookup is done: anything else is refused). */
    public static Gid parse(String literal) {
        if (!io.netty.util.NetUtil.isValidIpV6Address(literal) && !io.netty.util.NetUtil.isValidIpV4Address(literal)) {
            throw new IllegalArgumentException("not an IP literal: " + literal);
        }
        try {
            return of(InetAddress.getByName(literal));
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP literal: " + literal, e);
        }
    }

    /**
     * A list of GIDs as ERNIC_TCP_GUEST_GIDS might hold them: IP literals separated by commas and/or white space.
     */
    public static java.util.Set<Gid> parseList(String text) {
        java.util.Set<Gid> out = new java.util.LinkedHashSet<>();
        if (text == null) {
            return out;
        }
        for (String part : text.split("[,\\s]+")) {
            if (!part.isEmpty()) {
                out.add(parse(part));
            }
        }
        return out;
    }

    public static Gid of(InetAddress address) {
        if (address instanceof Inet6Address) {
            return of(address.getAddress());
        }
        if (address instanceof Inet4Address) {
            byte[] v4 = address.getAddress();
            byte[] raw = new byte[BYTES];
            raw[10] = (byte) 0xff;
            raw[11] = (byte) 0xff;
            System.arraycopy(v4, 0, raw, 12, 4);
            return of(raw);
        }
        throw new IllegalArgumentException("unknown address family: " + address);
    }

    /**
     * Whether a server may learn {@code hi:lo} as its guest's GID from a source address the guest sends: a unicast
     * IPv6 address (not ::, ::1, multicast, nor IPv4-compatible), or an IPv4-mapped one whose IPv4 address is
     * unicast (not 0.0.0.0/8, loopback 127/8, multicast 224/4, nor 240/4 with the limited broadcast).
     */
    public static boolean learnable(long hi, long lo) {
        if (hi == 0) {
            if (lo >>> 32 != 0xffffL) {
                return false; // ::, ::1, IPv4-compatible and other ::/96 addresses
            }
            int first = (int) (lo >>> 24) & 0xff;
            return first != 0 && first != 127 && first < 224;
        }
        return hi >>> 56 != 0xffL; // ff00::/8 is multicast
    }

    /** Whether this GID is an IPv4 address ({@code ::ffff:a.b.c.d}). */
    public boolean ipv4() {
        return hi == 0 && lo >>> 32 == 0xffffL;
    }

    public long hi() {
        return hi;
    }

    public long lo() {
        return lo;
    }

    public byte[] toBytes() {
        byte[] raw = new byte[BYTES];
        for (int i = 0; i < 8; i++) {
            raw[i] = (byte) (hi >>> (56 - 8 * i));
            raw[i + 8] = (byte) (lo >>> (56 - 8 * i));
        }
        return raw;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && g.hi == hi && g.lo == lo;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(hi) * 31 + Long.hashCode(lo);
    }

    @Override
    public int compareTo(Gid o) {
        int c = Long.compareUnsigned(hi, o.hi);
        return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
    }

    @Override
    public String toString() {
        try {
            return InetAddress.getByAddress(toBytes()).getHostAddress();
        } catch (UnknownHostException e) {
            return HexFormat.of().formatHex(toBytes());
        }
    }
}
