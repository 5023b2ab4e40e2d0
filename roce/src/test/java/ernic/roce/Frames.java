package ernic.roce;

import ernic.common.InternetChecksum;
import ernic.common.IpAddress;

import java.lang.foreign.MemorySegment;

/** Frames for the tests: built with {@link RoceFrame}, and damaged ones sealed again (IPv4 checksum, ICRC). */
final class Frames {
    private Frames() {}

    static final byte[] GID_A = IpAddress.parse("fd00::1").gid(), GID_B = IpAddress.parse("fd00::2").gid();
    static final int IP_A = 0x0a00_0001, IP_B = 0x0a00_0002;

    /** A frame of opcode {@code op} from A to B, every header field set to a value of its own. */
    static RoceFrame frame(IbOpcode op, boolean ipv6, boolean vlan) {
        RoceFrame f = new RoceFrame();
        f.dmac = 0x02_00_00_00_00_02L;
        f.smac = 0x02_00_00_00_00_01L;
        if (ipv6) {
            f.addresses(GID_A, GID_B);
        } else {
            f.srcIp = IP_A;
            f.dstIp = IP_B;
        }
        f.vlan = vlan ? 3 << 13 | 0x123 : RoceFrame.NO_VLAN;
        f.tos = 0x68;
        f.ecn = RoceFrame.ECN_ECT0;
        f.ttl = 63;
        f.flowLabel = ipv6 ? 0xabcde : 0;
        f.srcPort = 0xc0de;
        TransportHeader h = f.bth;
        h.opcode = op.code;
        h.solicited = true;
        h.ackReq = true;
        h.pkey = 0x8001;
        h.destQp = 0x12_3456;
        h.psn = 0xfe_dcba;
        h.qkey = 0x1111_2222;
        h.srcQp = 0x33_4455;
        h.va = 0x0000_7f01_0203_0405L;
        h.rkey = 0x5566_7788;
        h.dmaLength = 0x1234;
        h.swapAdd = 0x0102_0304_0506_0708L;
        h.compare = 0x1112_1314_1516_1718L;
        h.syndrome = TransportHeader.AETH_NAK_REMOTE_ACCESS;
        h.msn = 0x65_4321;
        h.origData = 0x2122_2324_2526_2728L;
        h.imm = 0xdead_beef;
        h.invRkey = 0x0bad_cafe;
        return f;
    }

    /** The whole frame with {@code payload}. */
    static byte[] build(RoceFrame f, byte[] payload) {
        byte[] b = new byte[f.frameLength(payload.length)];
        int h = f.headers(b, 0, payload.length);
        System.arraycopy(payload, 0, b, h, payload.length);
        f.trailer(b, 0, payload.length);
        return b;
    }

    static byte[] payload(int n) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i * 7 + 1);
        }
        return p;
    }

    /** Where the IP header starts (after the Ethernet header and a tag). */
    static int ip(byte[] b) {
        return (b[12] & 0xff) == 0x81 && b[13] == 0 ? 18 : 14;
    }

    static boolean ipv6(byte[] b) {
        int ip = ip(b);
        return (b[ip - 2] & 0xff) == 0x86;
    }

    static int udp(byte[] b) {
        return ip(b) + (ipv6(b) ? 40 : 20);
    }

    static int bth(byte[] b) {
        return udp(b) + 8;
    }

    /** After a change: the IPv4 header checksum and the ICRC computed again where the IP length puts it. */
    static byte[] reseal(byte[] b) {
        int ip = ip(b);
        int ipEnd;
        if (ipv6(b)) {
            ipEnd = ip + 40 + u16(b, ip + 4);
        } else {
            ipEnd = ip + u16(b, ip + 2);
            b[ip + 10] = b[ip + 11] = 0;
            put16(b, ip + 10, InternetChecksum.of(b, ip, 20, 0));
        }
        MemorySegment s = MemorySegment.ofArray(b);
        Icrc.put(s, ipEnd - 4, new Icrc().compute(s, ip, ipv6(b), ipEnd - 4));
        return b;
    }

    static int u16(byte[] b, int p) {
        return (b[p] & 0xff) << 8 | b[p + 1] & 0xff;
    }

    static void put16(byte[] b, int p, int v) {
        b[p] = (byte) (v >>> 8);
        b[p + 1] = (byte) v;
    }
}
