package ernic.roce;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/** The frame builder against frames worked out by hand. */
class RoceFrameTest {
    static final HexFormat HEX = HexFormat.of();

    /** The 4 bytes at {@code b[at]} are CRC-32 over {@code maskedHex} (the masked packet), least significant first. */
    static void assertIcrc(byte[] b, int at, String maskedHex) {
        CRC32 crc = new CRC32();
        crc.update(HEX.parseHex(maskedHex));
        int icrc = (int) crc.getValue();
        assertThat(Arrays.copyOfRange(b, at, at + 4)).containsExactly((byte) icrc, (byte) (icrc >>> 8),
                (byte) (icrc >>> 16), (byte) (icrc >>> 24));
    }

    static RoceFrame rcSend() {
        RoceFrame f = new RoceFrame();
        f.dmac = 0x02_00_00_00_00_02L;
        f.smac = 0x02_00_00_00_00_01L;
        f.srcIp = 0x0a00_0001;
        f.dstIp = 0x0a00_0002;
        f.srcPort = 0xc011;
        f.bth.opcode = IbOpcode.RC_SEND_ONLY.code;
        f.bth.ackReq = true;
        f.bth.destQp = 0x12;
        f.bth.psn = 7;
        return f;
    }

    /**
     * RC SEND_ONLY of "hello" from 10.0.0.1 to 10.0.0.2, QP 0x12, PSN 7. Headers 14 + 20 + 8 + 12 = 54 bytes,
     * then 5 payload bytes, 3 pad bytes (PadCnt 3) and the ICRC: 66 bytes, so the IPv4 total length is 52
     * (0x34) and the UDP length 32 (0x20). IPv4 checksum: 4500 + 0034 + 0000 + 4000 + 4011 + 0000 + 0a00 +
     * 0001 + 0a00 + 0002 = d948, complemented 26b7.
     */
    @Test
    void rcSendOnlyByHand() {
        RoceFrame f = rcSend();
        byte[] b = new byte[128];
        int h = f.headers(b, 3, 5);
        assertThat(h).isEqualTo(54);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, b, 3 + h, 5);
        int t = f.trailer(b, 3, 5);
        assertThat(t).isEqualTo(7);
        assertThat(f.frameLength(5)).isEqualTo(66);
        String expected = ""
                + "020000000002" + "020000000001" + "0800"                       // Ethernet
                + "4500" + "0034" + "0000" + "4000" + "4011" + "26b7" + "0a000001" + "0a000002" // IPv4
                + "c011" + "12b7" + "0020" + "0000"                               // UDP to 4791
                + "04" + "30" + "ffff" + "00000012" + "80000007"                  // BTH: SEND_ONLY, PadCnt 3, AckReq
                + "68656c6c6f" + "000000";                                        // payload and pad
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 3, 3 + 62))).isEqualTo(expected);
        // The ICRC, least significant byte first: CRC-32 over 8 bytes of ones and the packet from the IPv4
        // header on with TOS, TTL, IP checksum, UDP checksum and the BTH's FECN/BECN/reserved byte all ones.
        String masked = "ffffffffffffffff"
                + "45ff" + "0034" + "0000" + "4000" + "ff11" + "ffff" + "0a000001" + "0a000002"
                + "c011" + "12b7" + "0020" + "ffff"
                + "04" + "30" + "ffff" + "ff000012" + "80000007"
                + "68656c6c6f" + "000000";
        assertIcrc(b, 3 + 62, masked);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 3 + 62, 3 + 66))).isEqualTo(KNOWN_ICRC);
    }

    /** The ICRC of {@link #rcSendOnlyByHand}'s frame as scapy's scapy.contrib.roce computes it. */
    static final String KNOWN_ICRC = "15f4459f";

    /** RDMA WRITE_ONLY_IMM: BTH, RETH (VA, R_Key, DMA length), ImmDt, then the payload. */
    @Test
    void writeOnlyImmCarriesRethThenImmDt() {
        RoceFrame f = rcSend();
        f.bth.opcode = IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.code;
        f.bth.va = 0x0000_7f00_1234_5678L;
        f.bth.rkey = 0xabcd_0102;
        f.bth.dmaLength = 16;
        f.bth.imm = 0xdead_beef;
        byte[] b = new byte[256];
        int h = f.headers(b, 0, 16);
        assertThat(h).isEqualTo(54 + 16 + 4);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 42, h))).isEqualTo(""
                + "0b" + "00" + "ffff" + "00000012" + "80000007"
                + "00007f0012345678" + "abcd0102" + "00000010"
                + "deadbeef");
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 16, 18))).isEqualTo("0050"); // IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + payload 16 + ICRC 4 = 80
    }

    /** READ_RESPONSE_ONLY and ACKNOWLEDGE carry an AETH (syndrome, MSN); ATOMIC_ACKNOWLEDGE adds the old value. */
    @Test
    void responsesCarryAnAeth() {
        RoceFrame f = rcSend();
        f.bth.ackReq = false;
        f.bth.syndrome = TransportHeader.AETH_ACK;
        f.bth.msn = 3;
        byte[] b = new byte[256];
        f.bth.opcode = IbOpcode.RC_ACKNOWLEDGE.code;
        assertThat(f.headers(b, 0, 0)).isEqualTo(54 + 4);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 42, 58))).isEqualTo("11" + "00" + "ffff" + "00000012"
                + "00000007" + "1f000003");
        f.bth.opcode = IbOpcode.RC_RDMA_READ_RESPONSE_ONLY.code;
        assertThat(f.headers(b, 0, 8)).isEqualTo(58);
        assertThat(b[42]).isEqualTo((byte) 0x10);
        f.bth.opcode = IbOpcode.RC_ATOMIC_ACKNOWLEDGE.code;
        f.bth.origData = 0x0102_0304_0506_0708L;
        assertThat(f.headers(b, 0, 0)).isEqualTo(54 + 4 + 8);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 54, 66))).isEqualTo("1f000003" + "0102030405060708");
    }

    /** COMPARE_SWAP: AtomicETH is VA, R_Key, swap (or add) data, compare data. */
    @Test
    void atomicEth() {
        RoceFrame f = rcSend();
        f.bth.opcode = IbOpcode.RC_CMP_SWAP.code;
        f.bth.va = 0x1000;
        f.bth.rkey = 0x55;
        f.bth.swapAdd = 2;
        f.bth.compare = 1;
        byte[] b = new byte[256];
        assertThat(f.headers(b, 0, 0)).isEqualTo(54 + 28);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 54, 82))).isEqualTo("0000000000001000" + "00000055"
                + "0000000000000002" + "0000000000000001");
    }

    /** UD SEND_ONLY (0x64): a DETH (Q_Key, source QP) after the BTH. */
    @Test
    void udSendCarriesADeth() {
        RoceFrame f = rcSend();
        f.bth.opcode = IbOpcode.UD_SEND_ONLY.code;
        f.bth.ackReq = false;
        f.bth.qkey = 0x1111_1111;
        f.bth.srcQp = 0x13;
        byte[] b = new byte[256];
        assertThat(f.headers(b, 0, 4)).isEqualTo(54 + 8);
        assertThat(HEX.formatHex(Arrays.copyOfRange(b, 42, 62))).isEqualTo("64" + "00" + "ffff" + "00000012"
                + "00000007" + "11111111" + "00000013");
        assertThat(RoceFrame.extensionLength(IbOpcode.UD_SEND_ONLY_WITH_IMMEDIATE.code)).isEqualTo(12);
    }

    /**
     * The same SEND_ONLY of "hello" over IPv6, fd00::1 to fd00::2, hop limit 64: Ethernet 14 + IPv6 40 + UDP 8 + BTH
     * 12 + 5 + pad 3 + ICRC 4 = 86 bytes; IPv6 payload length and UDP length 32 (0x20). The ICRC masks the traffic
     * class, the flow label and the hop limit (the version stays); the UDP checksum covers the pseudo-header (the
     * addresses, the length, next header 17) and the whole UDP datagram, the ICRC included.
     */
    @Test
    void rcSendOnlyOverIpv6ByHand() {
        RoceFrame f = rcSend();
        f.addresses(Frames.GID_A, Frames.GID_B);
        byte[] b = new byte[86];
        int h = f.headers(b, 0, 5);
        assertThat(h).isEqualTo(74);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, b, h, 5);
        assertThat(f.trailer(b, 0, 5)).isEqualTo(7);
        String gids = "fd000000000000000000000000000001" + "fd000000000000000000000000000002";
        assertThat(HEX.formatHex(b, 0, 60)).isEqualTo(""
                + "020000000002" + "020000000001" + "86dd"
                + "60000000" + "0020" + "11" + "40" + gids
                + "c011" + "12b7" + "0020");
        assertThat(HEX.formatHex(b, 62, 82)).isEqualTo("04" + "30" + "ffff" + "00000012" + "80000007"
                + "68656c6c6f" + "000000");
        String masked = "ffffffffffffffff"
                + "6fffffff" + "0020" + "11" + "ff" + gids
                + "c011" + "12b7" + "0020" + "ffff"
                + "04" + "30" + "ffff" + "ff000012" + "80000007"
                + "68656c6c6f" + "000000";
        assertIcrc(b, 82, masked);
        // The UDP checksum: the ones' complement sum of the pseudo-header and the datagram is all ones.
        long sum = 0;
        for (int i = 22; i < 54; i += 2) {
            sum += (b[i] & 0xff) << 8 | b[i + 1] & 0xff;  // source and destination addresses
        }
        sum += 32 + 17;                                   // upper-layer length, next header
        for (int i = 54; i < 86; i += 2) {
            sum += (b[i] & 0xff) << 8 | b[i + 1] & 0xff;  // the datagram, checksum included
        }
        while (sum >>> 16 != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        assertThat(sum).isEqualTo(0xffff);
        assertThat(HEX.formatHex(b, 60, 62)).isNotEqualTo("0000");
    }

    /**
     * With an 802.1Q tag (PCP 3, VID 0x123): TPID 0x8100 and the TCI between the source MAC and the EtherType; the
     * IP header and all after it move by 4 bytes and are otherwise the same, ICRC included (it starts at IP).
     */
    @Test
    void vlanTagBeforeTheEtherType() {
        RoceFrame plain = rcSend();
        byte[] a = new byte[66];
        plain.headers(a, 0, 5);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, a, 54, 5);
        plain.trailer(a, 0, 5);
        RoceFrame tagged = rcSend();
        tagged.vlan = 3 << 13 | 0x123;
        assertThat(tagged.frameLength(5)).isEqualTo(70);
        byte[] b = new byte[70];
        assertThat(tagged.headers(b, 0, 5)).isEqualTo(58);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, b, 58, 5);
        tagged.trailer(b, 0, 5);
        assertThat(HEX.formatHex(b, 12, 18)).isEqualTo("8100" + "6123" + "0800");
        assertThat(Arrays.copyOfRange(b, 18, 70)).isEqualTo(Arrays.copyOfRange(a, 14, 66));
        assertThat(HEX.formatHex(b, 66, 70)).isEqualTo(KNOWN_ICRC);
    }

    /** ECN: set, it replaces the low two bits of the TOS and leaves the DSCP; the ICRC does not change. */
    @Test
    void ecnBitsGoInTheTos() {
        RoceFrame f = rcSend();
        f.tos = 0xb8; // DSCP 46
        f.ecn = RoceFrame.ECN_ECT0;
        byte[] b = new byte[66];
        f.headers(b, 0, 5);
        System.arraycopy("hello".getBytes(StandardCharsets.US_ASCII), 0, b, 54, 5);
        f.trailer(b, 0, 5);
        assertThat(b[15]).isEqualTo((byte) 0xba);
        assertThat(HEX.formatHex(b, 62, 66)).isEqualTo(KNOWN_ICRC);
    }

    /** Into a segment at an offset: the same bytes as into an array. */
    @Test
    void segmentAndArrayAgree() {
        RoceFrame f = rcSend();
        f.addresses(Frames.GID_A, Frames.GID_B);
        f.vlan = 7;
        byte[] a = new byte[200];
        f.headers(a, 0, 9);
        f.trailer(a, 0, 9);
        java.lang.foreign.MemorySegment s = java.lang.foreign.Arena.ofAuto().allocate(300);
        f.headers(s, 50, 9);
        f.trailer(s, 50, 9);
        assertThat(s.asSlice(50, f.frameLength(9)).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                .isEqualTo(Arrays.copyOf(a, f.frameLength(9)));
    }

    /** A payload no IP datagram can carry is the caller's mistake. */
    @Test
    void payloadTooLargeForIp() {
        RoceFrame f = rcSend();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> f.headers(new byte[70_000], 0, 65_500))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
