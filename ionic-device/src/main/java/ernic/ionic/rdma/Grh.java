package ernic.ionic.rdma;

import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;
import static ernic.common.Endian.LE;

/**
 * The 40-byte GRH area at the head of a UD receive buffer, as the guest's provider reads it: an IPv6
 * header for a RoCEv2 IPv6 peer, or for IPv4 the 20-byte IPv4 header in its second half (what ib_core's
 * rdma_read_gid_hdr expects). Built from the sender's address handle and the payload length.
 */
final class Grh {
    static final int SIZE = 40;
    /** Where the IPv4 header starts inside the area. */
    static final int IPV4 = 20;
    // IPv4 header fields (RFC 791), relative to IPV4.
    static final int V4_VERSION_IHL = 0, V4_TOS = 1, V4_TOTAL_LENGTH = 2, V4_FLAGS_FRAGMENT = 6, V4_TTL = 8,
            V4_PROTOCOL = 9, V4_CHECKSUM = 10, V4_SOURCE = 12, V4_DESTINATION = 16, V4_HEADER = 20;
    // IPv6 header fields (RFC 8200).
    static final int V6_VERSION_CLASS_FLOW = 0, V6_PAYLOAD_LENGTH = 4, V6_NEXT_HEADER = 6, V6_HOP_LIMIT = 7,
            V6_SOURCE = 8, V6_DESTINATION = 24;
    /** UDP, BTH, DETH and ICRC around a datagram's payload; UDP is the next header. */
    static final int UDP = 8, BTH = 12, DETH = 8, ICRC = 4, PROTO_UDP = 17, DONT_FRAGMENT = 0x4000;

    private Grh() {
    }

    /** Fills {@code grh} (SIZE bytes) for a datagram of {@code len} payload bytes sent under {@code ah}. */
    static void fill(MemorySegment grh, AddressHandle ah, long len) {
        if (ah == null) {
            grh.fill((byte) 0);
            return;
        }
        fill(grh, ah.ipv4, ah.sgid, ah.dgid, ah.trafficClass, ah.hopLimit, len);
    }

    /**
     * Fills {@code grh} for a datagram of {@code len} payload bytes from {@code sgid} to {@code dgid} (an
     * in-process target's reply, which has no address handle of its own).
     */
    static void fill(MemorySegment grh, boolean ipv4, byte[] sgid, byte[] dgid, int trafficClass, int hopLimit,
                     long len) {
        grh.fill((byte) 0);
        long roce = UDP + BTH + DETH + len + ICRC;
        if (ipv4) {
            LE.put8(grh, IPV4 + V4_VERSION_IHL, 0x45);
            LE.put8(grh, IPV4 + V4_TOS, trafficClass);
            BE.put16(grh, IPV4 + V4_TOTAL_LENGTH, (int) Math.min(0xffff, V4_HEADER + roce));
            BE.put16(grh, IPV4 + V4_FLAGS_FRAGMENT, DONT_FRAGMENT);
            LE.put8(grh, IPV4 + V4_TTL, hopLimit);
            LE.put8(grh, IPV4 + V4_PROTOCOL, PROTO_UDP);
            MemorySegment.copy(MemorySegment.ofArray(sgid), 12, grh, IPV4 + V4_SOURCE, 4);
            MemorySegment.copy(MemorySegment.ofArray(dgid), 12, grh, IPV4 + V4_DESTINATION, 4);
            BE.put16(grh, IPV4 + V4_CHECKSUM, checksum(grh, IPV4, V4_HEADER));
        } else {
            BE.put32(grh, V6_VERSION_CLASS_FLOW, 6 << 28 | (trafficClass & 0xff) << 20);
            BE.put16(grh, V6_PAYLOAD_LENGTH, (int) Math.min(0xffff, roce));
            LE.put8(grh, V6_NEXT_HEADER, PROTO_UDP);
            LE.put8(grh, V6_HOP_LIMIT, hopLimit);
            MemorySegment.copy(MemorySegment.ofArray(sgid), 0, grh, V6_SOURCE, 16);
            MemorySegment.copy(MemorySegment.ofArray(dgid), 0, grh, V6_DESTINATION, 16);
        }
    }

    /** The Internet checksum of {@code len} bytes at {@code at} (checksum field zero). */
    private static int checksum(MemorySegment s, int at, int len) {
        int sum = 0;
        for (int i = 0; i < len; i += 2) {
            sum += BE.u16(s, at + i);
        }
        sum = (sum & 0xffff) + (sum >>> 16);
        sum = (sum & 0xffff) + (sum >>> 16);
        return ~sum & 0xffff;
    }
}
