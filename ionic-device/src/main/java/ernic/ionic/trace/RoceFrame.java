package ernic.ionic.trace;

import ernic.common.InternetChecksum;
import ernic.ionic.roce.IbOpcode;

import java.util.zip.CRC32;

import static ernic.ionic.roce.IbOpcode.Header.*;

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
    public static final int ETH_HLEN = 14, IPV4_HLEN = 20, UDP_HLEN = 8, BTH_LEN = 12, ICRC_LEN = 4;
    /** The UDP destination port of RoCEv2 (IANA). */
    public static final int ROCE_V2_PORT = 4791;
    public static final int ETH_P_IP = 0x0800;
    /** The default P_Key. */
    public static final int DEFAULT_PKEY = 0xffff;

    // AETH syndromes (vol. 1, 9.7.5.1): ACK with no credit count, RNR NAK, NAK codes.
    public static final int AETH_ACK = 0x1f, AETH_RNR_NAK = 0x20, AETH_NAK_INVALID_REQUEST = 0x61,
            AETH_NAK_REMOTE_ACCESS = 0x62, AETH_NAK_REMOTE_OPERATIONAL = 0x63;

    // Ethernet and IPv4
    public long dmac, smac;
    public int srcIp, dstIp;
    public int tos, ttl = 64;
    public int srcPort;
    // BTH
    /** The BTH opcode byte: an {@link IbOpcode#code}; its extension headers follow the BTH. */
    public int opcode;
    public boolean solicited, ackReq;
    public int pkey = DEFAULT_PKEY;
    public int destQp, psn;
    // extension headers (those the opcode has)
    public int qkey, srcQp;          // DETH
    public long va;                  // RETH, AtomicETH
    public int rkey;                 // RETH, AtomicETH
    public int dmaLength;            // RETH
    public long swapAdd, compare;    // AtomicETH
    public int syndrome, msn;        // AETH
    public long origData;            // AtomicAckETH
    public int imm;                  // ImmDt (big-endian as the WQE carries it)
    public int invRkey;              // IETH

    private final CRC32 crc = new CRC32();
    private final byte[] masked = new byte[IPV4_HLEN + UDP_HLEN + BTH_LEN];
    private static final byte[] MASKED_LRH = {-1, -1, -1, -1, -1, -1, -1, -1};

    /** Bytes after the BTH and before the payload for {@code opcode} (its headers in {@link IbOpcode}). */
    public static int extensionLength(int opcode) {
        return IbOpcode.headerLength(opcode);
    }

    /** Bytes from the Ethernet header to the payload for the current opcode. */
    public int headerLength() {
        return ETH_HLEN + IPV4_HLEN + UDP_HLEN + BTH_LEN + extensionLength(opcode);
    }

    /** The pad that brings {@code payload} bytes to a multiple of 4 (BTH PadCnt). */
    public static int pad(int payload) {
        return -payload & 3;
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
        b[p++] = (byte) opcode;
        b[p++] = (byte) ((solicited ? 0x80 : 0) | pad(payload) << 4); // SE, M 0, PadCnt, TVer 0
        p = be16(b, p, pkey);
        p = be32(b, p, destQp & 0xff_ffff); // FECN, BECN and the reserved bits 0
        p = be32(b, p, (ackReq ? 0x8000_0000 : 0) | psn & 0xff_ffff);
        int x = IbOpcode.headers(opcode);
        if ((x & DETH.bit()) != 0) {
            p = be32(b, p, qkey);
            p = be32(b, p, srcQp & 0xff_ffff);
        }
        if ((x & RETH.bit()) != 0) {
            p = be64(b, p, va);
            p = be32(b, p, rkey);
            p = be32(b, p, dmaLength);
        }
        if ((x & ATOMIC_ETH.bit()) != 0) {
            p = be64(b, p, va);
            p = be32(b, p, rkey);
            p = be64(b, p, swapAdd);
            p = be64(b, p, compare);
        }
        if ((x & AETH.bit()) != 0) {
            p = be32(b, p, syndrome << 24 | msn & 0xff_ffff);
        }
        if ((x & ATOMIC_ACK_ETH.bit()) != 0) {
            p = be64(b, p, origData);
        }
        if ((x & IMM_DT.bit()) != 0) {
            p = be32(b, p, imm);
        }
        if ((x & IETH.bit()) != 0) {
            p = be32(b, p, invRkey);
        }
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

    static int be16(byte[] b, int p, int v) {
        b[p] = (byte) (v >>> 8);
        b[p + 1] = (byte) v;
        return p + 2;
    }

    static int be32(byte[] b, int p, int v) {
        b[p] = (byte) (v >>> 24);
        b[p + 1] = (byte) (v >>> 16);
        b[p + 2] = (byte) (v >>> 8);
        b[p + 3] = (byte) v;
        return p + 4;
    }

    static int be64(byte[] b, int p, long v) {
        be32(b, p, (int) (v >>> 32));
        return be32(b, p + 4, (int) v);
    }
}
