package ernic.ionic.rdma;

import io.netty.buffer.ByteBuf;

/**
 * The ionic wire protocol: what one server's data path sends another's over the mesh (which carries it
 * without looking inside). A fixed big-endian header, then the payload (SEND and WRITE data, a READ's
 * reply, a datagram with its 40-byte GRH) of at most {@link #MAX_PAYLOAD} bytes.
 *
 * <p>A request names the requester's QP, its generation (numbered afresh at every creation, so a reply
 * meant for a destroyed QP never reaches the QP that took its id), and the SQ slot and sequence number of
 * the WQE; the reply echoes them. A WRITE (not WRITE_IMM) longer than {@link RemotePath#WRITE_PIECE} travels
 * as several messages ({@link #FLAG_MORE}). Accessors read and write at absolute offsets of the message buffer.
 */
final class WireHeader {
    private WireHeader() {
    }

    // Requests
    static final int SEND = 1, SEND_IMM = 2, SEND_INV = 3, WRITE = 4, WRITE_IMM = 5, READ = 6, ATOMIC_CS = 7,
            ATOMIC_FA = 8, UD_SEND = 9;
    // Replies
    static final int ACK = 16, READ_RESP = 17, ATOMIC_RESP = 18;

    static final int FLAG_SOLICITED = 1, FLAG_IPV4 = 2, FLAG_VLAN = 4;
    /**
     * A WRITE whose payload is one piece of a longer WRITE: the next message of the same QP (same slot and
     * sequence number, a higher VA) goes on with it, and the last piece, without this flag, is answered for the
     * whole WQE. A piece is answered only when it fails.
     */
    static final int FLAG_MORE = 8;

    static final int OP = 0, FLAGS = 1, STATUS = 2, SRC_QP = 4, DST_QP = 8, GENERATION = 12, SLOT = 16, RKEY = 20,
            SEQ = 24, VA = 32, LENGTH = 40, COMPARE = 48, SWAP_ADD = 56, IMM = 64, QKEY = 68, VLAN = 72, SMAC = 80;
    static final int SIZE = 88;
    /** Largest payload of one message (16 MiB): a longer SEND, WRITE or READ fails with a length error. */
    static final int MAX_PAYLOAD = 16 << 20;

    /** A piece of a longer WRITE, answered only when it fails ({@link #FLAG_MORE}). */
    static boolean piece(ByteBuf m) {
        return (flags(m) & FLAG_MORE) != 0;
    }

    static boolean isReply(int op) {
        return op >= ACK;
    }

    static boolean known(int op) {
        return op >= SEND && op <= UD_SEND || op >= ACK && op <= ATOMIC_RESP;
    }

    static int op(ByteBuf m) {
        return m.getUnsignedByte(m.readerIndex() + OP);
    }

    static int flags(ByteBuf m) {
        return m.getUnsignedByte(m.readerIndex() + FLAGS);
    }

    static int status(ByteBuf m) {
        return m.getUnsignedShort(m.readerIndex() + STATUS);
    }

    static int u32(ByteBuf m, int field) {
        return m.getInt(m.readerIndex() + field);
    }

    static long u64(ByteBuf m, int field) {
        return m.getLong(m.readerIndex() + field);
    }

    static int payloadLength(ByteBuf m) {
        return m.readableBytes() - SIZE;
    }

    /** Writes a zeroed header with the fields every message has; the buffer's writer index ends after it. */
    static void start(ByteBuf m, int op, int flags, int srcQp, int dstQp, int generation, int slot, long seq) {
        m.writeZero(SIZE);
        int b = m.readerIndex();
        m.setByte(b + OP, op);
        m.setByte(b + FLAGS, flags);
        m.setInt(b + SRC_QP, srcQp);
        m.setInt(b + DST_QP, dstQp);
        m.setInt(b + GENERATION, generation);
        m.setInt(b + SLOT, slot);
        m.setLong(b + SEQ, seq);
    }

    static void putStatus(ByteBuf m, int status) {
        m.setShort(m.readerIndex() + STATUS, status);
    }

    static void put32(ByteBuf m, int field, int v) {
        m.setInt(m.readerIndex() + field, v);
    }

    static void put64(ByteBuf m, int field, long v) {
        m.setLong(m.readerIndex() + field, v);
    }
}
