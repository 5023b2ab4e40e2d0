package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * The first handler of a connection of a node without a secret: it looks at the first four bytes the peer sends.
 * A peer that opens with an authentication CHALLENGE has a secret this node lacks; it is told so (a REFUSE it
 * understands), counted, logged once and closed, instead of being misread as a 1 GiB frame. Anything else is the
 * plain mesh: the guard passes it on and removes itself, so it costs nothing after the first read.
 */
final class NoSecretGuard extends ChannelInboundHandlerAdapter {
    private final MeshAuth auth;
    private final boolean dialer;
    /** The first bytes while fewer than four have come. */
    private ByteBuf first;
    /** The peer was refused: what else it sent is dropped. */
    private boolean refused;

    NoSecretGuard(MeshAuth auth, boolean dialer) {
        this.auth = auth;
        this.dialer = dialer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf b = (ByteBuf) msg;
        if (refused) {
            b.release();
            return;
        }
        if (first != null) {
            b = ctx.alloc().compositeBuffer(2).addComponents(true, first, b);
            first = null;
        }
        if (b.readableBytes() < 4) {
            first = b;
            return;
        }
        if (b.getInt(b.readerIndex()) == MeshAuth.MAGIC) {
            b.release();
            refused = true;
            auth.failed(MeshAuth.Failure.UNEXPECTED, ctx.channel().remoteAddress(),
                    dialer ? "from the node it dialed" : null);
            ctx.writeAndFlush(new Wire.Refuse(Wire.REFUSE_AUTH, "this node has no mesh secret").encode(ctx.alloc()))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(b);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (first != null) {
            first.release();
            first = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        handlerRemoved(ctx); // under four bytes, then gone: nothing the mesh could read
        ctx.fireChannelInactive();
    }
}
