package ernic.model;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.common.Endian.LE;

/**
 * One Ethernet TX or RX queue as ionic.ko drives it (ionic_txrx.c, ionic_lif.c): a descriptor ring, a completion
 * ring and an SG ring in guest memory, created by Q_INIT on the admin queue and started by Q_CONTROL ENABLE;
 * the doorbell is {@code hw_index << 24 | head} at the queue's hw_type in the LIF's kernel doorbell page.
 * Layouts are ionic_if.h's (struct ionic_txq_desc, ionic_txq_sg_elem, ionic_txq_comp, ionic_rxq_desc,
 * ionic_rxq_sg_elem, ionic_rxq_comp). Completions are read by their color (byte 15, bit 7), which starts at 1
 * and flips at each wrap.
 */
public final class EthQueue {
    public static final int DESC_SIZE = 16, COMP_SIZE = 16, SG_ELEM_SIZE = 16;
    /** struct ionic_txq_desc: cmd le64 @0 (flags 3..0, opcode 7..4, nsge 11..8, addr 63..12), len le16 @8. */
    public static final int TX_CMD = 0, TX_LEN = 8, TX_OPCODE_CSUM_NONE = 0;
    /** struct ionic_rxq_desc: opcode @0 (0 SIMPLE, 1 SG), len le16 @6, addr le64 @8. */
    public static final int RX_OPCODE = 0, RX_LEN = 6, RX_ADDR = 8, RX_OPCODE_SIMPLE = 0, RX_OPCODE_SG = 1;
    /** struct ionic_{tx,rx}q_sg_elem: addr le64 @0, len le16 @8. */
    public static final int SG_ADDR = 0, SG_LEN = 8;
    /** The TX SG descriptor of TXQ version 1 (16 elements) and the RX one (8 elements). */
    public static final int TX_SG_DESC_SIZE = 256, RX_SG_DESC_SIZE = 128;

    private final IonicDriverModel drv;
    public final int type, index, depthLog2, intr;
    public final long ring, cqRing, sgRing;
    private final int sgDescSize, mask;
    private int hwIndex, hwType, head, cqTail;
    private boolean color = true;

    private EthQueue(IonicDriverModel drv, int type, int index, int depthLog2, int intr, int sgDescSize) {
        this.drv = drv;
        this.type = type;
        this.index = index;
        this.depthLog2 = depthLog2;
        this.intr = intr;
        this.sgDescSize = sgDescSize;
        this.mask = (1 << depthLog2) - 1;
        this.ring = drv.alloc((long) DESC_SIZE << depthLog2);
        this.cqRing = drv.alloc((long) COMP_SIZE << depthLog2);
        this.sgRing = drv.alloc((long) sgDescSize << depthLog2);
    }

    /** Q_INIT of TX queue {@code index} (type 3, flags IRQ|SG) of 2^depthLog2 slots on MSI-X {@code intr}. */
    public static EthQueue tx(IonicDriverModel drv, int version, int index, int intr, int depthLog2)
            throws IOException {
        return create(drv, IonicDriverModel.QTYPE_TXQ, version, index, intr, depthLog2, TX_SG_DESC_SIZE);
    }

    /** Q_INIT of RX queue {@code index} (type 2, flags IRQ|SG). */
    public static EthQueue rx(IonicDriverModel drv, int version, int index, int intr, int depthLog2)
            throws IOException {
        return create(drv, IonicDriverModel.QTYPE_RXQ, version, index, intr, depthLog2, RX_SG_DESC_SIZE);
    }

    private static EthQueue create(IonicDriverModel drv, int type, int version, int index, int intr, int depthLog2,
                                   int sgDescSize) throws IOException {
        EthQueue q = new EthQueue(drv, type, index, depthLog2, intr, sgDescSize);
        var cmd = IonicDriverModel.qInit(type, index, intr, IonicDriverModel.Q_F_IRQ | IonicDriverModel.Q_F_SG,
                depthLog2, q.ring, q.cqRing, q.sgRing);
        cmd.put(5, (byte) version);
        IonicDriverModel.Completion c = drv.adminq(cmd);
        IonicDriverModel.expectOk(c, "Q_INIT type " + type + " index " + index);
        q.hwIndex = c.le().getInt(4);
        q.hwType = c.bytes()[8] & 0xff;
        return q;
    }

    /** Q_CONTROL (ionic_q_control_cmd: type @1, index @4, oper @8) ENABLE or DISABLE; returns the status. */
    public int control(boolean enable) throws IOException {
        var c = IonicDriverModel.command(IonicDriverModel.Q_CONTROL);
        c.put(1, (byte) type).putInt(4, index).put(8, (byte) (enable ? 1 : 0));
        return drv.adminq(c).status();
    }

    public int hwIndex() {
        return hwIndex;
    }

    public int hwType() {
        return hwType;
    }

    /** The slot the next descriptor goes in. */
    public int head() {
        return head;
    }

    /** Descriptor slot {@code slot} in guest memory. */
    public MemorySegment desc(int slot) {
        return drv.mem(ring + (long) DESC_SIZE * (slot & mask), DESC_SIZE);
    }

    /** SG element {@code k} of descriptor {@code slot}. */
    public MemorySegment sg(int slot, int k) {
        return drv.mem(sgRing + (long) sgDescSize * (slot & mask) + (long) SG_ELEM_SIZE * k, SG_ELEM_SIZE);
    }

    /** Writes a TX descriptor at {@code slot}: encode_txq_desc_cmd(opcode, flags, nsge, addr) and len. */
    public void writeTx(int slot, int opcode, int flags, int nsge, long addr, int len) {
        MemorySegment d = desc(slot);
        d.fill((byte) 0);
        long cmd = (long) (opcode & 0xf) << 4 | flags & 0xf | (long) (nsge & 0xf) << 8
                | (addr & ((1L << 52) - 1)) << 12;
        LE.put64(d, TX_CMD, cmd);
        d.set(LE.u16(), TX_LEN, (short) len);
    }

    /** Writes an RX descriptor at {@code slot}. */
    public void writeRx(int slot, int opcode, long addr, int len) {
        MemorySegment d = desc(slot);
        d.fill((byte) 0);
        d.set(ValueLayout.JAVA_BYTE, RX_OPCODE, (byte) opcode);
        d.set(LE.u16(), RX_LEN, (short) len);
        LE.put64(d, RX_ADDR, addr);
    }

    /** Writes SG element {@code k} of descriptor {@code slot}. */
    public void writeSg(int slot, int k, long addr, int len) {
        MemorySegment e = sg(slot, k);
        e.fill((byte) 0);
        LE.put64(e, SG_ADDR, addr);
        e.set(LE.u16(), SG_LEN, (short) len);
    }

    /** Moves the head on by {@code n} slots (after writing their descriptors), without ringing. */
    public void advance(int n) {
        head = (head + n) & mask;
    }

    /** Copies {@code frame} into fresh guest RAM, posts it as one TX descriptor (no offload), and rings the doorbell. */
    public void transmit(byte[] frame) throws IOException {
        long at = drv.alloc(frame.length);
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, drv.mem(at, frame.length), 0, frame.length);
        writeTx(head, TX_OPCODE_CSUM_NONE, 0, 0, at, frame.length);
        advance(1);
        ring();
    }

    /**
     * Posts {@code n} simple RX descriptors from the head, the one in slot {@code s} for the buffer of {@code bufSize}
     * bytes at {@code bufs + s * bufSize}, and rings the doorbell.
     */
    public void postRx(long bufs, int bufSize, int n) throws IOException {
        for (int k = 0; k < n; k++) {
            writeRx(head, RX_OPCODE_SIMPLE, bufs + (long) head * bufSize, bufSize);
            advance(1);
        }
        ring();
    }

    /** Rings the doorbell with the head. */
    public void ring() throws IOException {
        drv.doorbell(doorbellOffset(), IonicDriverModel.doorbellValue(hwIndex, 0, head));
    }

    /** The BAR 2 offset of this queue's doorbell in the LIF's kernel page (pid 0). */
    public long doorbellOffset() {
        return ((long) drv.lifHwIndex() * drv.doorbellPagesPerLif()) * 4096 + hwType * 8L;
    }

    /** One TX or RX completion, its 16 bytes as the device wrote them (struct ionic_txq_comp / ionic_rxq_comp). */
    public record Comp(byte[] bytes) {
        public int status() {
            return bytes[0] & 0xff;
        }

        public int compIndex() {
            return (bytes[2] & 0xff) | (bytes[3] & 0xff) << 8;
        }

        /** RX: SG elements used beyond the first buffer. */
        public int numSgElems() {
            return bytes[1] & 0xff;
        }

        /** RX: the frame's length. */
        public int len() {
            return (bytes[12] & 0xff) | (bytes[13] & 0xff) << 8;
        }

        /** RX: IONIC_RXQ_COMP_CSUM_F_*. */
        public int csumFlags() {
            return bytes[14] & 0xff;
        }

        /** RX: enum ionic_pkt_type (bits 6..0 of byte 15). */
        public int pktType() {
            return bytes[15] & 0x7f;
        }
    }

    /** The next completion if its color is the expected one (the tail then moves on), else null. */
    public Comp next() {
        MemorySegment c = drv.mem(cqRing + (long) COMP_SIZE * cqTail, COMP_SIZE);
        if (((c.get(ValueLayout.JAVA_BYTE, 15) & 0x80) != 0) != color) {
            return null;
        }
        cqTail = (cqTail + 1) & mask;
        if (cqTail == 0) {
            color = !color;
        }
        return new Comp(c.toArray(ValueLayout.JAVA_BYTE));
    }
}
