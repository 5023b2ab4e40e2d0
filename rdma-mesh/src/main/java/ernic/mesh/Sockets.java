package ernic.mesh;

import io.netty.bootstrap.AbstractBootstrap;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;

import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * The node's sockets: the listening one and the ones it dials, with the same options (no Nagle, the node's
 * pooled allocator, its write watermarks and socket buffers) and the same pipeline: the authentication handshake
 * ({@link AuthHandshake}, or a {@link NoSecretGuard} on a node without a secret; either removes itself when done),
 * the {@link FrameReader} (which also chooses the channel's read buffers), then the connection's {@link MeshLink}.
 */
final class Sockets {
    private final MeshNode node;
    private final MeshConfig config;
    private final Transport transport;

    Sockets(MeshNode node) {
        this.node = node;
        this.config = node.config();
        this.transport = Transport.forLoop(node.eventLoop());
    }

    /** Listens on {@code address}; each accepted connection gets a link from {@code newLink}. */
    ChannelFuture listen(InetSocketAddress address, Supplier<MeshLink> newLink) {
        ServerBootstrap b = new ServerBootstrap()
                .group(node.eventLoop())
                .channel(transport.server())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        init(ch, newLink.get());
                    }
                });
        childOptions(b);
        if (config.socketBufferBytes() > 0) {
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
        }
        return b.bind(address);
    }

    private void childOptions(ServerBootstrap b) {
        b.childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, node.alloc())
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark());
        if (config.socketBufferBytes() > 0) {
            b.childOption(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
            b.childOption(ChannelOption.SO_SNDBUF, config.socketBufferBytes());
        }
    }

    /** Connects to {@code target}; the connection's events go to {@code link}. */
    ChannelFuture connect(InetSocketAddress target, MeshLink link) {
        Bootstrap b = new Bootstrap()
                .group(node.eventLoop())
                .channel(transport.socket())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) config.connectTimeout().toMillis())
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        init(ch, link);
                    }
                });
        options(b);
        return b.connect(target);
    }

    private void options(AbstractBootstrap<?, ?> b) {
        b.option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, node.alloc())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark());
        if (config.socketBufferBytes() > 0) {
            b.option(ChannelOption.SO_SNDBUF, config.socketBufferBytes());
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
        }
    }

    private WriteBufferWaterMark waterMark() {
        return new WriteBufferWaterMark(config.writeBufferLow(), config.writeBufferHigh());
    }

    private void init(Channel ch, MeshLink link) {
        FrameReader frames = new FrameReader(config.maxFrameLength(), link::isOpen);
        ch.config().setRecvByteBufAllocator(frames.recvAllocator());
        ch.pipeline().addLast(node.auth().handler(link.kind()), frames, link);
        node.links().add(link);
    }
}
