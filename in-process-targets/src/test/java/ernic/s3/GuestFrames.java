package ernic.s3;

import java.nio.ByteBuffer;

/**
 * Frames as the guest would send them, built here without the endpoint's code (its own checksum, its own
 * offsets from RFC 791/793/826/792), so a test checks the endpoint against the RFCs, not against itself.
 */
final class GuestFrames {
    static final byte[] GUEST_MAC = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    static final int GUEST_IP = 0xc0a8c802; // 192.168.200.2
    static final int STORE_IP = 0xc0a8c801; // 192.168.200.1
    static final byte[] STORE_MAC = {0x02, 0x53, (byte) 192, (byte) 168, (byte) 200, 1};

    private GuestFrames() {
    }

    static int checksum(byte[] b, int off, int len, long seed) {
        long s = seed;
        for (int i = 0; i < len; i += 2) {
            int hi = b[off + i] & 0xff;
            int lo = i + 1 < len ? b[off + i + 1] & 0xff : 0;
            s += hi << 8 | lo;
        }
        while (s >> 16 != 0) {
            s = (s & 0xffff) + (s >> 16);
        }
        return (int) (~s & 0xffff);
    }

    static long pseudo(int src, int dst, int proto, int len) {
        return (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + proto + len;
    }

    /** Ethernet + IPv4 (no options) around an L4 payload; checksums filled in. */
    static byte[] ipv4(int src, int dst, int proto, byte[] l4) {
        ByteBuffer b = ByteBuffer.allocate(14 + 20 + l4.length);
        b.put(STORE_MAC).put(GUEST_MAC).putShort((short) 0x0800);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (20 + l4.length)).putShort((short) 1)
                .putShort((short) 0x4000).put((byte) 64).put((byte) proto).putShort((short) 0).putInt(src).putInt(dst);
        b.put(l4);
        byte[] f = b.array();
        int c = checksum(f, 14, 20, 0);
        f[24] = (byte) (c >> 8);
        f[25] = (byte) c;
        return f;
    }

    static byte[] tcp(int sport, int dport, int seq, int ack, int flags, int window, byte[] options, byte[] data) {
        int hlen = 20 + options.length;
        ByteBuffer b = ByteBuffer.allocate(hlen + data.length);
        b.putShort((short) sport).putShort((short) dport).putInt(seq).putInt(ack)
                .put((byte) (hlen / 4 << 4)).put((byte) flags).putShort((short) window).putShort((short) 0)
                .putShort((short) 0).put(options).put(data);
        byte[] seg = b.array();
        int c = checksum(seg, 0, seg.length, pseudo(GUEST_IP, STORE_IP, 6, seg.length));
        seg[16] = (byte) (c >> 8);
        seg[17] = (byte) c;
        return ipv4(GUEST_IP, STORE_IP, 6, seg);
    }

    static byte[] echoRequest(int id, int seqNo, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(8 + payload.length);
        b.put((byte) 8).put((byte) 0).putShort((short) 0).putShort((short) id).putShort((short) seqNo).put(payload);
        byte[] icmp = b.array();
        int c = checksum(icmp, 0, icmp.length, 0);
        icmp[2] = (byte) (c >> 8);
        icmp[3] = (byte) c;
        return ipv4(GUEST_IP, STORE_IP, 1, icmp);
    }

    static byte[] arpRequest(int targetIp) {
        ByteBuffer b = ByteBuffer.allocate(60);
        b.put(new byte[] {-1, -1, -1, -1, -1, -1}).put(GUEST_MAC).putShort((short) 0x0806);
        b.putShort((short) 1).putShort((short) 0x0800).put((byte) 6).put((byte) 4).putShort((short) 1);
        b.put(GUEST_MAC).putInt(GUEST_IP).put(new byte[6]).putInt(targetIp);
        return b.array();
    }

    /** A parsed TCP segment from the store, after its IPv4 and TCP checksums were verified. */
    record Segment(int sport, int dport, int seq, int ack, int flags, int window, byte[] options, byte[] data) {
        boolean has(int flag) {
            return (flags & flag) != 0;
        }
    }

    /** The store's frame as a TCP segment; fails the test if any header or checksum is wrong. */
    static Segment parseTcp(byte[] f) {
        ByteBuffer b = ByteBuffer.wrap(f);
        byte[] dst = new byte[6], src = new byte[6];
        b.get(dst).get(src);
        check(java.util.Arrays.equals(dst, GUEST_MAC), "frame to the guest's MAC");
        check(java.util.Arrays.equals(src, STORE_MAC), "frame from 02:53:c0:a8:c8:01");
        check(b.getShort() == 0x0800, "IPv4");
        check((f[14] & 0xff) == 0x45, "IPv4, no options");
        int total = b.getShort(16) & 0xffff;
        check(checksum(f, 14, 20, 0) == 0, "IP checksum");
        check(b.get(23) == 6, "TCP");
        check(b.getInt(26) == STORE_IP && b.getInt(30) == GUEST_IP, "addresses");
        int l4 = 34, len = total - 20;
        check(checksum(f, l4, len, pseudo(STORE_IP, GUEST_IP, 6, len)) == 0, "TCP checksum");
        int hlen = (f[l4 + 12] & 0xff) >> 4 << 2;
        byte[] opts = java.util.Arrays.copyOfRange(f, l4 + 20, l4 + hlen);
        byte[] data = java.util.Arrays.copyOfRange(f, l4 + hlen, l4 + len);
        return new Segment(b.getShort(l4) & 0xffff, b.getShort(l4 + 2) & 0xffff, b.getInt(l4 + 4), b.getInt(l4 + 8),
                f[l4 + 13] & 0xff, b.getShort(l4 + 14) & 0xffff, opts, data);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("bad frame from the store: " + what);
        }
    }
}
