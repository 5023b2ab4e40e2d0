package ernic.roce;

/**
 * The offsets of the outer headers of a RoCEv2 frame, each written once: Ethernet II (IEEE 802.3), the 802.1Q tag,
 * IPv4 (RFC 791), IPv6 (RFC 8200) and UDP (RFC 768). Offsets are from the start of their own header; every field is
 * big-endian.
 */
final class Layout {
    private Layout() {}

    static final int ETH_HLEN = 14, ETH_DMAC = 0, ETH_SMAC = 6, ETH_TYPE = 12;
    /** The 802.1Q tag between the source MAC and the EtherType: TPID 0x8100, then the TCI (PCP, DEI, VID). */
    static final int VLAN_HLEN = 4, VLAN_TCI = 0, VLAN_TYPE = 2;
    static final int ETH_P_IP = 0x0800, ETH_P_IPV6 = 0x86dd, ETH_P_8021Q = 0x8100;

    static final int IPV4_HLEN = 20, IPV4_VER_IHL = 0, IPV4_TOS = 1, IPV4_TOT_LEN = 2, IPV4_ID = 4, IPV4_FRAG = 6,
            IPV4_TTL = 8, IPV4_PROTO = 9, IPV4_CSUM = 10, IPV4_SRC = 12, IPV4_DST = 16;
    /** IPv4 flags and fragment offset: DF, MF, and the 13-bit offset. */
    static final int IPV4_DF = 0x4000, IPV4_MF = 0x2000, IPV4_OFFSET_MASK = 0x1fff;

    /** IPv6: version (4 bits), traffic class (8), flow label (20) in the first 32-bit word. */
    static final int IPV6_HLEN = 40, IPV6_VTF = 0, IPV6_PLEN = 4, IPV6_NEXT = 6, IPV6_HOP = 7, IPV6_SRC = 8,
            IPV6_DST = 24;
    static final int FLOW_LABEL_MASK = 0xf_ffff;

    static final int UDP_HLEN = 8, UDP_SPORT = 0, UDP_DPORT = 2, UDP_LEN = 4, UDP_CSUM = 6;
    static final int IPPROTO_UDP = 17;

    /** True for the IPv6 next-header values that are extension headers (RFC 8200 4, RFC 7045): none is taken. */
    static boolean ipv6ExtensionHeader(int next) {
        return switch (next) {
            case 0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254 -> true;
            default -> false;
        };
    }
}
