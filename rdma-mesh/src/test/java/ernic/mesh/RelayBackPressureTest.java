package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static ernic.mesh.Cluster.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A relayed destination that stops reading holds the relaying manager, which holds the sender back; the manager
 * gives up on the destination (half the workers' time-out) before the sender would give up on the manager.
 */
class RelayBackPressureTest {

    @Test
    void theManagerDropsTheStuckDestinationBeforeTheSenderDropsTheManager() {
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofMillis(1500), 64 * 1024, 128 * 1024)
                .withDirectPeers(id -> false);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            c.awaitTopology(java.util.List.of(w1), 2);
            w2.setReceiving(0, false);
            AtomicInteger busy = new AtomicInteger();
            AtomicInteger noRoute = new AtomicInteger();
            ScheduledFuture<?> pump = w1.eventLoop().scheduleAtFixedRate(() -> {
                for (int i = 0; i < 8; i++) {
                    ByteBuf b = Unpooled.wrappedBuffer(new byte[16 * 1024]);
                    SendResult r = w1.send(2, b);
                    if (r != SendResult.QUEUED) {
                        b.release();
                        (r == SendResult.BUSY ? busy : noRoute).incrementAndGet();
                        break;
                    }
                }
            }, 1, 1, TimeUnit.MILLISECONDS);
            try {
                await("the manager gives up on node 2", () -> m.counters().get("mesh.node.sendTimeouts") >= 1);
                await("node 1 learns node 2 is gone", () -> noRoute.get() > 0);
            } finally {
                pump.cancel(false);
            }
            assertThat(busy.get()).as("the sender was held back").isPositive();
            assertThat(w1.counters()).containsEntry("mesh.node.sendTimeouts", 0L);
            assertThat(w1.peerCounters().get(0)).containsEntry("reconnects", 0L);
            assertThat(m.isAlive(1)).isTrue();
            w2.setReceiving(0, true);
            await("node 2 back", () -> m.isAlive(2) && w1.isAlive(2));
            assertThat(w2.nodeId()).isEqualTo(2);
        }
    }
}
