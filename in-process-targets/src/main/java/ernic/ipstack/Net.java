package ernic.ipstack;

/**
 * Offsets and constants of the frames the store speaks (Ethernet II, ARP for IPv4, IPv4, ICMP, TCP) and
 * their helpers (the checksum is {@link ernic.common.InternetChecksum}). Offsets are from the start of the Ethernet frame; IPv4 options shift the L4 start.
 */
final class Net {
    private Net() {
    }

    static final int ETH_DST = 0, ETH_SRC = 6, ETH_TYPE = 12, ETH_HLEN = 14;
    static final int ETHERTYPE_IPV4 = 0x0800, ETHERTYPE_ARP = 0x0806;

    // ARP (RFC 826) for Ethernet/IPv4
    static final int ARP_HTYPE = 14, ARP_PTYPE = 16, ARP_HLEN = 18, ARP_PLEN = 19, ARP_OP = 20;
    static final int ARP_SHA = 22, ARP_SPA = 28, ARP_THA = 32, ARP_TPA = 38, ARP_END = 42;
    static final int ARP_REQUEST = 1, ARP_REPLY = 2;

    // IPv4 (RFC 791)
    static final int IP = ETH_HLEN;
    static final int IP_VIHL = IP, IP_TOTLEN = IP + 2, IP_ID = IP + 4, IP_FRAG = IP + 6, IP_TTL = IP + 8;
    static final int IP_PROTO = IP + 9, IP_CSUM = IP + 10, IP_SRC = IP + 12, IP_DST = IP + 16, IP_HLEN = 20;
    static final int IP_MF = 0x2000, IP_OFFSET_MASK = 0x1fff;
    static final int PROTO_ICMP = 1, PROTO_TCP = 6;

    // ICMP (RFC 792), from the L4 start
    static final int ICMP_TYPE = 0, ICMP_CSUM = 2, ICMP_HLEN = 8, ICMP_ECHO_REPLY = 0, ICMP_ECHO_REQUEST = 8;

    // TCP (RFC 9293), from the L4 start
    static final int TCP_SPORT = 0, TCP_DPORT = 2, TCP_SEQ = 4, TCP_ACK = 8, TCP_OFF = 12, TCP_FLAGS = 13;
    static final int TCP_WINDOW = 14, TCP_CSUM = 16, TCP_URG = 18, TCP_HLEN = 20;
    static final int FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10, URG = 0x20;
    static final int OPT_END = 0, OPT_NOP = 1, OPT_MSS = 2, OPT_WSCALE = 3;

    static int u8(byte[] b, int at) {
        return b[at] & 0xff;
    }

    static int u16(byte[] b, int at) {
        return (b[at] & 0xff) << 8 | b[at + 1] & 0xff;
    }

    static int u32(byte[] b, int at) {
        return u16(b, at) << 16 | u16(b, at + 2);
    }

    static void put16(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 8);
        b[at + 1] = (byte) v;
    }

    static void put32(byte[] b, int at, int v) {
        put16(b, at, v >>> 16);
        put16(b, at + 2, v);
    }

    /** The ones'-complement sum of {@code len} bytes, folded to 16 bits, added to {@code sum}. */
    /** An endpoint's MAC: 02:53 and the four bytes of its IPv4 address (locally administered, unicast). */
    static byte[] endpointMac(int ip) {
        return new byte[] {0x02, 0x53, (byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip};
    }

    /** Whether sequence number a comes before b (RFC 1982 arithmetic on 32 bits). */
    static boolean before(int a, int b) {
        return a - b < 0;
    }
}
