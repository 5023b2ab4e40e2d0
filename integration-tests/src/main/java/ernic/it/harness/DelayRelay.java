package ernic.it.harness;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay that delays what it forwards: each connection accepted on {@code listen} is paired with one to
 * {@code target}, and every chunk read on one side is written to the other {@code delay} later (per direction),
 * in order. This kernel has no netem qdisc, so this is how a test puts latency between two servers. A side that
 * cannot keep up stops the other from reading (autoRead), so a slow end is not buffered here without bound. A
 * side that closes closes its partner once what was read before has gone out.
 */
public final class DelayRelay implements AutoCloseable {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final AtomicLong forwarded = new AtomicLong();

    private DelayRelay(InetSocketAddress listen, InetSocketAddress target, Duration toTarget, Duration back) {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel inbound) {
                        inbound.pipeline().addLast(new Pair(target, toTarget, back));
                    }
                })
                .bind(listen).syncUninterruptibly().channel();
    }

    /** Listens on {@code listen} and relays each connection to {@code target}. */
    public static DelayRelay start(InetSocketAddress listen, InetSocketAddress target, Duration toTarget,
                                   Duration back) {
        return new DelayRelay(listen, target, toTarget, back);
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Bytes forwarded so far, both directions. */
    public long forwarded() {
        return forwarded.get();
    }

    /** The accepted side of one relayed connection; it makes the outgoing side when it becomes active. */
    private final class Pair extends ChannelInboundHandlerAdapter {
        private final InetSocketAddress target;
        private final Duration toTarget, back;

        Pair(InetSocketAddress target, Duration toTarget, Duration back) {
            this.target = target;
            this.toTarget = toTarget;
            this.back = back;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel inbound = ctx.channel();
            Channel outbound = new Bootstrap().group(inbound.eventLoop()).channel(NioSocketChannel.class)
                    .option(ChannelOption.AUTO_READ, false)
                    .handler(new Forward(inbound, back))
                    .connect(target).addListener((ChannelFutureListener) f -> {
                        if (f.isSuccess()) {
                            inbound.read();
                            f.channel().read();
                        } else {
                            inbound.close();
                        }
                    }).channel();
            inbound.pipeline().replace(this, "forward", new Forward(outbound, toTarget));
        }
    }

    /** Writes what its channel reads to {@code to}, {@code delay} later. Both channels share one event loop. */
    private final class Forward extends ChannelInboundHandlerAdapter {
        private final Channel to;
        private final long delayNanos;

        Forward(Channel to, Duration delay) {
            this.to = to;
            this.delayNanos = delay.toNanos();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            forwarded.addAndGet(b.readableBytes());
            // Equal delays keep the order: the loop runs tasks of equal deadline in the order they were scheduled.
            ctx.executor().schedule(() -> {
                if (to.isActive()) {
                    to.writeAndFlush(b);
                } else {
                    b.release();
                }
            }, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (to.isWritable()) {
                ctx.channel().read();
            } // else the partner's writability change asks for more
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable() && to.isActive()) {
                to.read(); // this side drained: its partner may read again
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            // After what was read before the close has been written.
            ctx.executor().schedule(() -> to.close(), delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
