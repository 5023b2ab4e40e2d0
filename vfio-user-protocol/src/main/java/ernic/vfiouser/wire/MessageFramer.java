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
            cumulation.addComponent(true, data.retain());
        } finally {
            chunk.release();
        }
        decode(ctx);
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
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        while (!pendingFds.isEmpty()) {
            closeAll(pendingFds.poll().fds);
        }
    }
}
