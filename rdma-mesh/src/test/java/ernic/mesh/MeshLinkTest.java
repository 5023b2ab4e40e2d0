package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The send side of one connection, against a socket that takes writes only when the test says so. */
class MeshLinkTest {
    private final EventLoopGroup unused = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final MockTicker ticker = Ticker.newMockTicker();
    /** A worker's link on an embedded channel whose socket holds every write; new for each test. */
    private final MeshNode node = MeshNode.worker(unused, "127.0.0.1", 1, MeshConfig.defaults());
    private final MeshLink link = new MeshLink(node.links(), MeshLink.Kind.DIRECT_IN, -1, ticker);
    private final StalledSocket socket = new StalledSocket();
    private final EmbeddedChannel ch = new EmbeddedChannel(socket, link);

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

    /** A data frame to node 2 whose payload is {@code bytes} long and starts with {@code id}. */
    private static ByteBuf payload(int id, int bytes) {
        return Unpooled.buffer(bytes).writeInt(id).writeZero(bytes - 4);
    }

    @Test
    void aSenderTakesBackWhatIsStillQueuedAndWhatWentDownStillGoes() {
        List<Integer> asked = new ArrayList<>();
        List<Integer> askedFor = new ArrayList<>();
        boolean[] takeBackOdd = {false};
        Recall recall = (dst, p) -> {
            int id = p.getInt(p.readerIndex());
            asked.add(id);
            askedFor.add(dst);
            return takeBackOdd[0] && (id & 1) != 0;
        };

        // Frame 1 goes down (asked, kept) and fills what may be in flight; 2..7 wait, 5 without a recall.
        ByteBuf first = payload(1, MeshLink.IN_FLIGHT_LIMIT);
        link.write(Wire.data(ByteBufAllocator.DEFAULT, 1, 2, first), recall, first);
        ch.runPendingTasks();
        ByteBuf[] payloads = new ByteBuf[8];
        for (int id = 2; id <= 7; id++) {
            ByteBuf p = payloads[id] = payload(id, 100);
            link.write(Wire.data(ByteBufAllocator.DEFAULT, 1, 2, p), id == 5 ? null : recall, p);
        }
        link.write(new Wire.Gids(java.util.Set.of(), java.util.Set.of()).encode(ByteBufAllocator.DEFAULT)); // a control frame: never asked
        ch.runPendingTasks();
        assertThat(asked).containsExactly(1);
        long queued = link.queuedBytes();
        assertThat(queued).isGreaterThanOrEqualTo(6 * 100L);

        // The sender now gives up the odd ones: 3 and 7 are taken back, 1 (being written) and 5 (no recall) go.
        takeBackOdd[0] = true;
        socket.releaseOne();
        ch.runPendingTasks();
        assertThat(asked).containsExactly(1, 2, 3, 4, 6, 7);
        assertThat(askedFor).containsOnly(2);
        assertThat(socket.held).hasSize(5);
        List<Integer> ids = new ArrayList<>();
        for (StalledSocket.Held h : socket.held.subList(0, 4)) {
            ids.add(h.frame().getInt(h.frame().readerIndex() + Wire.DATA_OVERHEAD));
        }
        assertThat(ids).containsExactly(2, 4, 5, 6);
        assertThat(socket.types).containsExactly(Wire.DATA, Wire.DATA, Wire.DATA, Wire.DATA, Wire.DATA, Wire.GIDS);
        assertThat(node.peerCounters().get(2)).containsEntry("takenBack", 2L);
        assertThat(payloads[3].refCnt()).isZero();
        assertThat(payloads[7].refCnt()).isZero();
        assertThat(payloads[4].refCnt()).isOne();

        // Nothing is left over: the taken-back frames are released and their bytes are off the watermarks.
        drainSocket();
        assertThat(link.busy()).isFalse();
        assertThat(link.queuedBytes()).isZero();
        ch.finishAndReleaseAll();
    }

    /** The socket drains: it releases every frame it holds, and the channel runs what that lets go. */
    private void drainSocket() {
        while (!socket.held.isEmpty()) {
            socket.releaseOne();
            ch.runPendingTasks();
        }
    }

    @Test
    void aRecallThatFailsLetsTheFrameGo() {
        ByteBuf p = payload(9, 100);
        link.write(Wire.data(ByteBufAllocator.DEFAULT, 1, 2, p), (dst, b) -> {
            throw new IllegalStateException("broken sender");
        }, p);
        ch.runPendingTasks();
        assertThat(socket.types).containsExactly(Wire.DATA);
        assertThat(node.peerCounters()).doesNotContainKey(2);
        socket.releaseOne();
        assertThat(link.busy()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void queuedBytesCountTowardTheWatermarks() {
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
        drainSocket();
        assertThat(link.queuedBytes()).isZero();
        assertThat(ch.isWritable()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void everyFrameGoesWithTheLinksOnePromiseAndARepliesBytesCountUntilWritten() {
        link.write(data(MeshLink.IN_FLIGHT_LIMIT));
        ch.runPendingTasks();
        link.writeReply(data(1000));
        link.writeReply(data(2000));
        link.heartbeat();
        ch.runPendingTasks();
        long replies = link.replyBytes();
        assertThat(replies).isGreaterThanOrEqualTo(3000);

        // The socket takes the first frame: the heartbeat and both replies go down behind it.
        socket.releaseOne();
        ch.runPendingTasks();
        assertThat(socket.types).containsExactly(Wire.DATA, Wire.HEARTBEAT, Wire.DATA, Wire.DATA);
        // One promise for the link's life, whatever the frame (no promise and no listener per write).
        assertThat(socket.held).extracting(StalledSocket.Held::promise).containsOnly(socket.held.getFirst().promise());
        assertThat(socket.held.getFirst().promise().isDone()).isFalse();
        assertThat(link.replyBytes()).isEqualTo(replies); // passed down, not yet written

        socket.releaseOne(); // the heartbeat
        assertThat(link.replyBytes()).isEqualTo(replies);
        int first = socket.held.getFirst().frame().readableBytes();
        socket.releaseOne(); // the first reply
        assertThat(link.replyBytes()).isEqualTo(replies - first);
        socket.releaseOne();
        assertThat(link.replyBytes()).isZero();
        assertThat(link.busy()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void aCloseWithFramesInFlightAndQueuedLeavesNothingCounted() {
        link.write(data(MeshLink.IN_FLIGHT_LIMIT));
        ch.runPendingTasks();
        link.writeReply(data(1000));
        link.write(data(100));
        ch.runPendingTasks();
        assertThat(link.busy()).isTrue();
        ch.close();
        assertThat(link.busy()).isFalse();
        assertThat(link.replyBytes()).isZero();
        socket.held.forEach(h -> h.frame().release());
        ch.finishAndReleaseAll();
    }

    /**
     * The send side allocates nothing per frame: frames built as a sender builds them ({@link MeshNode#message}, then
     * the DATA header in its headroom) go through the queue, the pump and a socket that takes each write at once.
     * Run on a {@code FastThreadLocalThread}, as on an event loop (Netty 4.2 recycles its buffer and queue objects only
     * there), with Netty's leak detector off (its sampled traces are its own). The least of five windows after the
     * JIT has compiled the path; a promise and a listener per frame were 72 bytes.
     */
    @Test
    void aFrameOnTheSendSideAllocatesNothing() throws Exception {
        ChannelOutboundHandlerAdapter takesAll = new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ((ByteBuf) msg).release();
                promise.trySuccess();
            }
        };
        MeshLink fast = new MeshLink(node.links(), MeshLink.Kind.DIRECT_IN, -1, ticker);
        EmbeddedChannel fastCh = new EmbeddedChannel(takesAll, fast);
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] least = {Long.MAX_VALUE};
        int frames = 20_000;
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try {
            Thread t = new FastThreadLocalThread(() -> {
                for (int window = 0; window < 15; window++) {
                    long before = threads.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < frames; i += 8) {
                        for (int k = 0; k < 8; k++) { // a burst: one pump, one flush
                            ByteBuf p = node.message(4096);
                            fast.write(Wire.data(node.alloc(), 1, 2, p.writerIndex(p.writerIndex() + 4096)), null, null);
                        }
                        fastCh.runPendingTasks();
                    }
                    if (window >= 10) {
                        least[0] = Math.min(least[0], threads.getCurrentThreadAllocatedBytes() - before);
                    }
                }
            });
            t.start();
            t.join();
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
        assertThat(fast.busy()).isFalse();
        assertThat(least[0] / (double) frames).as("bytes allocated per frame sent").isLessThan(8.0);
        fastCh.finishAndReleaseAll();
        ch.finishAndReleaseAll();
    }

    // ---------------------------------------------------------------- the health check, on the mock ticker

    static final long INTERVAL = TimeUnit.MILLISECONDS.toNanos(100);
    static final long SEND_TIMEOUT = TimeUnit.SECONDS.toNanos(10);

    private MeshLink.Health check() {
        return link.health(ticker.nanoTime(), INTERVAL, SEND_TIMEOUT);
    }

    @Test
    void aQuietConnectionGetsHeartbeatsAndIsClosedAfterThreeSilentIntervals() {
        link.opened(2);
        ticker.advance(INTERVAL - 1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.FINE);
        ticker.advance(1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.HEARTBEAT_SENT);
        assertThat(check()).as("one heartbeat an interval").isEqualTo(MeshLink.Health.FINE);
        assertThat(socket.types).containsExactly(Wire.HEARTBEAT);
        ticker.advance(INTERVAL, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.HEARTBEAT_SENT);
        ticker.advance(INTERVAL - 1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.FINE);
        ticker.advance(1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.SILENT);

        // A frame from the peer (its answer to a heartbeat, say) is a sign of life: the count starts again.
        ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT_ACK));
        assertThat(check()).isEqualTo(MeshLink.Health.FINE);
        ticker.advance(3 * INTERVAL, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.SILENT);
        // Silence on a connection this node stopped reading is its own doing.
        link.setAppPaused(true);
        assertThat(check()).isIn(MeshLink.Health.FINE, MeshLink.Health.HEARTBEAT_SENT);
        ticker.advance(10 * INTERVAL, TimeUnit.NANOSECONDS);
        assertThat(check()).isNotEqualTo(MeshLink.Health.SILENT);
        while (!socket.held.isEmpty()) {
            socket.releaseOne();
        }
        ch.finishAndReleaseAll();
    }

    @Test
    void aHeartbeatIsAnsweredAheadOfData() {
        link.opened(2);
        ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT));
        assertThat(socket.types).containsExactly(Wire.HEARTBEAT_ACK);
        assertThat(node.counters()).containsEntry("mesh.node.heartbeatsReceived", 1L);
        // A heartbeat with a body is not one.
        ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT).writeByte(0));
        assertThat(node.counters()).containsEntry("mesh.node.protocolErrors", 1L);
        assertThat(ch.isActive()).isFalse();
        socket.held.forEach(h -> h.frame().release());
        ch.finishAndReleaseAll();
    }

    @Test
    void aHandshakeThatTakesThreeIntervalsIsGivenUp() {
        ticker.advance(3 * INTERVAL, TimeUnit.NANOSECONDS);
        assertThat(check()).as("no heartbeats before the handshake").isEqualTo(MeshLink.Health.FINE);
        ticker.advance(1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.HANDSHAKE_TIMED_OUT);
        ch.finishAndReleaseAll();
    }

    @Test
    void queuedDataThatGoesNowhereForTheSendTimeoutEndsTheConnection() {
        link.opened(2);
        link.write(data(MeshLink.IN_FLIGHT_LIMIT));
        link.write(data(100));
        ch.runPendingTasks();
        // The peer keeps talking (so it is not silent) but reads nothing: the send side times out.
        for (int i = 0; i < 100; i++) {
            ticker.advance(SEND_TIMEOUT / 100, TimeUnit.NANOSECONDS);
            ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT_ACK));
            assertThat(check()).isIn(MeshLink.Health.FINE, MeshLink.Health.HEARTBEAT_SENT);
        }
        // Progress (the socket takes the first frame) starts the time-out again.
        socket.releaseOne();
        ch.runPendingTasks();
        ticker.advance(SEND_TIMEOUT, TimeUnit.NANOSECONDS);
        ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT_ACK));
        assertThat(check()).isIn(MeshLink.Health.FINE, MeshLink.Health.HEARTBEAT_SENT);
        ticker.advance(1, TimeUnit.NANOSECONDS);
        assertThat(check()).isEqualTo(MeshLink.Health.SEND_TIMED_OUT);
        socket.held.forEach(h -> h.frame().release());
        ch.finishAndReleaseAll();
    }

    @Test
    void aPartialWriteOfALargeFrameIsProgress() {
        link.opened(2);
        link.write(data(MeshLink.IN_FLIGHT_LIMIT));
        link.write(data(100));
        ch.runPendingTasks();
        // The socket takes a part of the first frame each 90% of the time-out: the connection is moving.
        ChannelProgressivePromise p = (ChannelProgressivePromise) socket.held.getFirst().promise();
        for (int part = 1; part <= 3; part++) {
            ticker.advance(SEND_TIMEOUT * 9 / 10, TimeUnit.NANOSECONDS);
            p.tryProgress(part * 1000L, MeshLink.IN_FLIGHT_LIMIT);
            ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT_ACK));
            assertThat(check()).isIn(MeshLink.Health.FINE, MeshLink.Health.HEARTBEAT_SENT);
        }
        ticker.advance(SEND_TIMEOUT + 1, TimeUnit.NANOSECONDS);
        ch.writeInbound(Unpooled.buffer().writeByte(Wire.HEARTBEAT_ACK));
        assertThat(check()).isEqualTo(MeshLink.Health.SEND_TIMED_OUT);
        socket.held.forEach(h -> h.frame().release());
        ch.finishAndReleaseAll();
    }

    @Test
    void theManagerGivesUpOnAStuckWorkerInHalfTheWorkersTime() {
        // Its relay target is dropped before the relay's senders would drop the manager.
        SideParts none = new SideParts(null, null, null, null, null, null, null, null, null, null);
        assertThat(new ManagerSide(none, null, null).sendTimeoutNanos(SEND_TIMEOUT)).isEqualTo(SEND_TIMEOUT / 2);
        assertThat(new WorkerSide(none, null).sendTimeoutNanos(SEND_TIMEOUT)).isEqualTo(SEND_TIMEOUT);
    }
}
