package ernic.vfiouser.transport;

import ernic.vfiouser.sys.LibC;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The listening socket between registration and bind, and the connections it accepts once listening. */
class FdServerChannelTest {
    final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    final List<Throwable> caught = new CopyOnWriteArrayList<>();
    final List<Object> accepted = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Runs a few empty tasks on the loop: each turn of it polls epoll first, so pending events get handled. */
    void letTheLoopTurn() throws Exception {
        for (int i = 0; i < 5; i++) {
            group.next().submit(() -> { }).get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aSocketRegisteredButNotListeningYetReportsNothing(@TempDir Path dir) throws Exception {
        FdServerChannel ch = new FdServerChannel(0600);
        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                accepted.add(msg);
                FdSocketChannel child = (FdSocketChannel) msg; // what ServerBootstrap would do: register, then we close
                group.register(child).addListener(f -> child.close());
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                caught.add(cause);
            }
        });
        group.register(ch).sync();
        // Before bind the unconnected socket reports EPOLLHUP; accept() on it would be EINVAL.
        ch.eventLoop().submit(ch::read).get(5, TimeUnit.SECONDS);
        letTheLoopTurn();
        assertThat(caught).isEmpty();

        String path = dir.resolve("s.sock").toString();
        ch.bind(new DomainSocketAddress(path)).sync();
        int client = LibC.socketUnixStream(false);
        try {
            assertThat(LibC.connectUnix(client, path)).isZero();
            // Up to 10 s, not a number of turns: 500 quick turns (about 15 ms) were sometimes over before the accept
            // came, when other tests had run in the same JVM first (2 of 6 runs of the module's tests).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (accepted.isEmpty() && System.nanoTime() < deadline) {
                letTheLoopTurn();
                Thread.sleep(1);
            }
        } finally {
            LibC.close(client);
        }
        assertThat(caught).isEmpty();
        assertThat(accepted).hasSize(1);
        ch.close().sync();
    }

    @Test
    void aSocketOpenedBeforeTheChannelTakesAClientThatCameBeforeIt(@TempDir Path dir) throws Exception {
        String path = dir.resolve("early.sock").toString();
        ListeningSocket socket = ListeningSocket.open(path, 0600);
        assertThat(Files.getPosixFilePermissions(Path.of(path))).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        int client = LibC.socketUnixStream(false);
        try {
            // No channel and no event loop yet: the connection waits in the backlog.
            assertThat(LibC.connectUnix(client, path)).isZero();
            FdServerChannel ch = new FdServerChannel(socket);
            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    accepted.add(msg);
                    FdSocketChannel child = (FdSocketChannel) msg;
                    group.register(child).addListener(f -> child.close());
                }

                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                    caught.add(cause);
                }
            });
            group.register(ch).sync();
            ch.bind(new DomainSocketAddress(path)).sync();
            ch.eventLoop().submit(ch::read).get(5, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (accepted.isEmpty() && System.nanoTime() < deadline) {
                letTheLoopTurn();
                Thread.sleep(1);
            }
            assertThat(caught).isEmpty();
            assertThat(accepted).hasSize(1);
            socket.close(); // taken over: the channel closes it
            assertThat(Files.exists(Path.of(path))).isTrue();
            ch.close().sync();
            assertThat(Files.exists(Path.of(path))).isFalse();
        } finally {
            LibC.close(client);
        }
    }

    @Test
    void aSocketOpenedButNeverTakenOverIsRemovedOnClose(@TempDir Path dir) throws Exception {
        String path = dir.resolve("unused.sock").toString();
        ListeningSocket socket = ListeningSocket.open(path, 0660);
        assertThat(Files.getPosixFilePermissions(Path.of(path))).isEqualTo(PosixFilePermissions.fromString("rw-rw----"));
        socket.close();
        assertThat(Files.exists(Path.of(path), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}
