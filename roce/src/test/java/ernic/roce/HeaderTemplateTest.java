package ernic.roce;

import ernic.roce.RoceParser.Refusal;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The header template of the ionic driver (CREATE_AH; MODIFY_QP with the address vector): Ethernet [+ 802.1Q] +
 * IPv4 or IPv6 + UDP, as ionic_build_hdr and ib_ud_header_pack leave it (IPv4 total length 0xffff, identification
 * and checksum 0, DF; the IPv6 payload length and the UDP length of an empty UD packet, 32; UDP checksum 0; the
 * UDP source port 28272 for an AH). The device takes the addresses, tags, classes and port from it and fills in
 * each packet's lengths and checksums.
 */
class HeaderTemplateTest {
    static final HexFormat HEX = HexFormat.of();
    final RoceParser parser = new RoceParser();

    /** An AH's template over IPv4: no VLAN, TOS 0 (ECN cleared), TTL 64, UDP source port 28272 (0x6e70). */
    static final String AH_IPV4 = ""
            + "020000000002" + "020000000001" + "0800"
            + "45" + "00" + "ffff" + "0000" + "4000" + "40" + "11" + "0000" + "0a000001" + "0a000002"
            + "6e70" + "12b7" + "0020" + "0000";

    /**
     * A RC QP's template over IPv6 with a VLAN tag: PCP 5 (the service level), VID 100; traffic class 0x6a (DSCP 26,
     * ECT(0), which the driver sets for RC), flow label 0x12345, hop limit 64, UDP source port 0xc123.
     */
    static final String RC_IPV6_VLAN = ""
            + "020000000002" + "020000000001" + "8100" + "a064" + "86dd"
            + "66a12345" + "0020" + "11" + "40"
            + "fd000000000000000000000000000001" + "fd000000000000000000000000000002"
            + "c123" + "12b7" + "0020" + "0000";

    Refusal template(String hex, RoceFrame into) {
        byte[] t = HEX.parseHex(hex);
        return parser.template(MemorySegment.ofArray(t), 0, t.length, into);
    }

    @Test
    void ahTemplateOverIpv4() {
        RoceFrame f = new RoceFrame();
        assertThat(template(AH_IPV4, f)).isEqualTo(Refusal.NONE);
        assertThat(f.dmac).isEqualTo(0x02_00_00_00_00_02L);
        assertThat(f.smac).isEqualTo(0x02_00_00_00_00_01L);
        assertThat(f.vlan).isEqualTo(RoceFrame.NO_VLAN);
        assertThat(f.ipv6).isFalse();
        assertThat(f.srcIp).isEqualTo(0x0a00_0001);
        assertThat(f.dstIp).isEqualTo(0x0a00_0002);
        assertThat(f.ttl).isEqualTo(64);
        assertThat(f.tos).isZero();
        assertThat(f.srcPort).isEqualTo(28272);

        // A UD SEND of 100 bytes from it: the lengths and the checksum are the packet's own.
        f.bth.opcode = IbOpcode.UD_SEND_ONLY.code;
        f.bth.destQp = 1;
        f.bth.qkey = 0x8001_0000;
        f.bth.srcQp = 1;
        byte[] b = Frames.build(f, Frames.payload(100));
        // IPv4 total length 20 + 8 + 12 + DETH 8 + 100 + ICRC 4 = 152; checksum by hand: 4500 + 0098 + 4000 +
        // 4011 + 0a00 + 0001 + 0a00 + 0002 = d9ac, complemented 2653.
        assertThat(HEX.formatHex(b, 14, 34)).isEqualTo("4500" + "0098" + "0000" + "4000" + "4011" + "2653"
                + "0a000001" + "0a000002");
        assertThat(HEX.formatHex(b, 34, 42)).isEqualTo("6e70" + "12b7" + "0084" + "0000");
        assertThat(new RoceParser().parse(MemorySegment.ofArray(b))).isEqualTo(Refusal.NONE);
    }

    @Test
    void rcTemplateOverIpv6WithAVlanTag() {
        RoceFrame f = new RoceFrame();
        assertThat(template(RC_IPV6_VLAN, f)).isEqualTo(Refusal.NONE);
        assertThat(f.vlan).isEqualTo(0xa064);
        assertThat(f.ipv6).isTrue();
        assertThat(f.srcGid).isEqualTo(Frames.GID_A);
        assertThat(f.dstGid).isEqualTo(Frames.GID_B);
        assertThat(f.tos).isEqualTo(0x6a);
        assertThat(f.tos & 3).isEqualTo(RoceFrame.ECN_ECT0);
        assertThat(f.flowLabel).isEqualTo(0x12345);
        assertThat(f.ttl).isEqualTo(64);
        assertThat(f.srcPort).isEqualTo(0xc123);

        // The device's frame for one packet: the QP's template, then this packet's transport headers.
        RoceFrame tx = new RoceFrame();
        tx.copyOuter(f);
        tx.bth.opcode = IbOpcode.RC_RDMA_WRITE_FIRST.code;
        tx.bth.destQp = 0x77;
        tx.bth.psn = 100;
        tx.bth.rkey = 0x1234;
        byte[] b = Frames.build(tx, Frames.payload(1024));
        assertThat(HEX.formatHex(b, 0, 22)).isEqualTo(RC_IPV6_VLAN.substring(0, 44));
        // IPv6 payload length and UDP length: UDP 8 + BTH 12 + RETH 16 + 1024 + ICRC 4 = 1064
        assertThat(Frames.u16(b, 18 + 4)).isEqualTo(1064);
        assertThat(Frames.u16(b, 58 + 4)).isEqualTo(1064);
        assertThat(Frames.u16(b, 58 + 6)).isNotZero(); // IPv6 forbids a zero UDP checksum
        RoceParser rx = new RoceParser();
        assertThat(rx.parse(MemorySegment.ofArray(b))).isEqualTo(Refusal.NONE);
        assertThat(rx.frame.vlan).isEqualTo(0xa064);
        assertThat(rx.frame.tos).isEqualTo(0x6a);
        assertThat(rx.frame.flowLabel).isEqualTo(0x12345);
        assertThat(rx.payloadLength).isEqualTo(1024);
    }

    @Test
    void ecnCanBeSetInPlaceOfTheTemplates() {
        RoceFrame f = new RoceFrame();
        template(RC_IPV6_VLAN, f);
        f.ecn = RoceFrame.ECN_NOT_ECT;
        f.bth.opcode = IbOpcode.RC_ACKNOWLEDGE.code;
        byte[] b = Frames.build(f, new byte[0]);
        assertThat(HEX.formatHex(b, 18, 22)).isEqualTo("66812345"); // traffic class 0x68: ECN cleared
    }

    @Test
    void templateOfTheWrongLengthIsRefused() {
        assertThat(template(AH_IPV4 + "00", new RoceFrame())).isEqualTo(Refusal.TEMPLATE_LENGTH);
        assertThat(template(AH_IPV4.substring(0, AH_IPV4.length() - 2), new RoceFrame()))
                .isEqualTo(Refusal.TEMPLATE_LENGTH);
        assertThat(template(RC_IPV6_VLAN.substring(0, 40), new RoceFrame())).isEqualTo(Refusal.TRUNCATED_IP);
    }

    @Test
    void templateThatIsNotRoceIsRefused() {
        assertThat(template(AH_IPV4.replace("12b7", "12b8"), new RoceFrame())).isEqualTo(Refusal.NOT_ROCE_PORT);
        assertThat(template(AH_IPV4.replace("0800", "0806"), new RoceFrame())).isEqualTo(Refusal.NOT_IP);
        assertThat(template(AH_IPV4.replace("4011", "4006"), new RoceFrame())).isEqualTo(Refusal.NOT_UDP);
        assertThat(template(AH_IPV4.substring(0, 28) + "46" + AH_IPV4.substring(30), new RoceFrame()))
                .isEqualTo(Refusal.IPV4_OPTIONS);
        assertThat(template(RC_IPV6_VLAN.replace("002011", "00202c"), new RoceFrame()))
                .isEqualTo(Refusal.IPV6_EXTENSION_HEADERS);
        assertThat(template("0200", new RoceFrame())).isEqualTo(Refusal.TRUNCATED_ETHERNET);
    }

    /** A template whose UDP source port is 0 leaves the frame's own (the caller's per-QP port). */
    @Test
    void aZeroSourcePortKeepsTheFramesOwn() {
        RoceFrame f = new RoceFrame();
        f.srcPort = 0xc000 | 0x1234;
        assertThat(template(AH_IPV4.replace("6e70", "0000"), f)).isEqualTo(Refusal.NONE);
        assertThat(f.srcPort).isEqualTo(0xd234);
        assertThat(template(AH_IPV4, f)).isEqualTo(Refusal.NONE);
        assertThat(f.srcPort).isEqualTo(28272);
    }
}
