package ernic.s3;


import java.util.HexFormat;

/**
 * The {@code x-amz-rdma-token} request header (hipObject's v1 token): 88 hex characters, the 44
 * little-endian bytes below, optionally followed by {@code :<addr hex>:<len hex>} that replace the address
 * and length. Offsets are the token's layout (shared/reference/interface-facts.md).
 */
public record RdmaToken(int transport, int qpn, byte[] gid, int rkey, long addr, long length, int port, int lid) {
    public static final int BYTES = 44, HEX_CHARS = 88;
    static final int TRANSPORT = 0, QPN = 1, GID = 5, RKEY = 21, ADDR = 25, LENGTH = 33, PORT = 41, LID = 42;
    public static final int TRANSPORT_DC = 0, TRANSPORT_RC = 1;

    /** A token the store refuses: malformed (400 InvalidRDMAToken) or declined (501: use the HTTP body). */
    public static final class Refused extends Exception {
        public final boolean declined;

        Refused(String message, boolean declined) {
            super(message, null, false, false);
            this.declined = declined;
        }
    }

    public static RdmaToken parse(String header) throws Refused {
        String v = header.strip();
        String hex = v;
        String addrHex = null, lenHex = null;
        if (v.length() > HEX_CHARS) {
            String[] p = v.split(":", -1);
            if (p.length != 3) {
                throw new Refused("token suffix must be :addr:len", false);
            }
            hex = p[0];
            addrHex = p[1];
            lenHex = p[2];
        }
        if (hex.length() != HEX_CHARS || !isHex(hex)) {
            throw new Refused("token must be " + HEX_CHARS + " hex characters", false);
        }
        byte[] b = HexFormat.of().parseHex(hex);
        int transport = b[TRANSPORT] & 0xff;
        if (transport == TRANSPORT_DC) {
            throw new Refused("DC tokens are not supported", true);
        }
        if (transport != TRANSPORT_RC) {
            throw new Refused("unknown transport " + transport, false);
        }
        byte[] gid = new byte[16];
        System.arraycopy(b, GID, gid, 0, 16);
        long addr = le(b, ADDR, 8), length = le(b, LENGTH, 8);
        if (addrHex != null) {
            addr = hex64(addrHex);
            length = hex64(lenHex);
        }
        int rkey = (int) le(b, RKEY, 4);
        if (rkey == 0) {
            throw new Refused("rkey 0 is not a remote key", false);
        }
        // unsigned: the window [addr, addr+length) may end at 2^64 but not past it
        if (length < 0 || length != 0 && Long.compareUnsigned(addr, -length) > 0) {
            throw new Refused("address range wraps", false);
        }
        return new RdmaToken(transport, (int) le(b, QPN, 4), gid, rkey, addr, length, b[PORT] & 0xff,
                (int) le(b, LID, 2));
    }

    private static long hex64(String s) throws Refused {
        if (s.isEmpty() || s.length() > 16 || !isHex(s)) {
            throw new Refused("bad token suffix '" + s + "'", false);
        }
        return HexFormat.fromHexDigitsToLong(s);
    }

    private static long le(byte[] b, int at, int n) {
        long v = 0;
        for (int i = n - 1; i >= 0; i--) {
            v = v << 8 | (b[at + i] & 0xff);
        }
        return v;
    }

    /** The 88 hex characters of this token (lower case). */
    public String hex() {
        byte[] b = new byte[BYTES];
        b[TRANSPORT] = (byte) transport;
        putLe(b, QPN, qpn, 4);
        System.arraycopy(gid, 0, b, GID, 16);
        putLe(b, RKEY, rkey, 4);
        putLe(b, ADDR, addr, 8);
        putLe(b, LENGTH, length, 8);
        b[PORT] = (byte) port;
        putLe(b, LID, lid, 2);
        return HexFormat.of().formatHex(b);
    }

    private static void putLe(byte[] b, int at, long v, int n) {
        for (int i = 0; i < n; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    /** Whether every character is a lower- or upper-case hex digit (and there is at least one). */
    static boolean isHex(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (Character.digit(s.charAt(i), 16) < 0 || s.charAt(i) > 'f') {
                return false;
            }
        }
        return true;
    }
}
