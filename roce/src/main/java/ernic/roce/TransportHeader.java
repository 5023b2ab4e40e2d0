package ernic.roce;

import static ernic.roce.IbOpcode.Header.AETH;
import static ernic.roce.IbOpcode.Header.ATOMIC_ACK_ETH;
import static ernic.roce.IbOpcode.Header.ATOMIC_ETH;
import static ernic.roce.IbOpcode.Header.DETH;
import static ernic.roce.IbOpcode.Header.IETH;
import static ernic.roce.IbOpcode.Header.IMM_DT;
import static ernic.roce.IbOpcode.Header.RETH;

/**
 * The InfiniBand transport headers of one packet: the 12-byte BTH and the extension headers its opcode calls for
 * ({@link IbOpcode}: DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, in that order), every multi-byte
 * field big-endian (IBTA vol. 1, 9.2-9.5). A reused, mutable value: the RC transport keeps its packets in these,
 * and a frame ({@link RoceFrame}) carries one. Fields an opcode does not have are ignored when it is written.
 */
public final class TransportHeader {
    public static final int BTH_LEN = 12;
    /** The default P_Key. */
    public static final int DEFAULT_PKEY = 0xffff;

    // AETH syndromes (vol. 1, 9.7.5.1): ACK with no credit count, RNR NAK, NAK codes.
    public static final int AETH_ACK = 0x1f, AETH_RNR_NAK = 0x20, AETH_NAK_PSN_SEQUENCE = 0x60,
            AETH_NAK_INVALID_REQUEST = 0x61, AETH_NAK_REMOTE_ACCESS = 0x62, AETH_NAK_REMOTE_OPERATIONAL = 0x63;

    // BTH
    /** The BTH opcode byte: an {@link IbOpcode#code}; its extension headers follow the BTH. */
    public int opcode;
    public boolean solicited, ackReq;
    public int pkey = DEFAULT_PKEY;
    /** 24 bits each. */
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

    /** Bytes of the BTH and the extension headers of the current opcode. */
    public int length() {
        return BTH_LEN + IbOpcode.headerLength(opcode);
    }

    /** The pad that brings {@code payload} bytes to a multiple of 4 (BTH PadCnt). */
    public static int pad(int payload) {
        return -payload & 3;
    }

    /**
     * Writes the BTH (FECN, BECN, MigReq and the reserved bits 0, TVer 0, PadCnt for {@code payload} bytes) and the
     * extension headers at {@code b[p]}; returns the position after them.
     */
    public int write(byte[] b, int p, int payload) {
        b[p++] = (byte) opcode;
        b[p++] = (byte) ((solicited ? 0x80 : 0) | pad(payload) << 4);
        p = be16(b, p, pkey);
        p = be32(b, p, destQp & 0xff_ffff);
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
