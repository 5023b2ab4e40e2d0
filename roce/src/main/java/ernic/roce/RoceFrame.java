package ernic.roce;

import ernic.common.InternetChecksum;
import ernic.common.IpAddress;

import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;
import static ernic.roce.Layout.ETH_DMAC;
import static ernic.roce.Layout.ETH_SMAC;
import static ernic.roce.Layout.ETH_TYPE;
import static ernic.roce.Layout.FLOW_LABEL_MASK;
import static ernic.roce.Layout.IPPROTO_UDP;
import static ernic.roce.Layout.IPV4_CSUM;
import static ernic.roce.Layout.IPV4_DF;
import static ernic.roce.Layout.IPV4_DST;
import static ernic.roce.Layout.IPV4_FRAG;
import static ernic.roce.Layout.IPV4_ID;
import static ernic.roce.Layout.IPV4_PROTO;
import static ernic.roce.Layout.IPV4_SRC;
import static ernic.roce.Layout.IPV4_TOS;
import static ernic.roce.Layout.IPV4_TOT_LEN;
import static ernic.roce.Layout.IPV4_TTL;
import static ernic.roce.Layout.IPV4_VER_IHL;
import static ernic.roce.Layout.IPV6_DST;
import static ernic.roce.Layout.IPV6_HOP;
import static ernic.roce.Layout.IPV6_NEXT;
import static ernic.roce.Layout.IPV6_PLEN;
import static ernic.roce.Layout.IPV6_SRC;
import static ernic.roce.Layout.IPV6_VTF;
import static ernic.roce.Layout.UDP_CSUM;
import static ernic.roce.Layout.UDP_DPORT;
import static ernic.roce.Layout.UDP_LEN;
import static ernic.roce.Layout.UDP_SPORT;
import static ernic.roce.Layout.VLAN_TCI;
import static ernic.roce.Layout.VLAN_TYPE;

/**
 * One RoCEv2 frame as Wireshark's RoCE dissector reads it: Ethernet II, an optional 802.1Q tag, IPv4 (no options)
 * or IPv6 (no extension headers), UDP to port 4791, the 12-byte BTH, the extension headers the IBTA opcode calls
 * for (DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, in that order), the payload, the pad to a multiple of
 * 4 and the 4-byte ICRC. A reused, mutable value (no allocation per frame): the builder of the frames the device
 * sends (set the fields, then {@link #headers} writes everything before the payload and {@link #trailer} the pad,
 * the ICRC and, over IPv6, the UDP checksum after it), what {@link RoceParser} fills from a received frame, and what
 * it reads out of the header template the ionic driver gives the device ({@link RoceParser#template}).
 *
 * <p>Every multi-byte field is big-endian (network order) except the ICRC, which goes on the wire least significant
 * byte first, as an Ethernet FCS does. What the builder fills in itself: the IP and UDP lengths, the IPv4 header
 * checksum (identification 0, DF set), the UDP checksum over IPv6 (over IPv4 it is 0, which RoCEv2 allows: the ICRC
 * covers the packet), the BTH's PadCnt and the ICRC.
 */
public final class RoceFrame {
    public static final int ETH_HLEN = Layout.ETH_HLEN, VLAN_HLEN = Layout.VLAN_HLEN, IPV4_HLEN = Layout.IPV4_HLEN,
            IPV6_HLEN = Layout.IPV6_HLEN, UDP_HLEN = Layout.UDP_HLEN, BTH_LEN = TransportHeader.BTH_LEN,
            ICRC_LEN = Icrc.LENGTH;
    /** The UDP destination port of RoCEv2 (IANA). */
    public static final int ROCE_V2_PORT = 4791;
    public static final int ETH_P_IP = Layout.ETH_P_IP, ETH_P_IPV6 = Layout.ETH_P_IPV6, ETH_P_8021Q = Layout.ETH_P_8021Q;
    /** {@link #vlan} when the frame has no 802.1Q tag. */
    public static final int NO_VLAN = -1;
    /** The ECN codepoints (RFC 3168) in the low two bits of the TOS / traffic class. */
    public static final int ECN_NOT_ECT = 0, ECN_ECT1 = 1, ECN_ECT0 = 2, ECN_CE = 3;

    // Ethernet and 802.1Q
    public long dmac, smac;
    /** The 802.1Q TCI (PCP << 13 | DEI << 12 | VID), or {@link #NO_VLAN}. */
    public int vlan = NO_VLAN;
    // IP
    /** IPv6 (the addresses in {@link #srcGid} and {@link #dstGid}), else IPv4 ({@link #srcIp}, {@link #dstIp}). */
    public boolean ipv6;
    /** IPv4 addresses, a.b.c.d as {@code a << 24 | ...}. */
    public int srcIp, dstIp;
    /**
     * The addresses as GIDs: what the builder sends over IPv6; what the parser fills for both versions (IPv4
     * v4-mapped, {@code ::ffff:a.b.c.d}, as {@code ernic.common.IpAddress} has it).
     */
    public final byte[] srcGid = new byte[16], dstGid = new byte[16];
    /** The IPv4 TOS or IPv6 traffic class byte: DSCP << 2 | ECN. */
    public int tos;
    /** When 0 to 3: the ECN bits sent in place of the low two bits of {@link #tos}; -1 sends {@link #tos} as it is. */
    public int ecn = -1;
    /** IPv4 TTL or IPv6 hop limit. */
    public int ttl = 64;
    /** IPv6 flow label (20 bits). */
    public int flowLabel;
    // UDP
    public int srcPort;
    /** The transport headers: BTH and the extension headers its opcode calls for. */
    public final TransportHeader bth = new TransportHeader();

    /** Made on the first frame written: a frame that only holds a template (one per AH, per QP) needs none. */
    private Icrc icrc;
    /** The last array written through the byte[] methods, and its segment: one wrapper per buffer, not per frame. */
    private byte[] array;
    private MemorySegment arraySegment;

    /** Bytes after the BTH and before the payload for {@code opcode} (its headers in {@link IbOpcode}). */
    public static int extensionLength(int opcode) {
        return IbOpcode.headerLength(opcode);
    }

    /** Bytes of the Ethernet header, with the 802.1Q tag when there is one. */
    public int ethernetLength() {
        return ETH_HLEN + (vlan == NO_VLAN ? 0 : VLAN_HLEN);
    }

    /** Bytes of the IP header: 40 for IPv6, 20 for IPv4. */
    public int ipHeaderLength() {
        return ipv6 ? IPV6_HLEN : IPV4_HLEN;
    }

    /** Bytes from the Ethernet header to the payload for the current opcode. */
    public int headerLength() {
        return ethernetLength() + ipHeaderLength() + UDP_HLEN + bth.length();
    }

    /** The pad that brings {@code payload} bytes to a multiple of 4 (BTH PadCnt). */
    public static int pad(int payload) {
        return TransportHeader.pad(payload);
    }

    /** The whole frame's length with {@code payload} bytes: headers, payload, pad, ICRC. */
    public int frameLength(int payload) {
        return headerLength() + payload + pad(payload) + ICRC_LEN;
    }

    /** The TOS / traffic class byte as sent: {@link #tos} with {@link #ecn} in its low bits when that is set. */
    public int trafficClass() {
        return (ecn >= 0 ? tos & 0xfc | ecn & 3 : tos) & 0xff;
    }

    /**
     * Sets the addresses from two GIDs of 16 bytes: IPv4 when the source is v4-mapped ({@code ::ffff:a.b.c.d}),
     * else IPv6.
     */
    public void addresses(byte[] sgid, byte[] dgid) {
        System.arraycopy(sgid, 0, srcGid, 0, 16);
        System.arraycopy(dgid, 0, dstGid, 0, 16);
        ipv6 = !IpAddress.isV4Mapped(sgid);
        srcIp = ipv6 ? 0 : IpAddress.ipv4Of(sgid);
        dstIp = ipv6 ? 0 : IpAddress.ipv4Of(dgid);
    }

    /** Copies everything outside the transport headers (Ethernet, VLAN, IP, UDP fields) from {@code o}. */
    public void copyOuter(RoceFrame o) {
        dmac = o.dmac;
        smac = o.smac;
        vlan = o.vlan;
        ipv6 = o.ipv6;
        srcIp = o.srcIp;
        dstIp = o.dstIp;
        System.arraycopy(o.srcGid, 0, srcGid, 0, 16);
        System.arraycopy(o.dstGid, 0, dstGid, 0, 16);
        tos = o.tos;
        ecn = o.ecn;
        ttl = o.ttl;
        flowLabel = o.flowLabel;
        srcPort = o.srcPort;
    }

    /**
     * Writes the headers of a frame that carries {@code payload} bytes at {@code b[at]}; the IP and UDP lengths
     * count the whole frame (pad and ICRC included). Returns the header length; the payload goes right after.
     */
    public int headers(byte[] b, int at, int payload) {
        return headers(segment(b), at, payload);
    }

    /** {@link #headers(byte[], int, int)} into a segment. */
    public int headers(MemorySegment s, long at, int payload) {
        int frame = frameLength(payload);
        int eth = ethernetLength();
        int ipLength = frame - eth;
        if (payload < 0 || ipLength > 0xffff + (ipv6 ? IPV6_HLEN : 0)) {
            throw new IllegalArgumentException("no RoCEv2 frame carries " + payload + " payload bytes");
        }
        BE.put16(s, at + ETH_DMAC, (int) (dmac >>> 32));
        BE.put32(s, at + ETH_DMAC + 2, (int) dmac);
        BE.put16(s, at + ETH_SMAC, (int) (smac >>> 32));
        BE.put32(s, at + ETH_SMAC + 2, (int) smac);
        int type = ipv6 ? ETH_P_IPV6 : ETH_P_IP;
        if (vlan == NO_VLAN) {
            BE.put16(s, at + ETH_TYPE, type);
        } else {
            BE.put16(s, at + ETH_TYPE, ETH_P_8021Q);
            BE.put16(s, at + ETH_HLEN + VLAN_TCI, vlan);
            BE.put16(s, at + ETH_HLEN + VLAN_TYPE, type);
        }
        long ip = at + eth;
        long udp = ip + ipHeaderLength();
        if (ipv6) {
            BE.put32(s, ip + IPV6_VTF, 6 << 28 | trafficClass() << 20 | flowLabel & FLOW_LABEL_MASK);
            BE.put16(s, ip + IPV6_PLEN, ipLength - IPV6_HLEN);
            BE.put8(s, ip + IPV6_NEXT, IPPROTO_UDP);
            BE.put8(s, ip + IPV6_HOP, ttl);
            MemorySegment.copy(srcGid, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, ip + IPV6_SRC, 16);
            MemorySegment.copy(dstGid, 0, s, java.lang.foreign.ValueLayout.JAVA_BYTE, ip + IPV6_DST, 16);
        } else {
            BE.put8(s, ip + IPV4_VER_IHL, 0x45);
            BE.put8(s, ip + IPV4_TOS, trafficClass());
            BE.put16(s, ip + IPV4_TOT_LEN, ipLength);
            BE.put16(s, ip + IPV4_ID, 0);
            BE.put16(s, ip + IPV4_FRAG, IPV4_DF);
            BE.put8(s, ip + IPV4_TTL, ttl);
            BE.put8(s, ip + IPV4_PROTO, IPPROTO_UDP);
            BE.put16(s, ip + IPV4_CSUM, 0);
            BE.put32(s, ip + IPV4_SRC, srcIp);
            BE.put32(s, ip + IPV4_DST, dstIp);
            BE.put16(s, ip + IPV4_CSUM, InternetChecksum.of(s, ip, IPV4_HLEN));
        }
        BE.put16(s, udp + UDP_SPORT, srcPort);
        BE.put16(s, udp + UDP_DPORT, ROCE_V2_PORT);
        BE.put16(s, udp + UDP_LEN, ipLength - ipHeaderLength());
        BE.put16(s, udp + UDP_CSUM, 0); // over IPv6, the trailer writes it once the packet is whole
        long end = bth.write(s, udp + UDP_HLEN, payload);
        return (int) (end - at);
    }

    /**
     * After the headers at {@code b[at]} and {@code payload} payload bytes: the pad (zeros), the ICRC and, over
     * IPv6, the UDP checksum. Returns the bytes written after the payload (pad + 4).
     */
    public int trailer(byte[] b, int at, int payload) {
        return trailer(segment(b), at, payload);
    }

    /** {@link #trailer(byte[], int, int)} in a segment. */
    public int trailer(MemorySegment s, long at, int payload) {
        long end = at + headerLength() + payload;
        int pad = pad(payload);
        for (int i = 0; i < pad; i++) {
            BE.put8(s, end + i, 0);
        }
        long ip = at + ethernetLength();
        Icrc.put(s, end + pad, icrc().compute(s, ip, ipv6, end + pad));
        if (ipv6) {
            long udp = ip + IPV6_HLEN;
            int udpLength = (int) (end + pad + ICRC_LEN - udp);
            BE.put16(s, udp + UDP_CSUM, 0);
            // RFC 8200 8.1: the pseudo-header is the two addresses, the upper-layer length and the next header.
            int pseudo = InternetChecksum.sum(s, ip + IPV6_SRC, 32, udpLength + IPPROTO_UDP);
            int sum = ~InternetChecksum.sum(s, udp, udpLength, pseudo) & 0xffff;
            BE.put16(s, udp + UDP_CSUM, sum == 0 ? 0xffff : sum); // 0 means "no checksum", which IPv6 forbids
        }
        return pad + ICRC_LEN;
    }

    /**
     * The invariant CRC of the frame at {@code b[at]} ({@code length} bytes up to the ICRC) laid out as this frame
     * is (VLAN tag or not, IPv4 or IPv6), as {@link Icrc} computes it.
     */
    public int icrc(byte[] b, int at, int length) {
        return icrc().compute(segment(b), at + ethernetLength(), ipv6, at + length);
    }

    private Icrc icrc() {
        if (icrc == null) {
            icrc = new Icrc();
        }
        return icrc;
    }

    private MemorySegment segment(byte[] b) {
        if (b != array) {
            array = b;
            arraySegment = MemorySegment.ofArray(b);
        }
        return arraySegment;
    }
}
