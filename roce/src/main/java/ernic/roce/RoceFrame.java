package ernic.roce;

import ernic.common.InternetChecksum;

import java.util.zip.CRC32;

import static ernic.roce.TransportHeader.be16;
import static ernic.roce.TransportHeader.be32;

/**
 * One synthetic RoCEv2 frame as Wireshark's RoCE dissector reads it: Ethernet II, IPv4 (no options), UDP to
 * port 4791, the 12-byte BTH, the extension headers the IBTA opcode calls for (DETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH, in that order), the payload, the pad to a multiple of 4 and the 4-byte ICRC.
 * A reused, mutable builder (no allocation per frame): set the fields, then {@link #headers} writes
 * everything before the payload and {@link #trailer} the pad and the ICRC after it. Every multi-byte field is
 * big-endian (network order) except the ICRC, which goes on the wire least significant byte first, as an
 * Ethernet FCS does.
 */
public final class RoceFrame {
    public static final int ETH_HLEN = 14, IPV4_HLEN = 20, UDP_HLEN = 8, BTH_LEN = TransportHeader.BTH_LEN, ICRC_LEN = 4;
    /** The UDP destination port of RoCEv2 (IANA). */
    public static final int ROCE_V2_PORT = 4791;
    public static final int ETH_P_IP = 0x0800;

    // Ethernet and IPv4
    public long dmac, smac;
    public int srcIp, dstIp;
    public int tos, ttl = 64;
    public int srcPort;
    /** The transport headers: BTH and the extension headers its opcode calls for. */
    public final TransportHeader bth = new TransportHeader();

    private final CRC32 crc = new CRC32();
    private final byte[] masked = new byte[IPV4_HLEN + UDP_HLEN + BTH_LEN];
    private static final byte[] MASKED_LRH = {-1, -1, -1, -1, -1, -1, -1, -1};

    /** Bytes after the BTH and before the payload for {@code opcode} (its headers in {@link IbOpcode}). */
    public static int extensionLength(int opcode) {
        return IbOpcode.headerLength(opcode);
    }

    /** Bytes from the Ethernet header to the payload for the current opcode. */
    public int headerLength() {
        return ETH_HLEN + IPV4_HLEN + UDP_HLEN + bth.length();
    }

    /** The pad that brings {@code payload} bytes to a multiple of 4 (BTH PadCnt). */
    public static int pad(int payload) {
        return TransportHeader.pad(payload);
    }

    /** The whole frame's length with {@code payload} bytes: headers, payload, pad, ICRC. */
    public int frameLength(int payload) {
        return headerLength() + payload + pad(payload) + ICRC_LEN;
    }

    /**
     * Writes the headers of a frame that carries {@code payload} bytes at {@code b[at]}; the IP and UDP lengths
     * count the whole frame (pad and ICRC included). Returns the header length; the payload goes right after.
     */
    public int headers(byte[] b, int at, int payload) {
        int p = at;
        p = mac(b, p, dmac);
        p = mac(b, p, smac);
        p = be16(b, p, ETH_P_IP);
        int ip = p;
        int ipLength = frameLength(payload) - ETH_HLEN;
        b[p++] = 0x45;
        b[p++] = (byte) tos;
        p = be16(b, p, ipLength);
        p = be16(b, p, 0);          // identification
        p = be16(b, p, 0x4000);     // don't fragment
        b[p++] = (byte) ttl;
        b[p++] = 17;                // UDP
        p = be16(b, p, 0);          // checksum, below
        p = be32(b, p, srcIp);
        p = be32(b, p, dstIp);
        be16(b, ip + 10, InternetChecksum.of(b, ip, IPV4_HLEN, 0));
        p = be16(b, p, srcPort);
        p = be16(b, p, ROCE_V2_PORT);
        p = be16(b, p, ipLength - IPV4_HLEN);
        p = be16(b, p, 0);          // no UDP checksum (RoCEv2 over IPv4 may leave it 0; the ICRC covers the packet)
        p = bth.write(b, p, payload);
        return p - at;
    }

    /**
     * After the headers at {@code b[at]} and {@code payload} payload bytes: the pad (zeros) and the ICRC.
     * Returns the bytes written (pad + 4).
     */
    public int trailer(byte[] b, int at, int payload) {
        int end = at + headerLength() + payload;
        int pad = pad(payload);
        for (int i = 0; i < pad; i++) {
            b[end + i] = 0;
        }
        int icrc = icrc(b, at, end + pad - at);
        int p = end + pad;
        b[p] = (byte) icrc;
        b[p + 1] = (byte) (icrc >>> 8);
        b[p + 2] = (byte) (icrc >>> 16);
        b[p + 3] = (byte) (icrc >>> 24);
        return pad + ICRC_LEN;
    }

    /**
     * The invariant CRC of the frame at {@code b[at]} ({@code length} bytes up to the ICRC): CRC-32 over 8
     * bytes of ones (the masked LRH of RoCEv2), the IPv4 header with TOS, TTL and checksum set to ones, the
     * UDP header with its checksum set to ones, the BTH with FECN, BECN and its reserved byte set to ones,
     * and the rest of the packet as it is (IBTA annex A17.3.3, as Soft-RoCE's rxe_icrc.c computes it).
     */
    public int icrc(byte[] b, int at, int length) {
        int ip = at + ETH_HLEN;
        System.arraycopy(b, ip, masked, 0, masked.length);
        masked[1] = (byte) 0xff;                         // TOS
        masked[8] = (byte) 0xff;                         // TTL
        masked[10] = masked[11] = (byte) 0xff;           // header checksum
        masked[IPV4_HLEN + 6] = masked[IPV4_HLEN + 7] = (byte) 0xff; // UDP checksum
        masked[IPV4_HLEN + UDP_HLEN + 4] = (byte) 0xff;  // FECN, BECN, resv6
        crc.reset();
        crc.update(MASKED_LRH, 0, MASKED_LRH.length);
        crc.update(masked, 0, masked.length);
        int rest = ip + masked.length;
        crc.update(b, rest, at + length - rest);
        return (int) crc.getValue();
    }

    private static int mac(byte[] b, int p, long mac) {
        for (int i = 5; i >= 0; i--) {
            b[p++] = (byte) (mac >>> (8 * i));
        }
        return p;
    }
}
