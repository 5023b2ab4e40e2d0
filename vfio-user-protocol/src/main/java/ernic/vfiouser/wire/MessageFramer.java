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
 * Cuts the inbound byte stream into {@link VfioUserMessage}s. File descriptors belong to the message
 * whose first byte they arrived with; fds that arrived with any other byte are closed. A header
 * whose size is below 16 or above the limit cannot be resynchronised, so it closes the connection.
 */
public final class MessageFramer extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(MessageFramer.class);

    private record PendingFds(long streamOffset, int[] fds) {}

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
            if (fds.length > 0) {
                pendingFds.add(new PendingFds(received, fds));
            }
            ByteBuf data = chunk.data();
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

    /** The fds that arrived with the byte at {@code start}; closes those that arrived inside the message. */
    private int[] claimFds(long start, long end) {
        int[] mine = VfioUserMessage.NO_FDS;
        while (!pendingFds.isEmpty() && pendingFds.peek().streamOffset < end) {
            PendingFds p = pendingFds.poll();
            if (p.streamOffset == start && mine.length == 0) {
                mine = p.fds;
            } else {
                LOG.warn("closing {} fd(s) that arrived inside a message rather than with its first byte",
                        p.fds.length);
                closeAll(p.fds);
            }
        }
        return mine;
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
