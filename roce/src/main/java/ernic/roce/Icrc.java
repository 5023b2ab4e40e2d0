package ernic.roce;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32;

import static ernic.common.Endian.LE;

/**
 * The invariant CRC of a RoCEv2 packet (IBTA vol. 1 annex A17.3.3, as Soft-RoCE's rxe_icrc.c computes it): CRC-32
 * (Ethernet's polynomial) over 8 bytes of ones that stand for the LRH RoCEv2 does not have, then the IP header with
 * the fields a router may change set to ones (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label, hop
 * limit), the UDP header with its checksum set to ones, the BTH with its FECN/BECN/reserved byte set to ones, and
 * the rest of the packet (extension headers, payload, pad) as it is. The result goes on the wire least significant
 * byte first.
 *
 * <p>A reused calculator, one per user on one thread: the bytes go through a scratch array of its own (a copy is
 * far cheaper than the CRC, and {@link CRC32} on an array is the JDK's intrinsic), so it allocates nothing and takes
 * any segment, heap or native, of any size.
 */
public final class Icrc {
    /** Bytes of the ICRC at the end of a packet. */
    public static final int LENGTH = 4;
    private static final int CHUNK = 2048;
    private static final byte[] MASKED_LRH = {-1, -1, -1, -1, -1, -1, -1, -1};

    private final CRC32 crc = new CRC32();
    private final byte[] scratch = new byte[CHUNK];

    /**
     * The ICRC of the packet whose IP header is at {@code s[ip]} ({@code ipv6}: a 40-byte IPv6 header, else a
     * 20-byte IPv4 header), followed by the UDP header and the BTH, up to {@code end} (exclusive: where the ICRC
     * goes). The caller has checked that the range holds the IP, UDP and BTH headers.
     */
    public int compute(MemorySegment s, long ip, boolean ipv6, long end) {
        int ipLength = ipv6 ? Layout.IPV6_HLEN : Layout.IPV4_HLEN;
        int masked = ipLength + Layout.UDP_HLEN + TransportHeader.BTH_LEN;
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, ip, scratch, 0, masked);
        if (ipv6) {
            scratch[0] |= 0x0f;                             // version stays; traffic class, high nibble
            scratch[1] = scratch[2] = scratch[3] = (byte) 0xff; // traffic class, low nibble; flow label
            scratch[7] = (byte) 0xff;                       // hop limit
        } else {
            scratch[1] = (byte) 0xff;                       // TOS (DSCP, ECN)
            scratch[8] = (byte) 0xff;                       // TTL
            scratch[10] = scratch[11] = (byte) 0xff;        // header checksum
        }
        scratch[ipLength + 6] = scratch[ipLength + 7] = (byte) 0xff; // UDP checksum
        scratch[ipLength + Layout.UDP_HLEN + 4] = (byte) 0xff;       // BTH: FECN, BECN, resv6
        crc.reset();
        crc.update(MASKED_LRH, 0, MASKED_LRH.length);
        crc.update(scratch, 0, masked);
        for (long p = ip + masked; p < end; ) {
            int n = (int) Math.min(CHUNK, end - p);
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, p, scratch, 0, n);
            crc.update(scratch, 0, n);
            p += n;
        }
        return (int) crc.getValue();
    }

    /** Writes {@code icrc} at {@code s[at]}, least significant byte first. */
    public static void put(MemorySegment s, long at, int icrc) {
        LE.put32(s, at, icrc);
    }

    /** The ICRC at {@code s[at]}, as {@link #put} wrote it. */
    public static int get(MemorySegment s, long at) {
        return LE.u32(s, at);
    }
}
