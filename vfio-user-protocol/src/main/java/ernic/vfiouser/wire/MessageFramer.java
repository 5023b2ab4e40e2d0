package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;

/**
 * Cuts the inbound byte stream into {@link VfioUserMessage}s and gives each the file descriptors it
 * was sent with.
 *
 * <p>Which message do fds belong to? A sender passes fds with one sendmsg, that is one message. The
 * kernel's recvmsg on a stream socket may return bytes of earlier fd-less sends before that one, but
 * stops right after the send that carried the fds (or inside it, when the buffer is full). So the
 * fds of a read belong to the last message that starts within the bytes of that read: a message
 * starting inside the read and reaching its end. Fds no message can claim are closed. A header
 * whose size is below 16 or above the limit cannot be resynchronised, so it closes the connection.
 */
public final class MessageFramer extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(MessageFramer.class);

    /** Fds that arrived with the stream bytes [start, end). */
    private record PendingFds(long start, long end, int[] fds) {}

    private final int maxMessageSize;
    private CompositeByteBuf cumulation;
    /** Stream offset of the cumulation's reader index. */
    private long consumed;
    /** Stream offset just past the last byte received. */
    private long received;
    private final ArrayDeque<PendingFds> pendingFds = new ArrayDeque<>();
    /** Fd-less messages with payloads up to this size reuse {@link #reusable}. */
    private static final int REUSED_PAYLOAD_SIZE = 256;
    /**
     * The message the fast path hands out again and again, with one reference of ours: when the
     * handlers let go of it (and of its payload), it carries the next message; else it stays theirs.
     */
    private VfioUserMessage reusable;

    /** @param maxMessageSize the largest whole message (header included) accepted */
    public MessageFramer(int maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        cumulation = ctx.alloc().compositeBuffer(Integer.MAX_VALUE);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FdChunk chunk)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            int[] fds = chunk.takeFds();
            ByteBuf data = chunk.data();
            if (fds.length > 0) {
                pendingFds.add(new PendingFds(received, received + data.readableBytes(), fds));
            }
            received += data.readableBytes();
            if (cumulation.readableBytes() == 0 && decodeWhole(ctx, data)) {
                return; // every byte of the read was a whole message (or the channel closed)
            }
            cumulation.addComponent(true, data.retain());
        } finally {
            chunk.release();
        }
        decode(ctx);
    }

    /**
     * The fast path, for a read that starts on a message boundary (nothing buffered): cuts the whole
     * messages straight out of {@code data}, with no composite buffer and no slices. Returns true when
     * it used up the read (or the channel closed); otherwise it leaves {@code data}'s reader index at
     * the first byte it did not take (a partial message or a bad size), for {@link #decode} to handle
     * exactly as before.
     */
    private boolean decodeWhole(ChannelHandlerContext ctx, ByteBuf data) {
        int i = data.readerIndex();
        int end = data.writerIndex();
        while (end - i >= Header.SIZE) {
            if (!ctx.channel().isOpen()) {
                return true; // as decode(): nothing more is taken from a closed channel
            }
            long size = data.getUnsignedIntLE(i + Header.OFF_SIZE);
            if (size < Header.SIZE || size > maxMessageSize || size > end - i) {
                break;
            }
            int msgId = data.getUnsignedShortLE(i + Header.OFF_MSG_ID);
            int command = data.getUnsignedShortLE(i + Header.OFF_COMMAND);
            int flags = data.getIntLE(i + Header.OFF_FLAGS);
            int errno = data.getIntLE(i + Header.OFF_ERRNO);
            int[] fds = claimFds(consumed, consumed + size);
            // A copy, as decode() makes: the read buffer is used again for the next read.
            int length = (int) size - Header.SIZE;
            VfioUserMessage m;
            if (fds.length == 0 && length <= REUSED_PAYLOAD_SIZE) {
                m = reusable(ctx);
                m.refill(msgId, command, flags, errno);
                m.payload().clear().writeBytes(data, i + Header.SIZE, length);
                m.retain(); // the handlers' reference
            } else {
                ByteBuf payload = ctx.alloc().buffer(length);
                payload.writeBytes(data, i + Header.SIZE, length);
                m = new VfioUserMessage(msgId, command, flags, errno, payload, fds);
            }
            consumed += size;
            i += (int) size;
            data.readerIndex(i);
            ctx.fireChannelRead(m);
        }
        data.readerIndex(i);
        return i == end || cumulation == null;
    }

    private void decode(ChannelHandlerContext ctx) {
        while (ctx.channel().isOpen() && cumulation.readableBytes() >= Header.SIZE) {
            int start = cumulation.readerIndex();
            long size = cumulation.getUnsignedIntLE(start + Header.OFF_SIZE);
            if (size < Header.SIZE || size > maxMessageSize) {
                // The stream cannot be resynchronised: tell the handlers why, then close.
                ctx.fireExceptionCaught(new ProtocolException(LibC.EINVAL, "message size " + size + " outside ["
                        + Header.SIZE + ", " + maxMessageSize + "]", true));
                ctx.close();
                return;
            }
            if (cumulation.readableBytes() < size) {
                return;
            }
            int msgId = cumulation.getUnsignedShortLE(start + Header.OFF_MSG_ID);
            int command = cumulation.getUnsignedShortLE(start + Header.OFF_COMMAND);
            int flags = cumulation.getIntLE(start + Header.OFF_FLAGS);
            int errno = cumulation.getIntLE(start + Header.OFF_ERRNO);
            int[] fds = claimFds(consumed, consumed + size);
            cumulation.skipBytes(Header.SIZE);
            // A copy, not a slice: discarding read components below would move a slice's bytes.
            int length = (int) size - Header.SIZE;
            ByteBuf payload = ctx.alloc().buffer(length);
            cumulation.readBytes(payload, length);
            consumed += size;
            cumulation.discardReadComponents();
            ctx.fireChannelRead(new VfioUserMessage(msgId, command, flags, errno, payload, fds));
        }
    }

    /** The reusable message if nobody else holds it or its payload, else a new one (ours). */
    private VfioUserMessage reusable(ChannelHandlerContext ctx) {
        VfioUserMessage m = reusable;
        if (m != null && (m.refCnt() != 1 || m.payload().refCnt() != 1 || m.fds().length != 0)) {
            reusable = null;
            if (m.refCnt() > 0) {
                m.release(); // theirs now: freed when they release it
            }
            m = null;
        }
        if (m == null) {
            m = new VfioUserMessage(0, 0, 0, 0, ctx.alloc().buffer(REUSED_PAYLOAD_SIZE), VfioUserMessage.NO_FDS);
            reusable = m;
        }
        return m;
    }

    /** The fds of the read in which the message [start, end) is the last to start; closes unclaimable ones. */
    private int[] claimFds(long start, long end) {
        while (!pendingFds.isEmpty()) {
            PendingFds p = pendingFds.peek();
            if (p.end <= start) {
                // No message started in that read and reached its end: nobody sent these fds.
                pendingFds.poll();
                LOG.warn("closing {} fd(s) that arrived with no message of their own", p.fds.length);
                closeAll(p.fds);
            } else if (p.start <= start && end >= p.end) {
                pendingFds.poll();
                return p.fds;
            } else {
                return VfioUserMessage.NO_FDS; // they belong to a later message in the same read
            }
        }
        return VfioUserMessage.NO_FDS;
    }

    private static void closeAll(int[] fds) {
        for (int fd : fds) {
            LibC.close(fd);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseAll();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseAll();
    }

    private void releaseAll() {
        if (reusable != null) {
            if (reusable.refCnt() > 0) {
                reusable.release();
            }
            reusable = null;
        }
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        while (!pendingFds.isEmpty()) {
            closeAll(pendingFds.poll().fds);
        }
    }
}
