package ernic.roce;

import ernic.roce.RoceParser.Refusal;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whole frames, ICRC included, as another implementation computes them: scapy's RoCE layer
 * ({@code scapy.contrib.roce}, Debian python3-scapy 2.5.0), printed once with (scapy is not run by the test)
 * <pre>
 * from scapy.all import Ether, IP, IPv6, UDP, Dot1Q, Raw, raw; from scapy.contrib.roce import BTH; import struct, zlib
 * mac = dict(dst='02:00:00:00:00:02', src='02:00:00:00:00:01')
 * raw(Ether(**mac) / Dot1Q(prio=3, vlan=0x123)
 *     / IP(src='10.0.0.1', dst='10.0.0.2', tos=0x6a, ttl=63, id=0, flags='DF') / UDP(sport=0xc0de, dport=4791, chksum=0)
 *     / BTH(opcode=0x0b, solicited=1, padcount=2, pkey=0xffff, dqpn=0x123456, ackreq=1, psn=0xfedcba)
 *     / Raw(struct.pack('!QII', 0x7f0012345678, 0xabcd0102, 10) + struct.pack('!I', 0xdeadbeef)
 *           + bytes(range(1, 11)) + b'\0\0'))).hex()
 * v6 = lambda icrc: (Ether(**mac) / IPv6(src='fd00::1', dst='fd00::2', tc=0x6a, fl=0xabcde, hlim=63)
 *     / UDP(sport=0xc0de, dport=4791) / BTH(opcode=0x64, padcount=1, pkey=0xffff, dqpn=1, psn=5, icrc=icrc)
 *     / Raw(struct.pack('!II', 0x80010000, 1) + bytes(range(1, 8)) + b'\0'))
 * </pre>
 * scapy 2.5.0 computes the ICRC over IPv4 only (IPv6 is a TODO in its compute_icrc), so the IPv6 ICRC is what
 * scapy 2.6's IPv6 branch does, done by hand on scapy's own masked copy of the packet, and the frame then built by
 * scapy with it (which also computes the UDP checksum):
 * <pre>
 * ps = v6(0)[IPv6].copy(); ps.tc = 0xff; ps.fl = 0xfffff; ps.hlim = 0xff; ps[UDP].chksum = 0xffff
 * ps[BTH].fecn = 1; ps[BTH].becn = 1; ps[BTH].resv6 = 0x3f
 * crc = zlib.crc32(b'\xff' * 8 + raw(ps)[:-4]); raw(v6(int.from_bytes(crc.to_bytes(4, 'little'), 'big'))).hex()
 * </pre>
 */
class ScapyVectorTest {
    static final HexFormat HEX = HexFormat.of();

    static final String IPV4_VLAN_WRITE_ONLY_IMM = ""
            + "020000000002020000000001810061230800456a004c000040003f1127350a0000010a000002c0de12b7003800000ba0"
            + "ffff0012345680fedcba00007f0012345678abcd01020000000adeadbeef0102030405060708090a00008dc27742";
    static final String IPV6_UD_SEND_ONLY = ""
            + "02000000000202000000000186dd66aabcde0028113ffd000000000000000000000000000001fd000000000000000000"
            + "000000000002c0de12b70028a7e66410ffff00000001000000058001000000000001010203040506070006818f77";

    static RoceFrame ipv4Write() {
        RoceFrame f = new RoceFrame();
        f.dmac = 0x02_00_00_00_00_02L;
        f.smac = 0x02_00_00_00_00_01L;
        f.vlan = 3 << 13 | 0x123;
        f.srcIp = Frames.IP_A;
        f.dstIp = Frames.IP_B;
        f.tos = 0x6a;
        f.ttl = 63;
        f.srcPort = 0xc0de;
        f.bth.opcode = IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.code;
        f.bth.solicited = true;
        f.bth.ackReq = true;
        f.bth.destQp = 0x12_3456;
        f.bth.psn = 0xfe_dcba;
        f.bth.va = 0x0000_7f00_1234_5678L;
        f.bth.rkey = 0xabcd_0102;
        f.bth.dmaLength = 10;
        f.bth.imm = 0xdead_beef;
        return f;
    }

    static RoceFrame ipv6UdSend() {
        RoceFrame f = new RoceFrame();
        f.dmac = 0x02_00_00_00_00_02L;
        f.smac = 0x02_00_00_00_00_01L;
        f.addresses(Frames.GID_A, Frames.GID_B);
        f.tos = 0x6a;
        f.flowLabel = 0xabcde;
        f.ttl = 63;
        f.srcPort = 0xc0de;
        f.bth.opcode = IbOpcode.UD_SEND_ONLY.code;
        f.bth.destQp = 1;
        f.bth.psn = 5;
        f.bth.qkey = 0x8001_0000;
        f.bth.srcQp = 1;
        return f;
    }

    static byte[] counting(int n) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i + 1);
        }
        return p;
    }

    @Test
    void ipv4WithVlanAsScapyBuildsIt() {
        assertThat(HEX.formatHex(Frames.build(ipv4Write(), counting(10)))).isEqualTo(IPV4_VLAN_WRITE_ONLY_IMM);
    }

    @Test
    void ipv6AsScapyBuildsIt() {
        assertThat(HEX.formatHex(Frames.build(ipv6UdSend(), counting(7)))).isEqualTo(IPV6_UD_SEND_ONLY);
    }

    /** scapy's frames parse, with the fields and the payload scapy was given. */
    @Test
    void scapyFramesParse() {
        RoceParser p = new RoceParser();
        byte[] v4 = HEX.parseHex(IPV4_VLAN_WRITE_ONLY_IMM);
        assertThat(p.parse(MemorySegment.ofArray(v4))).isEqualTo(Refusal.NONE);
        assertThat(p.frame.vlan).isEqualTo(0x6123);
        assertThat(p.frame.bth.rkey).isEqualTo(0xabcd_0102);
        assertThat(p.frame.bth.imm).isEqualTo(0xdead_beef);
        assertThat(p.payloadLength).isEqualTo(10);
        byte[] v6 = HEX.parseHex(IPV6_UD_SEND_ONLY);
        assertThat(p.parse(MemorySegment.ofArray(v6))).isEqualTo(Refusal.NONE);
        assertThat(p.frame.flowLabel).isEqualTo(0xabcde);
        assertThat(p.frame.bth.qkey).isEqualTo(0x8001_0000);
        assertThat(p.payloadLength).isEqualTo(7);
        v6[v6.length - 5] ^= 1; // the last pad byte: the ICRC says so
        assertThat(p.parse(MemorySegment.ofArray(v6))).isEqualTo(Refusal.ICRC);
    }
}
