package ernic.mesh;

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
        connectionOptions(b::childOption);
        if (config.socketBufferBytes() > 0) {
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
        }
        return b.bind(address);
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
        connectionOptions(b::option);
        return b.connect(target);
    }

    /**
     * Where a bootstrap takes a connection's options: {@code option} for one it dials, {@code childOption} for one it
     * accepts.
     */
    private interface Options {
        <T> void set(ChannelOption<T> option, T value);
    }

    /** The options of every mesh connection, dialed or accepted. */
    private void connectionOptions(Options o) {
        o.set(ChannelOption.TCP_NODELAY, true);
        o.set(ChannelOption.ALLOCATOR, node.alloc());
        o.set(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark());
        if (config.socketBufferBytes() > 0) {
            o.set(ChannelOption.SO_SNDBUF, config.socketBufferBytes());
            o.set(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
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
