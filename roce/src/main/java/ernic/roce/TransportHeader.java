package ernic.roce;

import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.BE;
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
 * a frame ({@link RoceFrame}) carries one, and the parser ({@link RoceParser}) {@link #read}s into one. Fields an
 * opcode does not have are ignored when it is written and left as they were when it is read.
 */
public final class TransportHeader {
    public static final int BTH_LEN = 12;
    /** The default P_Key. */
    public static final int DEFAULT_PKEY = 0xffff;

    // AETH syndromes (vol. 1, 9.7.5.1): ACK with no credit count, RNR NAK, NAK codes.
    public static final int AETH_ACK = 0x1f, AETH_RNR_NAK = 0x20, AETH_NAK_PSN_SEQUENCE = 0x60,
            AETH_NAK_INVALID_REQUEST = 0x61, AETH_NAK_REMOTE_ACCESS = 0x62, AETH_NAK_REMOTE_OPERATIONAL = 0x63;

    // BTH byte offsets (vol. 1, 9.2)
    static final int BTH_OPCODE = 0, BTH_FLAGS = 1, BTH_PKEY = 2, BTH_FECN_BECN = 4, BTH_DEST_QP = 4, BTH_PSN = 8;

    // BTH
    /** The BTH opcode byte: an {@link IbOpcode#code}; its extension headers follow the BTH. */
    public int opcode;
    public boolean solicited, migReq, ackReq;
    /** Forward and backward explicit congestion notification (written as set; the ICRC does not cover them). */
    public boolean fecn, becn;
    /** As read: the pad count (written from the payload length) and the transport header version (written 0). */
    public int padCnt, tver;
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

    /** Takes every field of {@code o} (an engine's header, written into a frame's). */
    public void set(TransportHeader o) {
        opcode = o.opcode;
        solicited = o.solicited;
        migReq = o.migReq;
        ackReq = o.ackReq;
        fecn = o.fecn;
        becn = o.becn;
        padCnt = o.padCnt;
        tver = o.tver;
        pkey = o.pkey;
        destQp = o.destQp;
        psn = o.psn;
        qkey = o.qkey;
        srcQp = o.srcQp;
        va = o.va;
        rkey = o.rkey;
        dmaLength = o.dmaLength;
        swapAdd = o.swapAdd;
        compare = o.compare;
        syndrome = o.syndrome;
        msn = o.msn;
        origData = o.origData;
        imm = o.imm;
        invRkey = o.invRkey;
    }

    /** Bytes of the BTH and the extension headers of the current opcode. */
    public int length() {
        return BTH_LEN + IbOpcode.headerLength(opcode);
    }

    /** The pad that brings {@code payload} bytes to a multiple of 4 (BTH PadCnt). */
    public static int pad(int payload) {
        return -payload & 3;
    }

    /**
     * Writes the BTH (TVer 0, the reserved bits 0, PadCnt for {@code payload} bytes) and the extension headers at
     * {@code s[p]}; returns the position after them.
     */
    public long write(MemorySegment s, long p, int payload) {
        BE.put8(s, p + BTH_OPCODE, opcode);
        BE.put8(s, p + BTH_FLAGS, (solicited ? 0x80 : 0) | (migReq ? 0x40 : 0) | pad(payload) << 4);
        BE.put16(s, p + BTH_PKEY, pkey);
        BE.put32(s, p + BTH_DEST_QP, (fecn ? 0x8000_0000 : 0) | (becn ? 0x4000_0000 : 0) | destQp & 0xff_ffff);
        BE.put32(s, p + BTH_PSN, (ackReq ? 0x8000_0000 : 0) | psn & 0xff_ffff);
        p += BTH_LEN;
        int x = IbOpcode.headers(opcode);
        if ((x & DETH.bit()) != 0) {
            BE.put32(s, p, qkey);
            BE.put32(s, p + 4, srcQp & 0xff_ffff);
            p += DETH.length;
        }
        if ((x & RETH.bit()) != 0) {
            BE.put64(s, p, va);
            BE.put32(s, p + 8, rkey);
            BE.put32(s, p + 12, dmaLength);
            p += RETH.length;
        }
        if ((x & ATOMIC_ETH.bit()) != 0) {
            BE.put64(s, p, va);
            BE.put32(s, p + 8, rkey);
            BE.put64(s, p + 12, swapAdd);
            BE.put64(s, p + 20, compare);
            p += ATOMIC_ETH.length;
        }
        if ((x & AETH.bit()) != 0) {
            BE.put32(s, p, syndrome << 24 | msn & 0xff_ffff);
            p += AETH.length;
        }
        if ((x & ATOMIC_ACK_ETH.bit()) != 0) {
            BE.put64(s, p, origData);
            p += ATOMIC_ACK_ETH.length;
        }
        if ((x & IMM_DT.bit()) != 0) {
            BE.put32(s, p, imm);
            p += IMM_DT.length;
        }
        if ((x & IETH.bit()) != 0) {
            BE.put32(s, p, invRkey);
            p += IETH.length;
        }
        return p;
    }

    /**
     * Reads the BTH at {@code s[p]} and the extension headers its opcode has; returns the position after them. The
     * caller has checked what the wire cannot be trusted with ({@link RoceParser} does): that the opcode is one
     * {@link IbOpcode} knows and that its headers are within the packet. An opcode the table lacks reads as a
     * BTH with no extension headers.
     */
    public long read(MemorySegment s, long p) {
        opcode = BE.u8(s, p + BTH_OPCODE);
        int flags = BE.u8(s, p + BTH_FLAGS);
        solicited = (flags & 0x80) != 0;
        migReq = (flags & 0x40) != 0;
        padCnt = flags >>> 4 & 3;
        tver = flags & 0x0f;
        pkey = BE.u16(s, p + BTH_PKEY);
        int w = BE.u32(s, p + BTH_DEST_QP);
        fecn = w < 0;
        becn = (w & 0x4000_0000) != 0;
        destQp = w & 0xff_ffff;
        w = BE.u32(s, p + BTH_PSN);
        ackReq = w < 0;
        psn = w & 0xff_ffff;
        p += BTH_LEN;
        int x = IbOpcode.headers(opcode);
        if ((x & DETH.bit()) != 0) {
            qkey = BE.u32(s, p);
            srcQp = BE.u32(s, p + 4) & 0xff_ffff;
            p += DETH.length;
        }
        if ((x & RETH.bit()) != 0) {
            va = BE.u64(s, p);
            rkey = BE.u32(s, p + 8);
            dmaLength = BE.u32(s, p + 12);
            p += RETH.length;
        }
        if ((x & ATOMIC_ETH.bit()) != 0) {
            va = BE.u64(s, p);
            rkey = BE.u32(s, p + 8);
            swapAdd = BE.u64(s, p + 12);
            compare = BE.u64(s, p + 20);
            p += ATOMIC_ETH.length;
        }
        if ((x & AETH.bit()) != 0) {
            int a = BE.u32(s, p);
            syndrome = a >>> 24;
            msn = a & 0xff_ffff;
            p += AETH.length;
        }
        if ((x & ATOMIC_ACK_ETH.bit()) != 0) {
            origData = BE.u64(s, p);
            p += ATOMIC_ACK_ETH.length;
        }
        if ((x & IMM_DT.bit()) != 0) {
            imm = BE.u32(s, p);
            p += IMM_DT.length;
        }
        if ((x & IETH.bit()) != 0) {
            invRkey = BE.u32(s, p);
            p += IETH.length;
        }
        return p;
    }
}
