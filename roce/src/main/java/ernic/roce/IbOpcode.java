package ernic.roce;

import static ernic.roce.IbOpcode.Position.FIRST;
import static ernic.roce.IbOpcode.Position.LAST;
import static ernic.roce.IbOpcode.Position.MIDDLE;
import static ernic.roce.IbOpcode.Position.ONLY;

/**
 * The IBTA opcodes (vol. 1, 9.2.3, table 38) of the transports this device speaks: the BTH opcode byte is the
 * transport (bits 7-5: {@link #RC}, {@link #UC}, {@link #UD}) or'ed with the operation (bits 4-0). For each:
 * the extension headers that follow the BTH ({@link Header}, in the order they follow it), whether a payload
 * follows them, whether it is a request or a response, and where it stands in its message ({@link Position}).
 * A multi-packet message is cut from its ONLY opcode: {@link #packet} gives the FIRST / MIDDLE / LAST opcode
 * of the same kind (SEND_ONLY_IMM: SEND_FIRST, SEND_MIDDLE, SEND_LAST_IMM).
 *
 * <p>This table is the one place these facts are written; a packet's layout (the trace's frames, the wire's
 * packets) is built from it. Not here: RD (no RD QPs), and the opcodes added after table 38's original list
 * (FLUSH 0x1c, ATOMIC WRITE 0x1d): one row each when the device takes them. Lookups ({@link #of}, {@link #on},
 * {@link #packet}) read arrays made once and allocate nothing.
 */
public enum IbOpcode {
    // Reliable Connection
    RC_SEND_FIRST(T.RC, 0x00, FIRST, true, true),
    RC_SEND_MIDDLE(T.RC, 0x01, MIDDLE, true, true),
    RC_SEND_LAST(T.RC, 0x02, LAST, true, true),
    RC_SEND_LAST_WITH_IMMEDIATE(T.RC, 0x03, LAST, true, true, Header.IMM_DT),
    RC_SEND_ONLY(T.RC, 0x04, cutInto(0x00, 0x01, 0x02), true, true),
    RC_SEND_ONLY_WITH_IMMEDIATE(T.RC, 0x05, cutInto(0x00, 0x01, 0x03), true, true, Header.IMM_DT),
    RC_RDMA_WRITE_FIRST(T.RC, 0x06, FIRST, true, true, Header.RETH),
    RC_RDMA_WRITE_MIDDLE(T.RC, 0x07, MIDDLE, true, true),
    RC_RDMA_WRITE_LAST(T.RC, 0x08, LAST, true, true),
    RC_RDMA_WRITE_LAST_WITH_IMMEDIATE(T.RC, 0x09, LAST, true, true, Header.IMM_DT),
    RC_RDMA_WRITE_ONLY(T.RC, 0x0a, cutInto(0x06, 0x07, 0x08), true, true, Header.RETH),
    RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE(T.RC, 0x0b, cutInto(0x06, 0x07, 0x09), true, true, Header.RETH, Header.IMM_DT),
    RC_RDMA_READ_REQUEST(T.RC, 0x0c, ONLY, true, false, Header.RETH),
    RC_RDMA_READ_RESPONSE_FIRST(T.RC, 0x0d, FIRST, false, true, Header.AETH),
    RC_RDMA_READ_RESPONSE_MIDDLE(T.RC, 0x0e, MIDDLE, false, true),
    RC_RDMA_READ_RESPONSE_LAST(T.RC, 0x0f, LAST, false, true, Header.AETH),
    RC_RDMA_READ_RESPONSE_ONLY(T.RC, 0x10, cutInto(0x0d, 0x0e, 0x0f), false, true, Header.AETH),
    RC_ACKNOWLEDGE(T.RC, 0x11, ONLY, false, false, Header.AETH),
    RC_ATOMIC_ACKNOWLEDGE(T.RC, 0x12, ONLY, false, false, Header.AETH, Header.ATOMIC_ACK_ETH),
    RC_CMP_SWAP(T.RC, 0x13, ONLY, true, false, Header.ATOMIC_ETH),
    RC_FETCH_ADD(T.RC, 0x14, ONLY, true, false, Header.ATOMIC_ETH),
    RC_SEND_LAST_WITH_INVALIDATE(T.RC, 0x16, LAST, true, true, Header.IETH),
    RC_SEND_ONLY_WITH_INVALIDATE(T.RC, 0x17, cutInto(0x00, 0x01, 0x16), true, true, Header.IETH),
    // Unreliable Connection: the SENDs and RDMA WRITEs of RC, nothing that is answered
    UC_SEND_FIRST(T.UC, 0x00, FIRST, true, true),
    UC_SEND_MIDDLE(T.UC, 0x01, MIDDLE, true, true),
    UC_SEND_LAST(T.UC, 0x02, LAST, true, true),
    UC_SEND_LAST_WITH_IMMEDIATE(T.UC, 0x03, LAST, true, true, Header.IMM_DT),
    UC_SEND_ONLY(T.UC, 0x04, cutInto(0x00, 0x01, 0x02), true, true),
    UC_SEND_ONLY_WITH_IMMEDIATE(T.UC, 0x05, cutInto(0x00, 0x01, 0x03), true, true, Header.IMM_DT),
    UC_RDMA_WRITE_FIRST(T.UC, 0x06, FIRST, true, true, Header.RETH),
    UC_RDMA_WRITE_MIDDLE(T.UC, 0x07, MIDDLE, true, true),
    UC_RDMA_WRITE_LAST(T.UC, 0x08, LAST, true, true),
    UC_RDMA_WRITE_LAST_WITH_IMMEDIATE(T.UC, 0x09, LAST, true, true, Header.IMM_DT),
    UC_RDMA_WRITE_ONLY(T.UC, 0x0a, cutInto(0x06, 0x07, 0x08), true, true, Header.RETH),
    UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE(T.UC, 0x0b, cutInto(0x06, 0x07, 0x09), true, true, Header.RETH, Header.IMM_DT),
    // Unreliable Datagram: one packet per message, each with a DETH
    UD_SEND_ONLY(T.UD, 0x04, ONLY, true, true, Header.DETH),
    UD_SEND_ONLY_WITH_IMMEDIATE(T.UD, 0x05, ONLY, true, true, Header.DETH, Header.IMM_DT);

    /** The transport bits of the opcode byte. */
    public static final int RC = T.RC, UC = T.UC, RD = T.RD, UD = T.UD;
    public static final int TRANSPORT_MASK = 0xe0, OPERATION_MASK = 0x1f;

    /** The extension headers, in the order they follow the BTH, with their lengths in bytes (IBTA 9.3 .. 9.5). */
    public enum Header {
        /** Datagram: Q_Key, source QP. */
        DETH(8),
        /** RDMA: VA, R_Key, DMA length. */
        RETH(16),
        /** Atomic: VA, R_Key, swap (or add) data, compare data. */
        ATOMIC_ETH(28),
        /** ACK: syndrome, MSN. */
        AETH(4),
        /** Atomic ACK: the original remote data. */
        ATOMIC_ACK_ETH(8),
        /** Immediate data. */
        IMM_DT(4),
        /** Invalidate: the R_Key to invalidate. */
        IETH(4);

        public final int length;

        Header(int length) {
            this.length = length;
        }

        /** This header's bit in {@link IbOpcode#headers}. */
        public int bit() {
            return 1 << ordinal();
        }
    }

    /** The transports, for the rows above (an enum's rows may not name its own static fields). */
    private static final class T {
        static final int RC = 0x00, UC = 0x20, RD = 0x40, UD = 0x60;
    }

    /** Where a packet stands in its message. */
    public enum Position { FIRST, MIDDLE, LAST, ONLY }

    private static final IbOpcode[] BY_CODE = new IbOpcode[256];

    static {
        for (IbOpcode o : values()) {
            if (BY_CODE[o.code] != null) {
                throw new ExceptionInInitializerError("opcode 0x" + Integer.toHexString(o.code) + " twice");
            }
            BY_CODE[o.code] = o;
        }
    }

    /** The BTH opcode byte. */
    public final int code;
    /** {@link #RC}, {@link #UC} or {@link #UD}. */
    public final int transport;
    /** The operation: the opcode's low 5 bits. */
    public final int operation;
    public final Position position;
    /** A request (sent by the requester), else a response (sent back by the responder). */
    public final boolean request;
    /** A payload follows the extension headers (possibly of 0 bytes). */
    public final boolean payload;
    /** The extension headers, as {@link Header#bit()}s. */
    public final int headers;
    /** Bytes of the extension headers: from the end of the BTH to the payload. */
    public final int headerLength;
    /** For an ONLY opcode that a longer message is cut from: the operations of its FIRST, MIDDLE and LAST. */
    private final int firstOp, middleOp, lastOp;

    IbOpcode(int transport, int operation, Position position, boolean request, boolean payload, Header... headers) {
        this(transport, operation, position, -1, request, payload, headers);
    }

    /** An ONLY opcode that longer messages are cut from, {@code cut} as {@link #cutInto} packs it. */
    IbOpcode(int transport, int operation, int cut, boolean request, boolean payload, Header... headers) {
        this(transport, operation, ONLY, cut, request, payload, headers);
    }

    IbOpcode(int transport, int operation, Position position, int cut, boolean request, boolean payload,
             Header... headers) {
        this.code = transport | operation;
        this.firstOp = cut < 0 ? -1 : cut & 0xff;
        this.middleOp = cut < 0 ? -1 : cut >>> 8 & 0xff;
        this.lastOp = cut < 0 ? -1 : cut >>> 16 & 0xff;
        this.transport = transport;
        this.operation = operation;
        this.position = position;
        this.request = request;
        this.payload = payload;
        int bits = 0, length = 0;
        for (Header h : headers) {
            bits |= h.bit();
            length += h.length;
        }
        this.headers = bits;
        this.headerLength = length;
    }

    /** The operations of the FIRST, MIDDLE and LAST packets a message of an ONLY opcode is cut into. */
    private static int cutInto(int first, int middle, int last) {
        return first | middle << 8 | last << 16;
    }

    /** The opcode of BTH opcode byte {@code code}, or null when this table has none. */
    public static IbOpcode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** The bytes of the extension headers of opcode byte {@code code} (0 for an opcode not in the table). */
    public static int headerLength(int code) {
        IbOpcode o = of(code);
        return o == null ? 0 : o.headerLength;
    }

    /** The extension headers of opcode byte {@code code}, as {@link Header#bit()}s (0 for one not in the table). */
    public static int headers(int code) {
        IbOpcode o = of(code);
        return o == null ? 0 : o.headers;
    }

    /** This operation on transport {@code transport}, or null when that transport has no such opcode. */
    public IbOpcode on(int transport) {
        return of(transport | operation);
    }

    public boolean has(Header h) {
        return (headers & h.bit()) != 0;
    }

    /** A packet of an RDMA WRITE (any position, with or without immediate data). */
    public boolean rdmaWrite() {
        return transport != UD && operation >= 0x06 && operation <= 0x0b;
    }

    /** Carries immediate data (ImmDt). */
    public boolean immediate() {
        return has(Header.IMM_DT);
    }

    /** Carries an R_Key for the responder to invalidate (IETH). */
    public boolean invalidate() {
        return has(Header.IETH);
    }

    /** The first packet of its message (FIRST or ONLY): the one that carries the RETH of a WRITE. */
    public boolean first() {
        return position == FIRST || position == ONLY;
    }

    /** The last packet of its message (LAST or ONLY): the one that completes it, with its ImmDt or IETH. */
    public boolean last() {
        return position == LAST || position == ONLY;
    }

    /**
     * The opcode of packet {@code index} of a message of {@code count} packets whose single-packet form is this
     * (an ONLY opcode): this one for one packet, else its FIRST, MIDDLE or LAST. An opcode that no message is cut
     * from (a READ request, an ACK) stays itself.
     */
    public IbOpcode packet(int index, int count) {
        if (count <= 1 || firstOp < 0) {
            return this;
        }
        int op = index == 0 ? firstOp : index == count - 1 ? lastOp : middleOp;
        return BY_CODE[transport | op];
    }
}
