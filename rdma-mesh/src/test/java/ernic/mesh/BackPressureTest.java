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
    static final int LARGE = 1 << 20;
    private static final byte[] ZEROS = new byte[LARGE];

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aPeerThatStopsReadingHitsTheSendTimeoutAndTheSendersMemoryStaysBounded() {
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofMillis(600), LOW, HIGH);
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            Cluster.Stalled pair = c.startStalled(r2);
            MeshNode w1 = pair.sender(), w2 = pair.receiver();

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
                await("the send time-out shuts the connection down", () -> w1.counters().get("mesh.node.sendTimeouts") >= 1);
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
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofMillis(800), LOW, HIGH);
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
                await("manager shuts the connection down", () -> m.counters().get("mesh.node.sendTimeouts") >= 1);
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
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofSeconds(20), LOW, HIGH);
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
            Cluster.stallDirect(w1, w2);
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
     * Replies have a room of their own on a connection ({@link MeshConfig#replyRoom}: twice the high watermark, at
     * least 64 MiB), since a node cannot wait for the requester to read on. With the peer not reading, requests are
     * BUSY above the high watermark, while replies are still queued until one would take the replies held past the
     * room; that one is BUSY (the caller drops it). Requests stay BUSY throughout.
     */
    @Test
    void repliesHaveARoomOfTheirOwn() {
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofSeconds(20), LOW, HIGH);
        long room = cfg.replyRoom();
        assertThat(room).isEqualTo(MeshConfig.REPLY_ROOM_MIN);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            Cluster.Stalled pair = c.startStalled();
            MeshNode w1 = pair.sender(), w2 = pair.receiver();
            // One task on w1's loop: nothing else runs on the connection while it measures.
            long[] r = on(w1, () -> {
                int requests = 0;
                while (offer(w1, false, MESSAGE) == SendResult.QUEUED) {
                    requests++;
                }
                long afterRequests = w1.queuedBytes(2);
                int replies = 0;
                while (offer(w1, true, LARGE) == SendResult.QUEUED) {
                    replies++;
                }
                long held = w1.link(2).replyBytes();
                SendResult request = offer(w1, false, MESSAGE);
                return new long[] {requests, afterRequests, replies, held, w1.queuedBytes(2), request.ordinal()};
            });
            long frame = LARGE + Wire.DATA_OVERHEAD;
            assertThat(r[0]).as("requests queued").isPositive();
            assertThat(r[1]).as("requests stop above the high watermark").isGreaterThan(HIGH);
            assertThat(r[2]).as("replies queued past it: the whole room").isEqualTo(room / frame);
            assertThat(r[3]).as("reply bytes held").isEqualTo(r[2] * frame);
            assertThat(r[4]).as("what the connection holds").isGreaterThanOrEqualTo(r[1] + r[3]);
            assertThat(SendResult.values()[(int) r[5]]).as("requests are still BUSY").isEqualTo(SendResult.BUSY);
            w2.setReceiving(1, true);
            await("queue drained", () -> w1.queuedBytes(2) == 0);
            assertThat(on(w1, () -> w1.link(2).replyBytes())).as("reply bytes once written").isZero();
        }
    }

    /**
     * Regression (issue 18): with a send budget smaller than one request ({@code queue=64K} and 1 MiB WRITEs), a
     * request queued while the connection was writable took it past twice the watermark, and every reply behind it
     * was BUSY and dropped, so two servers writing to each other timed out each other's WRITEs (all of them, after
     * 30 s). Replies now have their own room: small ones and READ-sized ones still go behind a large request.
     */
    @Test
    void aRequestLargerThanASmallBudgetLeavesRoomForReplies() {
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofSeconds(20), 32 * 1024, 64 * 1024);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            Cluster.Stalled pair = c.startStalled();
            MeshNode w1 = pair.sender(), w2 = pair.receiver();
            SendResult[] r = on(w1, () -> new SendResult[] {offer(w1, false, LARGE), offer(w1, false, MESSAGE),
                    offer(w1, true, 64), offer(w1, true, LARGE)});
            assertThat(r).containsExactly(SendResult.QUEUED, SendResult.BUSY, SendResult.QUEUED, SendResult.QUEUED);
            assertThat(w1.queuedBytes(2)).isGreaterThan(2L * LARGE);
            w2.setReceiving(1, true);
            await("queue drained", () -> w1.queuedBytes(2) == 0);
        }
    }

    /** A {@code bytes}-byte request or reply from {@code node} to node 2; released when not taken. */
    private static SendResult offer(MeshNode node, boolean reply, int bytes) {
        ByteBuf b = Unpooled.wrappedBuffer(ZEROS, 0, bytes); // the same bytes each time: the heap holds them once
        SendResult r = reply ? node.sendReply(2, b) : node.send(2, b);
        if (r != SendResult.QUEUED) {
            b.release();
        }
        return r;
    }
}
