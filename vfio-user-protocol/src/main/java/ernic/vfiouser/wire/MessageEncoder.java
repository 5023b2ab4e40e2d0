package ernic.vfiouser.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/** Turns outbound {@link VfioUserMessage}s into header + payload {@link FdChunk}s. */
@ChannelHandler.Sharable
public final class MessageEncoder extends ChannelOutboundHandlerAdapter {
    public static final MessageEncoder INSTANCE = new MessageEncoder();

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof VfioUserMessage m)) {
            ctx.write(msg, promise);
            return;
        }
        try {
            ByteBuf header = ctx.alloc().buffer(Header.SIZE);
            header.writeShortLE(m.msgId());
            header.writeShortLE(m.commandCode());
            header.writeIntLE(m.size());
            header.writeIntLE(m.flags());
            header.writeIntLE(m.errno());
            CompositeByteBuf whole = ctx.alloc().compositeBuffer(2);
            whole.addComponent(true, header);
            if (m.payload().isReadable()) {
                whole.addComponent(true, m.payload().retain());
            }
            // The fds stay the sender's: the message does not own fds it sends.
            ctx.write(FdChunk.toSend(whole, m.fds()), promise);
        } finally {
            m.takeFds();
            m.release();
        }
    }
}
