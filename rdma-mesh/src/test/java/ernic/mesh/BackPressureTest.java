package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static ernic.mesh.Cluster.await;
import static ernic.mesh.Cluster.on;
import static org.assertj.core.api.Assertions.assertThat;

class BackPressureTest {
    static final int LOW = 64 * 1024;
    static final int HIGH = 128 * 1024;
    static final int MESSAGE = 32 * 1024;

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aPeerThatStopsReadingHitsTheSendTimeoutAndTheSendersMemoryStaysBounded() {
        MeshConfig cfg = Cluster.fast()
                .withSendTimeout(Duration.ofMillis(600))
                .withWriteBufferWaterMarks(LOW, HIGH)
                .withSocketBufferBytes(64 * 1024);
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker(r2);
            await("direct 1-2", () -> w1.hasDirectConnection(2) && w2.hasDirectConnection(1));
            w2.setReceiving(1, false);

            Channel ch = w1.channelTo(2);
            AtomicLong maxQueued = new AtomicLong();
            AtomicInteger queued = new AtomicInteger();
            AtomicInteger busy = new AtomicInteger();
            AtomicBoolean writableSeenFalse = new AtomicBoolean();
            // The data path: offer a message every millisecond while the connection takes it.
            ScheduledFuture<?> pump = w1.eventLoop().scheduleAtFixedRate(() -> {
                if (!ch.isActive()) {
                    return;
                }
                for (int i = 0; i < 8; i++) {
                    ByteBuf b = Unpooled.wrappedBuffer(new byte[MESSAGE]);
                    SendResult r = w1.send(2, b);
                    if (r != SendResult.QUEUED) {
                        b.release();
                        busy.incrementAndGet();
                        break;
                    }
                    queued.incrementAndGet();
                    long q = ch.unsafe().outboundBuffer() == null ? 0
                            : ch.unsafe().outboundBuffer().totalPendingWriteBytes();
                    maxQueued.accumulateAndGet(q, Math::max);
                }
                if (!ch.isWritable()) {
                    writableSeenFalse.set(true);
                }
            }, 1, 1, TimeUnit.MILLISECONDS);
            try {
                await("the send time-out shuts the connection down", () -> w1.counters().get("node.sendTimeouts") >= 1);
            } finally {
                pump.cancel(false);
            }
            assertThat(ch.isActive()).isFalse();
            assertThat(writableSeenFalse).isTrue();
            assertThat(busy.get()).isPositive();
            // What the sender holds for the peer never exceeds the high watermark plus one message (and its header).
            assertThat(maxQueued.get()).isLessThanOrEqualTo(HIGH + MESSAGE + Wire.DATA_OVERHEAD + 64L);
            assertThat(maxQueued.get()).isGreaterThan((long) LOW);
            assertThat(queued.get()).isGreaterThan(HIGH / MESSAGE);

            // The other nodes are unaffected, and the pair goes on by way of the manager, then directly again.
            w2.setReceiving(1, true);
            assertThat(Cluster.send(w1, 2, "after")).isEqualTo(SendResult.QUEUED);
            await("delivered after the time-out", () -> r2.has(1, "after"));
        }
    }

    @Test
    void theManagerGivesUpInHalfTheTime() {
        MeshConfig cfg = Cluster.fast()
                .withSendTimeout(Duration.ofMillis(800))
                .withWriteBufferWaterMarks(LOW, HIGH)
                .withSocketBufferBytes(64 * 1024);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            w1.setReceiving(0, false);
            Channel ch = m.channelTo(1);
            ScheduledFuture<?> pump = m.eventLoop().scheduleAtFixedRate(() -> {
                while (ch.isActive()) {
                    ByteBuf b = Unpooled.wrappedBuffer(new byte[MESSAGE]);
                    if (m.send(1, b) != SendResult.QUEUED) {
                        b.release();
                        break;
                    }
                }
            }, 1, 1, TimeUnit.MILLISECONDS);
            try {
                await("manager shuts the connection down", () -> m.counters().get("node.sendTimeouts") >= 1);
            } finally {
                pump.cancel(false);
            }
            // That it is half the workers' time-out: MeshLinkTest.
            await("node 1 dead for the manager", () -> !m.isAlive(1));
            w1.setReceiving(0, true);
            await("node 1 back with its id", () -> m.isAlive(1) && w1.nodeId() == 1);
        }
    }

    @Test
    void busyUntilWritableThenTheListenerIsTold() {
        MeshConfig cfg = Cluster.fast()
                .withSendTimeout(Duration.ofSeconds(20))
                .withWriteBufferWaterMarks(LOW, HIGH)
                .withSocketBufferBytes(64 * 1024);
        AtomicInteger writable = new AtomicInteger();
        MeshListener counting = new MeshListener() {
            @Override
            public void onMessage(int sourceNode, ByteBuf payload) {
                payload.release();
            }

            @Override
            public void onWritable(int nodeId) {
                if (nodeId == 2) {
                    writable.incrementAndGet();
                }
            }
        };
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            c.startManager();
            MeshNode w1 = c.startWorker(counting);
            MeshNode w2 = c.startWorker();
            await("direct 1-2", () -> w1.hasDirectConnection(2));
            w2.setReceiving(1, false);
            int before = writable.get();
            // Offer messages until the connection says BUSY, again and again while the socket buffers fill.
            List<SendResult> last = new java.util.ArrayList<>();
            await("the sender's queue stays above the low watermark", () -> {
                last.add(on(w1, () -> {
                    SendResult r;
                    do {
                        ByteBuf b = Unpooled.wrappedBuffer(new byte[MESSAGE]);
                        r = w1.send(2, b);
                        if (r != SendResult.QUEUED) {
                            b.release();
                        }
                    } while (r == SendResult.QUEUED);
                    return r;
                }));
                sleep(20);
                long q = w1.queuedBytes(2);
                sleep(50);
                // Stable: the socket buffers are full, nothing drains any more.
                return q > LOW && w1.queuedBytes(2) == q;
            });
            assertThat(last).containsOnly(SendResult.BUSY);
            assertThat(w1.peerCounters().get(2).get("queueDepth")).isGreaterThan((long) LOW);
            // Stopping every connection keeps it stopped; resuming them all drains the queue.
            w2.setReceivingFromAll(false);
            sleep(50);
            assertThat(w1.queuedBytes(2)).isGreaterThan((long) LOW);
            w2.setReceivingFromAll(true);
            await("writable again", () -> writable.get() > before);
            await("queue drained", () -> w1.queuedBytes(2) == 0);
            assertThat(w1.hasDirectConnection(2)).isTrue();
        }
    }

    /**
     * The seed's budget rule: replies have twice the room of requests on a connection, since a node cannot wait
     * for the requester to read on. With the peer not reading, requests are BUSY above the high watermark, while
     * replies are still queued until one would take the connection past twice the high watermark; that one is
     * BUSY (the caller drops it), and the queue never holds more than twice the high watermark (plus one frame's
     * header per reply).
     */
    @Test
    void repliesHaveTwiceTheRoomOfRequests() {
        MeshConfig cfg = Cluster.fast()
                .withSendTimeout(Duration.ofSeconds(20))
                .withWriteBufferWaterMarks(LOW, HIGH)
                .withSocketBufferBytes(64 * 1024);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            await("direct 1-2", () -> w1.hasDirectConnection(2) && w2.hasDirectConnection(1));
            w2.setReceiving(1, false);
            // One task on w1's loop: nothing else runs on the connection while it measures.
            long[] r = on(w1, () -> {
                int requests = 0;
                while (offer(w1, false) == SendResult.QUEUED) {
                    requests++;
                }
                long afterRequests = w1.queuedBytes(2);
                int replies = 0;
                long before;
                while (true) {
                    before = w1.queuedBytes(2);
                    if (offer(w1, true) != SendResult.QUEUED) {
                        break;
                    }
                    replies++;
                }
                long after = w1.queuedBytes(2);
                SendResult request = offer(w1, false);
                return new long[] {requests, afterRequests, replies, before, after, request.ordinal()};
            });
            assertThat(r[0]).as("requests queued").isPositive();
            assertThat(r[1]).as("requests stop above the high watermark").isGreaterThan(HIGH);
            assertThat(r[2]).as("replies queued past it").isGreaterThanOrEqualTo((2L * HIGH - r[1]) / (MESSAGE
                    + Wire.DATA_OVERHEAD + 64));
            assertThat(r[2]).isPositive();
            assertThat(r[3] + MESSAGE).as("the reply refused would pass twice the high watermark")
                    .isGreaterThan(2L * HIGH);
            assertThat(r[4]).as("what the connection holds").isGreaterThan(HIGH + (long) MESSAGE)
                    .isLessThanOrEqualTo(2L * HIGH + Wire.DATA_OVERHEAD + 64L);
            assertThat(SendResult.values()[(int) r[5]]).as("requests are still BUSY").isEqualTo(SendResult.BUSY);
            w2.setReceiving(1, true);
            await("queue drained", () -> w1.queuedBytes(2) == 0);
        }
    }

    /** A {@link #MESSAGE}-byte request or reply from {@code node} to node 2; released when not taken. */
    private static SendResult offer(MeshNode node, boolean reply) {
        ByteBuf b = Unpooled.wrappedBuffer(new byte[MESSAGE]);
        SendResult r = reply ? node.sendReply(2, b) : node.send(2, b);
        if (r != SendResult.QUEUED) {
            b.release();
        }
        return r;
    }
}
