package ernic.roce;

import ernic.roce.RoceParser.Refusal;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static ernic.roce.Frames.build;
import static ernic.roce.Frames.bth;
import static ernic.roce.Frames.frame;
import static ernic.roce.Frames.ip;
import static ernic.roce.Frames.payload;
import static ernic.roce.Frames.put16;
import static ernic.roce.Frames.reseal;
import static ernic.roce.Frames.u16;
import static ernic.roce.Frames.udp;
import static org.assertj.core.api.Assertions.assertThat;

/** The parser: what the builder writes reads back; each malformed frame is refused with its own cause. */
class RoceParserTest {
    final RoceParser parser = new RoceParser();

    Refusal parse(byte[] b) {
        return parser.parse(MemorySegment.ofArray(b));
    }

    /** Every opcode of the table, IPv4 and IPv6, with and without a VLAN tag: built, parsed, the same fields. */
    @ParameterizedTest
    @EnumSource(IbOpcode.class)
    void everyOpcodeRoundTrips(IbOpcode op) {
        for (boolean ipv6 : new boolean[] {false, true}) {
            for (boolean vlan : new boolean[] {false, true}) {
                RoceFrame sent = frame(op, ipv6, vlan);
                byte[] payload = payload(op.payload ? 13 : 0);
                byte[] b = build(sent, payload);
                assertThat(parse(b)).as("%s ipv6=%s vlan=%s", op, ipv6, vlan).isEqualTo(Refusal.NONE);
                assertSameFrame(op, sent, parser.frame);
                assertThat(parser.payloadLength).isEqualTo(payload.length);
                assertThat(parser.payloadOffset).isEqualTo(sent.headerLength());
                assertThat(Arrays.copyOfRange(b, (int) parser.payloadOffset,
                        (int) parser.payloadOffset + parser.payloadLength)).isEqualTo(payload);
                assertThat(parser.frame.bth.padCnt).isEqualTo(RoceFrame.pad(payload.length));
            }
        }
    }

    static void assertSameFrame(IbOpcode op, RoceFrame sent, RoceFrame got) {
        assertThat(got.dmac).isEqualTo(sent.dmac);
        assertThat(got.smac).isEqualTo(sent.smac);
        assertThat(got.vlan).isEqualTo(sent.vlan);
        assertThat(got.ipv6).isEqualTo(sent.ipv6);
        if (sent.ipv6) {
            assertThat(got.srcGid).isEqualTo(sent.srcGid);
            assertThat(got.dstGid).isEqualTo(sent.dstGid);
            assertThat(got.flowLabel).isEqualTo(sent.flowLabel);
        } else {
            assertThat(got.srcIp).isEqualTo(sent.srcIp);
            assertThat(got.dstIp).isEqualTo(sent.dstIp);
            assertThat(got.srcGid).isEqualTo(ernic.common.IpAddress.ofIpv4(sent.srcIp).gid());
            assertThat(got.dstGid).isEqualTo(ernic.common.IpAddress.ofIpv4(sent.dstIp).gid());
        }
        assertThat(got.tos).isEqualTo(sent.trafficClass());
        assertThat(got.ttl).isEqualTo(sent.ttl);
        assertThat(got.srcPort).isEqualTo(sent.srcPort);
        TransportHeader s = sent.bth, g = got.bth;
        assertThat(g.opcode).isEqualTo(op.code);
        assertThat(g.solicited).isEqualTo(s.solicited);
        assertThat(g.ackReq).isEqualTo(s.ackReq);
        assertThat(g.tver).isZero();
        assertThat(g.pkey).isEqualTo(s.pkey);
        assertThat(g.destQp).isEqualTo(s.destQp);
        assertThat(g.psn).isEqualTo(s.psn);
        if (op.has(IbOpcode.Header.DETH)) {
            assertThat(new int[] {g.qkey, g.srcQp}).containsExactly(s.qkey, s.srcQp);
        }
        if (op.has(IbOpcode.Header.RETH)) {
            assertThat(new long[] {g.va, g.rkey, g.dmaLength}).containsExactly(s.va, s.rkey, s.dmaLength);
        }
        if (op.has(IbOpcode.Header.ATOMIC_ETH)) {
            assertThat(new long[] {g.va, g.rkey, g.swapAdd, g.compare}).containsExactly(s.va, s.rkey, s.swapAdd,
                    s.compare);
        }
        if (op.has(IbOpcode.Header.AETH)) {
            assertThat(new int[] {g.syndrome, g.msn}).containsExactly(s.syndrome, s.msn);
        }
        if (op.has(IbOpcode.Header.ATOMIC_ACK_ETH)) {
            assertThat(g.origData).isEqualTo(s.origData);
        }
        if (op.immediate()) {
            assertThat(g.imm).isEqualTo(s.imm);
        }
        if (op.invalidate()) {
            assertThat(g.invRkey).isEqualTo(s.invRkey);
        }
    }

    /** Any payload length, any PSN and QP: the payload and the PadCnt come back as sent. */
    @Property(tries = 200)
    void anyPayloadRoundTrips(@ForAll @IntRange(min = 0, max = 4096) int length, @ForAll boolean ipv6,
                              @ForAll boolean vlan, @ForAll @IntRange(max = 0xff_ffff) int psn) {
        RoceFrame sent = frame(IbOpcode.RC_RDMA_WRITE_MIDDLE, ipv6, vlan);
        sent.bth.psn = psn;
        byte[] payload = payload(length);
        byte[] b = build(sent, payload);
        assertThat(parse(b)).isEqualTo(Refusal.NONE);
        assertThat(parser.frame.bth.psn).isEqualTo(psn);
        assertThat(parser.payloadLength).isEqualTo(length);
        assertThat(Arrays.copyOfRange(b, (int) parser.payloadOffset, (int) parser.payloadOffset + length))
                .isEqualTo(payload);
    }

    /** A short frame is padded to Ethernet's 60 bytes on the way: the bytes after the IP datagram are not read. */
    @Test
    void ethernetPaddingIsIgnored() {
        RoceFrame sent = frame(IbOpcode.RC_ACKNOWLEDGE, false, false);
        byte[] b = build(sent, new byte[0]);
        assertThat(b.length).isEqualTo(62);
        byte[] padded = Arrays.copyOf(b, 64);
        assertThat(parse(padded)).isEqualTo(Refusal.NONE);
        assertThat(parser.payloadLength).isZero();
        assertThat(parser.frame.bth.msn).isEqualTo(sent.bth.msn);
    }

    /** The parser reads a frame at an offset of a larger segment (a ring) and gives the payload's offset in it. */
    @Test
    void frameAtAnOffset() {
        RoceFrame sent = frame(IbOpcode.UD_SEND_ONLY_WITH_IMMEDIATE, true, true);
        byte[] b = build(sent, payload(40));
        byte[] ring = new byte[4096];
        System.arraycopy(b, 0, ring, 1000, b.length);
        assertThat(parser.parse(MemorySegment.ofArray(ring), 1000, b.length)).isEqualTo(Refusal.NONE);
        assertThat(parser.payloadOffset).isEqualTo(1000 + sent.headerLength());
        assertThat(parser.frame.bth.qkey).isEqualTo(sent.bth.qkey);
        assertThat(parser.frame.bth.srcQp).isEqualTo(sent.bth.srcQp);
    }

    /** ECN: the traffic class comes back with its ECN bits; a CE mark is visible to the caller. */
    @Test
    void congestionExperiencedIsVisible() {
        for (boolean ipv6 : new boolean[] {false, true}) {
            RoceFrame sent = frame(IbOpcode.RC_SEND_ONLY, ipv6, false);
            sent.ecn = RoceFrame.ECN_CE;
            assertThat(parse(build(sent, payload(8)))).isEqualTo(Refusal.NONE);
            assertThat(parser.frame.tos & 3).isEqualTo(RoceFrame.ECN_CE);
            assertThat(parser.frame.tos >>> 2).isEqualTo(0x68 >>> 2);
        }
    }

    // ---- refusals, each with its own cause

    static byte[] ipv4Send() {
        return build(frame(IbOpcode.RC_SEND_ONLY, false, false), payload(8));
    }

    static byte[] ipv6Send() {
        return build(frame(IbOpcode.RC_SEND_ONLY, true, false), payload(8));
    }

    @Test
    void truncatedEthernet() {
        assertThat(parse(new byte[13])).isEqualTo(Refusal.TRUNCATED_ETHERNET);
        byte[] tagged = build(frame(IbOpcode.RC_SEND_ONLY, false, true), payload(8));
        assertThat(parse(Arrays.copyOf(tagged, 16))).isEqualTo(Refusal.TRUNCATED_ETHERNET);
        assertThat(Refusal.TRUNCATED_ETHERNET.roce).isFalse();
    }

    @Test
    void notIp() {
        byte[] b = ipv4Send();
        put16(b, 12, 0x0806); // ARP
        assertThat(parse(b)).isEqualTo(Refusal.NOT_IP);
        byte[] qinq = build(frame(IbOpcode.RC_SEND_ONLY, false, true), payload(8));
        put16(qinq, 16, 0x8100); // a second tag
        assertThat(parse(qinq)).isEqualTo(Refusal.NOT_IP);
    }

    @Test
    void truncatedIp() {
        assertThat(parse(Arrays.copyOf(ipv4Send(), 14 + 19))).isEqualTo(Refusal.TRUNCATED_IP);
        assertThat(parse(Arrays.copyOf(ipv6Send(), 14 + 39))).isEqualTo(Refusal.TRUNCATED_IP);
    }

    @Test
    void ipVersionMustMatchTheEtherType() {
        byte[] b = ipv4Send();
        b[14] = 0x65;
        assertThat(parse(b)).isEqualTo(Refusal.IP_VERSION);
        byte[] v6 = ipv6Send();
        v6[14] = (byte) (0x40 | v6[14] & 0x0f);
        assertThat(parse(v6)).isEqualTo(Refusal.IP_VERSION);
    }

    @Test
    void ipv4Options() {
        byte[] b = ipv4Send();
        b[14] = 0x46;
        assertThat(parse(b)).isEqualTo(Refusal.IPV4_OPTIONS);
    }

    @Test
    void ipv4Fragments() {
        byte[] more = ipv4Send();
        put16(more, 14 + 6, 0x2000);
        assertThat(parse(reseal(more))).isEqualTo(Refusal.IPV4_FRAGMENT);
        byte[] later = ipv4Send();
        put16(later, 14 + 6, 0x0010);
        assertThat(parse(reseal(later))).isEqualTo(Refusal.IPV4_FRAGMENT);
    }

    @Test
    void ipv6ExtensionHeaders() {
        byte[] b = ipv6Send();
        b[14 + 6] = 0; // hop-by-hop options
        assertThat(parse(b)).isEqualTo(Refusal.IPV6_EXTENSION_HEADERS);
        b[14 + 6] = 44; // fragment
        assertThat(parse(b)).isEqualTo(Refusal.IPV6_EXTENSION_HEADERS);
    }

    @Test
    void notUdp() {
        byte[] b = ipv4Send();
        b[14 + 9] = 6; // TCP
        assertThat(parse(reseal(b))).isEqualTo(Refusal.NOT_UDP);
        byte[] v6 = ipv6Send();
        v6[14 + 6] = 6;
        assertThat(parse(v6)).isEqualTo(Refusal.NOT_UDP);
    }

    @Test
    void ipLengthBeyondTheFrameOrTooShort() {
        byte[] b = ipv4Send();
        put16(b, 14 + 2, b.length - 14 + 1); // checked before the header checksum
        assertThat(parse(b)).isEqualTo(Refusal.IP_LENGTH);
        put16(b, 14 + 2, 20 + 7);
        assertThat(parse(b)).isEqualTo(Refusal.IP_LENGTH);
        byte[] v6 = ipv6Send();
        put16(v6, 14 + 4, v6.length - 14 - 40 + 1);
        assertThat(parse(v6)).isEqualTo(Refusal.IP_LENGTH);
        put16(v6, 14 + 4, 0); // a jumbogram's 0
        assertThat(parse(v6)).isEqualTo(Refusal.IP_LENGTH);
    }

    @Test
    void notTheRocePort() {
        byte[] b = ipv4Send();
        put16(b, udp(b) + 2, 4792);
        assertThat(parse(b)).isEqualTo(Refusal.NOT_ROCE_PORT);
        assertThat(Refusal.NOT_ROCE_PORT.roce).isFalse();
    }

    @Test
    void ipv4Checksum() {
        byte[] b = ipv4Send();
        b[14 + 8]--; // TTL, checksum left as it was
        assertThat(parse(b)).isEqualTo(Refusal.IPV4_CHECKSUM);
        assertThat(Refusal.IPV4_CHECKSUM.roce).isTrue();
    }

    @Test
    void udpLengthMustAgreeWithTheIpLength() {
        byte[] b = ipv4Send();
        put16(b, udp(b) + 4, u16(b, udp(b) + 4) - 4);
        assertThat(parse(reseal(b))).isEqualTo(Refusal.UDP_LENGTH);
        byte[] v6 = ipv6Send();
        put16(v6, udp(v6) + 4, u16(v6, udp(v6) + 4) + 1);
        assertThat(parse(v6)).isEqualTo(Refusal.UDP_LENGTH);
    }

    @Test
    void truncatedBth() {
        byte[] b = ipv4Send();
        int ipLength = 20 + 8 + 12 + 4 - 1; // one byte short of a BTH and an ICRC
        put16(b, 14 + 2, ipLength);
        put16(b, udp(b) + 4, ipLength - 20);
        assertThat(parse(reseal(Arrays.copyOf(b, 14 + ipLength)))).isEqualTo(Refusal.TRUNCATED_BTH);
    }

    @Test
    void icrc() {
        for (byte[] b : new byte[][] {ipv4Send(), ipv6Send()}) {
            b[b.length - 6] ^= 1; // a payload bit
            assertThat(parse(b)).isEqualTo(Refusal.ICRC);
        }
        byte[] b = ipv4Send();
        b[b.length - 1] ^= (byte) 0x80; // the ICRC itself
        assertThat(parse(b)).isEqualTo(Refusal.ICRC);
    }

    /** The fields a router may change are outside the ICRC: a new TTL, DSCP, ECN or FECN/BECN keep it valid. */
    @Test
    void icrcSurvivesWhatRoutersChange() {
        byte[] b = ipv4Send();
        b[14 + 1] = (byte) 0xb3; // DSCP and CE
        b[14 + 8] = 1;           // TTL
        b[bth(b) + 4] |= (byte) 0xc0; // FECN, BECN
        Frames.put16(b, 14 + 10, 0);
        Frames.put16(b, 14 + 10, ernic.common.InternetChecksum.of(b, 14, 20, 0));
        assertThat(parse(b)).isEqualTo(Refusal.NONE);
        assertThat(parser.frame.bth.fecn).isTrue();
        assertThat(parser.frame.bth.becn).isTrue();
        byte[] v6 = ipv6Send();
        v6[14] = 0x6f;            // traffic class high nibble
        v6[15] = (byte) 0xf5;     // traffic class low nibble, flow label
        v6[14 + 7] = 2;           // hop limit
        assertThat(parse(v6)).isEqualTo(Refusal.NONE);
        assertThat(parser.frame.ttl).isEqualTo(2);
    }

    @Test
    void transportVersion() {
        byte[] b = ipv4Send();
        b[bth(b) + 1] |= 1;
        assertThat(parse(reseal(b))).isEqualTo(Refusal.TRANSPORT_VERSION);
    }

    @Test
    void cnpIsCountedNotTaken() {
        RoceFrame f = frame(IbOpcode.RC_SEND_ONLY, false, false);
        f.bth.becn = true;
        byte[] b = build(f, new byte[16]); // a CNP: BTH, 16 reserved bytes, ICRC
        b[bth(b)] = (byte) RoceParser.CNP_OPCODE;
        assertThat(parse(reseal(b))).isEqualTo(Refusal.CNP);
        assertThat(parser.frame.bth.destQp).isEqualTo(f.bth.destQp);
        assertThat(parser.frame.bth.becn).isTrue();
    }

    @Test
    void unknownOpcode() {
        for (int code : new int[] {0x15, 0x18, 0x40, 0x4c, 0xa0, 0x2c, 0x66}) { // reserved, RD, XRC, UC READ, UD WRITE
            byte[] b = ipv4Send();
            b[bth(b)] = (byte) code;
            assertThat(parse(reseal(b))).as("opcode 0x%x", code).isEqualTo(Refusal.UNKNOWN_OPCODE);
        }
    }

    @Test
    void truncatedExtensionHeaders() {
        byte[] b = build(frame(IbOpcode.RC_RDMA_WRITE_ONLY, false, false), new byte[0]); // a 16-byte RETH
        b[bth(b)] = (byte) IbOpcode.RC_CMP_SWAP.code; // wants a 28-byte AtomicETH
        assertThat(parse(reseal(b))).isEqualTo(Refusal.TRUNCATED_HEADERS);
    }

    @Test
    void padCount() {
        byte[] b = build(frame(IbOpcode.RC_SEND_ONLY, false, false), new byte[0]);
        b[bth(b) + 1] |= 0x30; // PadCnt 3 with no payload
        assertThat(parse(reseal(b))).isEqualTo(Refusal.PAD);
        // 5 payload bytes and no pad: the packet is not a multiple of 4 bytes
        byte[] odd = build(frame(IbOpcode.RC_SEND_ONLY, false, false), payload(5));
        odd[bth(odd) + 1] &= (byte) 0xcf;
        int cut = 3;
        put16(odd, 14 + 2, u16(odd, 14 + 2) - cut);
        put16(odd, udp(odd) + 4, u16(odd, udp(odd) + 4) - cut);
        byte[] shorter = Arrays.copyOf(odd, odd.length - cut);
        assertThat(parse(reseal(shorter))).isEqualTo(Refusal.PAD);
    }

    @Test
    void payloadAfterAnOpcodeWithout() {
        for (IbOpcode op : new IbOpcode[] {IbOpcode.RC_ACKNOWLEDGE, IbOpcode.RC_RDMA_READ_REQUEST,
                IbOpcode.RC_FETCH_ADD}) {
            byte[] b = build(frame(op, false, false), payload(4));
            assertThat(parse(b)).as(op.name()).isEqualTo(Refusal.PAYLOAD_NOT_ALLOWED);
        }
    }

    /** The two kinds: frames that are not RoCEv2 go on as Ethernet; RoCEv2 packets refused are counted drops. */
    @Test
    void refusalsSayWhetherTheFrameWasRoce() {
        for (Refusal r : Refusal.values()) {
            boolean afterThePort = r.ordinal() > Refusal.NOT_ROCE_PORT.ordinal() && r != Refusal.TEMPLATE_LENGTH;
            assertThat(r.roce).as(r.name()).isEqualTo(afterThePort);
        }
    }

    @Test
    void aRangeOutsideTheSegmentIsTheCallersError() {
        byte[] b = ipv4Send();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> parser.parse(MemorySegment.ofArray(b), 10, b.length))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(ip(b)).isEqualTo(14);
    }

    /** Hostile input: any truncation and any damage of a valid frame gives a refusal or a frame, never a throw. */
    @Property(tries = 500)
    void damagedFramesNeverThrow(@ForAll @IntRange(max = 2) int kind, @ForAll boolean ipv6, @ForAll boolean vlan,
                                 @ForAll @IntRange(max = 200) int at, @ForAll byte value,
                                 @ForAll @IntRange(max = 200) int cut) {
        IbOpcode op = IbOpcode.values()[(at + cut) % IbOpcode.values().length];
        byte[] b = build(frame(op, ipv6, vlan), payload(op.payload ? 20 : 0));
        b[at % b.length] = value;
        byte[] frame = kind == 1 ? Arrays.copyOf(b, Math.min(cut, b.length)) : b;
        if (kind == 2) {
            try {
                reseal(frame); // so that the damage reaches the checks after the ICRC
            } catch (RuntimeException helperCannot) {
                // the damage hit a length the helper needs: the frame stays as damaged
            }
        }
        Refusal r = parse(frame);
        assertThat(r).isNotNull();
        if (r == Refusal.NONE) {
            assertThat(parser.payloadOffset + parser.payloadLength).isLessThanOrEqualTo(frame.length);
        }
    }
}
