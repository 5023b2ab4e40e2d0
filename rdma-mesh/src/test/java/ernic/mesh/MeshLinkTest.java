package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The send side of one connection, against a socket that takes writes only when the test says so. */
class MeshLinkTest {
    private final EventLoopGroup unused = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

    /** Stands in for a full socket: holds writes until released. */
    static final class StalledSocket extends ChannelOutboundHandlerAdapter {
        record Held(ByteBuf frame, ChannelPromise promise) {
        }

        final List<Held> held = new ArrayList<>();
        final List<Integer> types = new ArrayList<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ByteBuf b = (ByteBuf) msg;
            types.add((int) b.getUnsignedByte(b.readerIndex() + Wire.LENGTH_BYTES));
            held.add(new Held(b, promise));
        }

        void releaseOne() {
            Held h = held.removeFirst();
            h.frame().release();
            h.promise().setSuccess();
        }
    }

    @AfterEach
    void stop() {
        unused.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private static ByteBuf data(int bytes) {
        return Wire.data(io.netty.buffer.ByteBufAllocator.DEFAULT, 1, 2, Unpooled.wrappedBuffer(new byte[bytes]));
    }

    @Test
    void heartbeatsGoAheadOfQueuedDataAndAtMostOneOfEachWaits() {
        MeshNode node = MeshNode.worker(unused, "127.0.0.1", 1, MeshConfig.defaults());
        MeshLink link = new MeshLink(node, MeshLink.Kind.DIRECT_IN, -1);
        StalledSocket socket = new StalledSocket();
        EmbeddedChannel ch = new EmbeddedChannel(socket, link);

        link.write(data(MeshLink.IN_FLIGHT_LIMIT)); // goes down after this task and fills what may be in flight
        ch.runPendingTasks();
        link.write(data(100));
        link.write(data(100));
        link.heartbeat();
        link.heartbeat(); // merged with the one waiting
        link.answer();
        link.answer();
        ch.runPendingTasks();
        assertThat(socket.types).containsExactly(Wire.DATA);

        socket.releaseOne();
        ch.runPendingTasks();
        assertThat(socket.types).containsExactly(Wire.DATA, Wire.HEARTBEAT, Wire.HEARTBEAT_ACK, Wire.DATA, Wire.DATA);
        while (!socket.held.isEmpty()) {
            socket.releaseOne();
        }
        assertThat(link.busy()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void queuedBytesCountTowardTheWatermarks() {
        MeshNode node = MeshNode.worker(unused, "127.0.0.1", 1, MeshConfig.defaults());
        MeshLink link = new MeshLink(node, MeshLink.Kind.DIRECT_IN, -1);
        StalledSocket socket = new StalledSocket();
        EmbeddedChannel ch = new EmbeddedChannel(socket, link);
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1000, 200_000));
        link.write(data(MeshLink.IN_FLIGHT_LIMIT));
        ch.runPendingTasks();
        for (int i = 0; i < 10; i++) {
            link.write(data(10_000));
        }
        assertThat(ch.isWritable()).isTrue();
        long beforeOne = link.queuedBytes();
        // (The stalled socket holds the in-flight frame above the channel's outbound buffer; the queue is counted.)
        assertThat(beforeOne).isGreaterThanOrEqualTo(10 * 10_000L);
        for (int i = 0; i < 10; i++) {
            link.write(data(10_000));
        }
        assertThat(ch.isWritable()).isFalse();
        // The socket drains: everything goes, and the channel is writable again.
        while (!socket.held.isEmpty()) {
            socket.releaseOne();
            ch.runPendingTasks();
        }
        assertThat(link.queuedBytes()).isZero();
        assertThat(ch.isWritable()).isTrue();
        ch.finishAndReleaseAll();
    }
}
