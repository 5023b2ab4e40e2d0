package ernic.vfiouser.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * The server's inbound handler: cuts the {@link FdChunk}s of the channel into {@link VfioUserMessage}s,
 * each with the file descriptors {@link MessageStream} gives it. A size that cannot be resynchronised
 * is passed on as a fatal {@link ProtocolException} and closes the connection.
 */
public final class MessageFramer extends ChannelInboundHandlerAdapter implements MessageStream.Buffered {
    private final MessageStream stream;
    private CompositeByteBuf cumulation;
    private ChannelHandlerContext ctx;

    /** @param maxMessageSize the largest whole message (header included) accepted */
    public MessageFramer(int maxMessageSize) {
        this.stream = new MessageStream(maxMessageSize);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        cumulation = ctx.alloc().compositeBuffer(Integer.MAX_VALUE);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FdChunk chunk)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            ByteBuf data = chunk.data();
            stream.received(data.readableBytes(), chunk.takeFds());
            cumulation.addComponent(true, data.retain());
        } finally {
            chunk.release();
        }
        if (!ctx.channel().isOpen()) {
            return;
        }
        try {
            stream.cut(this);
        } catch (ProtocolException e) {
            // The stream cannot be resynchronised: tell the handlers why, then close.
            ctx.fireExceptionCaught(e);
            ctx.close();
        }
    }

    @Override
    public long sizeField() {
        return cumulation.getUnsignedIntLE(cumulation.readerIndex() + Header.OFF_SIZE);
    }

    @Override
    public boolean message(int size, int[] fds) {
        int start = cumulation.readerIndex();
        int msgId = cumulation.getUnsignedShortLE(start + Header.OFF_MSG_ID);
        int command = cumulation.getUnsignedShortLE(start + Header.OFF_COMMAND);
        int flags = cumulation.getIntLE(start + Header.OFF_FLAGS);
        int errno = cumulation.getIntLE(start + Header.OFF_ERRNO);
        cumulation.skipBytes(Header.SIZE);
        // A copy, not a slice: discarding read components below would move a slice's bytes.
        int length = size - Header.SIZE;
        ByteBuf payload = ctx.alloc().buffer(length);
        cumulation.readBytes(payload, length);
        cumulation.discardReadComponents();
        ctx.fireChannelRead(new VfioUserMessage(msgId, command, flags, errno, payload, fds));
        return ctx.channel().isOpen() && cumulation != null;
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
        stream.close();
    }
}
