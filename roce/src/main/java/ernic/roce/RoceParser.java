package ernic.roce;

import ernic.common.InternetChecksum;
import ernic.common.IpAddress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

import static ernic.common.Endian.BE;
import static ernic.roce.Layout.ETH_DMAC;
import static ernic.roce.Layout.ETH_HLEN;
import static ernic.roce.Layout.ETH_P_8021Q;
import static ernic.roce.Layout.ETH_P_IP;
import static ernic.roce.Layout.ETH_P_IPV6;
import static ernic.roce.Layout.ETH_SMAC;
import static ernic.roce.Layout.ETH_TYPE;
import static ernic.roce.Layout.FLOW_LABEL_MASK;
import static ernic.roce.Layout.IPPROTO_UDP;
import static ernic.roce.Layout.IPV4_DST;
import static ernic.roce.Layout.IPV4_FRAG;
import static ernic.roce.Layout.IPV4_HLEN;
import static ernic.roce.Layout.IPV4_MF;
import static ernic.roce.Layout.IPV4_OFFSET_MASK;
import static ernic.roce.Layout.IPV4_PROTO;
import static ernic.roce.Layout.IPV4_SRC;
import static ernic.roce.Layout.IPV4_TOS;
import static ernic.roce.Layout.IPV4_TOT_LEN;
import static ernic.roce.Layout.IPV4_TTL;
import static ernic.roce.Layout.IPV4_VER_IHL;
import static ernic.roce.Layout.IPV6_DST;
import static ernic.roce.Layout.IPV6_HLEN;
import static ernic.roce.Layout.IPV6_HOP;
import static ernic.roce.Layout.IPV6_NEXT;
import static ernic.roce.Layout.IPV6_PLEN;
import static ernic.roce.Layout.IPV6_SRC;
import static ernic.roce.Layout.IPV6_VTF;
import static ernic.roce.Layout.UDP_DPORT;
import static ernic.roce.Layout.UDP_HLEN;
import static ernic.roce.Layout.UDP_LEN;
import static ernic.roce.Layout.UDP_SPORT;
import static ernic.roce.Layout.VLAN_HLEN;
import static ernic.roce.Layout.VLAN_TCI;
import static ernic.roce.Layout.VLAN_TYPE;

/**
 * Reads a received frame as RoCEv2, trusting nothing in it: Ethernet II, an optional 802.1Q tag, IPv4 (version 4,
 * no options, no fragment, total length within the frame, header checksum) or IPv6 (next header UDP, no extension
 * headers, payload length within the frame), UDP to port 4791 whose length agrees with the IP length, a BTH with
 * TVer 0 and an opcode {@link IbOpcode} knows, the extension headers that opcode has within the packet, PadCnt no
 * more than the payload, and the ICRC. It fills {@link #frame} (the outer fields, the addresses as GIDs, and the
 * {@link TransportHeader}) and gives where the payload is ({@link #payloadOffset}, {@link #payloadLength});
 * bytes after the IP datagram (Ethernet padding) are ignored.
 *
 * <p>Each refusal is its own {@link Refusal}, for the caller to count; {@link Refusal#roce} says which are RoCEv2
 * packets to drop (UDP to port 4791) and which frames are simply not RoCEv2, for the caller to pass on as Ethernet.
 * The UDP checksum is not checked: the ICRC covers the same bytes end to end.
 *
 * <p>The same reader takes the header template the ionic driver gives the device in CREATE_AH and MODIFY_QP
 * ({@link #template}). A reused parser, one per thread; it allocates nothing.
 */
public final class RoceParser {
    /** The BTH opcode of a congestion notification packet (annex A17.9.2): not a transport opcode. */
    public static final int CNP_OPCODE = 0x81;

    /** Why a frame was not taken, or {@link #NONE}; {@link #roce}: a RoCEv2 packet (UDP port 4791) refused. */
    public enum Refusal {
        /** Taken: the fields and the payload's place are filled. */
        NONE(false),
        // Not RoCEv2: for the caller to pass on as Ethernet.
        /** Shorter than the Ethernet header, or than its 802.1Q tag. */
        TRUNCATED_ETHERNET(false),
        /** The EtherType (after a tag) is neither IPv4 nor IPv6. */
        NOT_IP(false),
        /** Shorter than the IP header the EtherType announces. */
        TRUNCATED_IP(false),
        /** The IP version disagrees with the EtherType. */
        IP_VERSION(false),
        /** An IPv4 header with options (IHL other than 5). */
        IPV4_OPTIONS(false),
        /** An IPv4 fragment (more fragments, or an offset): RoCEv2 is never fragmented. */
        IPV4_FRAGMENT(false),
        /** An IPv6 extension header before the transport header. */
        IPV6_EXTENSION_HEADERS(false),
        /** Another transport than UDP. */
        NOT_UDP(false),
        /** The IPv4 total length or IPv6 payload length is beyond the frame, or too short for a UDP header. */
        IP_LENGTH(false),
        /** UDP to another port than 4791. */
        NOT_ROCE_PORT(false),
        // RoCEv2 packets refused: for the caller to drop and count.
        /** The IPv4 header checksum is wrong. */
        IPV4_CHECKSUM(true),
        /** The UDP length disagrees with the IP length. */
        UDP_LENGTH(true),
        /** Too short for a BTH and an ICRC. */
        TRUNCATED_BTH(true),
        /** The ICRC is wrong: the packet was damaged on the way. */
        ICRC(true),
        /** The BTH's transport header version is not 0. */
        TRANSPORT_VERSION(true),
        /** A congestion notification packet (opcode 0x81): the BTH is read, but no congestion control is done. */
        CNP(true),
        /** An opcode {@link IbOpcode} does not have (RD, XRC, reserved, or not taken here). */
        UNKNOWN_OPCODE(true),
        /** The extension headers of the opcode do not fit before the ICRC. */
        TRUNCATED_HEADERS(true),
        /** PadCnt is more than the payload, or payload and pad are not a multiple of 4 bytes. */
        PAD(true),
        /** Payload bytes after an opcode that carries none (READ request, ACK, atomics). */
        PAYLOAD_NOT_ALLOWED(true),
        // The header template of the driver (never from the wire)
        /** The template is not exactly Ethernet [+ 802.1Q] + IPv4 or IPv6 + UDP. */
        TEMPLATE_LENGTH(false);

        /** True when the frame was a RoCEv2 packet (UDP to port 4791) that is refused. */
        public final boolean roce;

        Refusal(boolean roce) {
            this.roce = roce;
        }
    }

    /** The frame last taken: its outer fields and its transport headers ({@link RoceFrame#bth}). */
    public final RoceFrame frame = new RoceFrame();
    /** Where the payload starts in the segment given to {@link #parse}, and its bytes (pad and ICRC not counted). */
    public long payloadOffset;
    public int payloadLength;

    private final Icrc icrc = new Icrc();
    // Where the outer reader found the IP and UDP headers.
    private long ipAt, udpAt;

    /** {@link #parse(MemorySegment, long, long)} of a segment that is the whole frame. */
    public Refusal parse(MemorySegment frameSlice) {
        return parse(frameSlice, 0, frameSlice.byteSize());
    }

    /**
     * Reads the frame of {@code length} bytes at {@code s[at]}. {@link Refusal#NONE} when it is a RoCEv2 packet
     * that passes every check: then {@link #frame}, {@link #payloadOffset} and {@link #payloadLength} are filled.
     * Else what was filled so far says nothing. (Give the same segment, a ring or a buffer, with offsets: nothing
     * here keeps it.)
     */
    public Refusal parse(MemorySegment s, long at, long length) {
        Objects.checkFromIndexSize(at, length, s.byteSize());
        RoceFrame f = frame;
        Refusal r = outer(s, at, at + length, f);
        if (r != Refusal.NONE) {
            return r;
        }
        long end = at + length;
        // The IP datagram: within the frame, with room for the UDP header.
        long ipEnd;
        if (f.ipv6) {
            ipEnd = udpAt + BE.u16(s, ipAt + IPV6_PLEN);
        } else {
            ipEnd = ipAt + BE.u16(s, ipAt + IPV4_TOT_LEN);
        }
        if (ipEnd > end || ipEnd < udpAt + UDP_HLEN) {
            return Refusal.IP_LENGTH;
        }
        udp(s, f);
        if (BE.u16(s, udpAt + UDP_DPORT) != RoceFrame.ROCE_V2_PORT) {
            return Refusal.NOT_ROCE_PORT;
        }
        if (!f.ipv6 && InternetChecksum.sum(s, ipAt, IPV4_HLEN, 0) != 0xffff) {
            return Refusal.IPV4_CHECKSUM;
        }
        if (udpAt + BE.u16(s, udpAt + UDP_LEN) != ipEnd) {
            return Refusal.UDP_LENGTH;
        }
        long bthAt = udpAt + UDP_HLEN;
        long icrcAt = ipEnd - Icrc.LENGTH;
        if (icrcAt - bthAt < TransportHeader.BTH_LEN) {
            return Refusal.TRUNCATED_BTH;
        }
        if (icrc.compute(s, ipAt, f.ipv6, icrcAt) != Icrc.get(s, icrcAt)) {
            return Refusal.ICRC;
        }
        TransportHeader bth = f.bth;
        if ((BE.u8(s, bthAt + TransportHeader.BTH_FLAGS) & 0x0f) != 0) {
            return Refusal.TRANSPORT_VERSION; // another version's headers: nothing after the BTH is known
        }
        IbOpcode op = IbOpcode.of(BE.u8(s, bthAt + TransportHeader.BTH_OPCODE));
        if (op == null) {
            bth.read(s, bthAt); // the BTH alone: an opcode not in the table has no extension headers to read
            return bth.opcode == CNP_OPCODE ? Refusal.CNP : Refusal.UNKNOWN_OPCODE;
        }
        if (icrcAt - bthAt < TransportHeader.BTH_LEN + op.headerLength) {
            return Refusal.TRUNCATED_HEADERS;
        }
        long payload = bth.read(s, bthAt);
        long payloadAndPad = icrcAt - payload;
        if (bth.padCnt > payloadAndPad || (payloadAndPad & 3) != 0) {
            return Refusal.PAD;
        }
        if (!op.payload && payloadAndPad != 0) {
            return Refusal.PAYLOAD_NOT_ALLOWED;
        }
        payloadOffset = payload;
        payloadLength = (int) (payloadAndPad - bth.padCnt);
        return Refusal.NONE;
    }

    /**
     * Reads the header template the ionic driver gives the device (CREATE_AH; MODIFY_QP with the address vector):
     * {@code length} bytes at {@code s[at]}, exactly Ethernet [+ 802.1Q] + IPv4 or IPv6 + UDP to port 4791, as the
     * driver builds it from its neighbour table with ib_ud_header_init (ionic_build_hdr). It fills the outer fields
     * of {@code into}: MACs, VLAN tag (PCP = service level), the addresses, TOS / traffic class with the ECN bits the
     * driver chose (ECT(0) for RC QPs, Not-ECT for AHs), TTL / hop limit, flow label and the UDP source port (a 0
     * there leaves {@code into}'s own, for the caller to set before: 0xc000 | a hash of the QPN, as rxe does). What
     * the template leaves as placeholders (IPv4 total length 0xffff, identification and header checksum 0, the IPv6
     * payload length and UDP length of an empty packet, UDP checksum 0) is not taken: the builder fills each packet's
     * own. The template comes from the guest, so it is checked as the wire is.
     */
    public Refusal template(MemorySegment s, long at, int length, RoceFrame into) {
        Objects.checkFromIndexSize(at, length, s.byteSize());
        Refusal r = outer(s, at, at + length, into);
        if (r != Refusal.NONE) {
            return r;
        }
        if (at + length != udpAt + UDP_HLEN) {
            return Refusal.TEMPLATE_LENGTH;
        }
        if (BE.u16(s, udpAt + UDP_DPORT) != RoceFrame.ROCE_V2_PORT) {
            return Refusal.NOT_ROCE_PORT;
        }
        // The driver always picks a source port (28272 for AHs, 0xc000 | flow hash for RC); should a template
        // leave it 0, the frame keeps the port the caller gave it, as a port 0 would not get through.
        if (BE.u16(s, udpAt + UDP_SPORT) != 0) {
            udp(s, into);
        }
        return Refusal.NONE;
    }

    /**
     * The outer headers up to the UDP header: Ethernet, the 802.1Q tag, and the IP header checked in itself (its
     * lengths against the frame are the caller's: a template has placeholders there). Fills {@code f}'s Ethernet
     * and IP fields, {@link #ipAt} and {@link #udpAt}.
     */
    private Refusal outer(MemorySegment s, long at, long end, RoceFrame f) {
        if (end - at < ETH_HLEN) {
            return Refusal.TRUNCATED_ETHERNET;
        }
        f.dmac = mac(s, at + ETH_DMAC);
        f.smac = mac(s, at + ETH_SMAC);
        int type = BE.u16(s, at + ETH_TYPE);
        ipAt = at + ETH_HLEN;
        f.vlan = RoceFrame.NO_VLAN;
        if (type == ETH_P_8021Q) {
            if (end - at < ETH_HLEN + VLAN_HLEN) {
                return Refusal.TRUNCATED_ETHERNET;
            }
            f.vlan = BE.u16(s, ipAt + VLAN_TCI);
            type = BE.u16(s, ipAt + VLAN_TYPE);
            ipAt += VLAN_HLEN;
        }
        f.ecn = -1; // the ECN bits are in tos, as received
        if (type != ETH_P_IP && type != ETH_P_IPV6) {
            return Refusal.NOT_IP;
        }
        f.ipv6 = type == ETH_P_IPV6;
        if (end - ipAt < (f.ipv6 ? IPV6_HLEN : IPV4_HLEN)) {
            return Refusal.TRUNCATED_IP;
        }
        // The version is the first nibble of both headers.
        if (BE.u8(s, ipAt) >>> 4 != (f.ipv6 ? 6 : 4)) {
            return Refusal.IP_VERSION;
        }
        if (!f.ipv6) {
            if ((BE.u8(s, ipAt + IPV4_VER_IHL) & 0x0f) != IPV4_HLEN / 4) {
                return Refusal.IPV4_OPTIONS;
            }
            if ((BE.u16(s, ipAt + IPV4_FRAG) & (IPV4_MF | IPV4_OFFSET_MASK)) != 0) {
                return Refusal.IPV4_FRAGMENT;
            }
            if (BE.u8(s, ipAt + IPV4_PROTO) != IPPROTO_UDP) {
                return Refusal.NOT_UDP;
            }
            f.tos = BE.u8(s, ipAt + IPV4_TOS);
            f.ttl = BE.u8(s, ipAt + IPV4_TTL);
            f.flowLabel = 0;
            f.srcIp = BE.u32(s, ipAt + IPV4_SRC);
            f.dstIp = BE.u32(s, ipAt + IPV4_DST);
            IpAddress.putV4Mapped(f.srcGid, f.srcIp);
            IpAddress.putV4Mapped(f.dstGid, f.dstIp);
            udpAt = ipAt + IPV4_HLEN;
        } else {
            int vtf = BE.u32(s, ipAt + IPV6_VTF);
            int next = BE.u8(s, ipAt + IPV6_NEXT);
            if (next != IPPROTO_UDP) {
                return Layout.ipv6ExtensionHeader(next) ? Refusal.IPV6_EXTENSION_HEADERS : Refusal.NOT_UDP;
            }
            f.tos = vtf >>> 20 & 0xff;
            f.flowLabel = vtf & FLOW_LABEL_MASK;
            f.ttl = BE.u8(s, ipAt + IPV6_HOP);
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, ipAt + IPV6_SRC, f.srcGid, 0, 16);
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, ipAt + IPV6_DST, f.dstGid, 0, 16);
            f.srcIp = f.dstIp = 0;
            udpAt = ipAt + IPV6_HLEN;
        }
        return Refusal.NONE;
    }

    /** The UDP source port into {@code f} (the caller has checked that the UDP header is within the frame). */
    private void udp(MemorySegment s, RoceFrame f) {
        f.srcPort = BE.u16(s, udpAt + UDP_SPORT);
    }

    private static long mac(MemorySegment s, long at) {
        return (long) BE.u16(s, at) << 32 | Integer.toUnsignedLong(BE.u32(s, at + 2));
    }
}
