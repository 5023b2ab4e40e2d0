package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static ernic.mesh.Cluster.await;
import static ernic.mesh.Cluster.on;
import static org.assertj.core.api.Assertions.assertThat;

/** A sender takes back what still waits on a connection whose peer has stopped reading. */
class TakeBackTest {
    static final int MESSAGE = 16 * 1024;
    static final int COUNT = 200;

    @Test
    void whatIsStillQueuedIsTakenBackAndTheRestArrivesInOrder() {
        // Small socket buffers, so most of the 3.2 MB waits in the sender's queue (under its 8 MiB watermark).
        MeshConfig cfg = Cluster.smallBuffers(Duration.ofSeconds(30), 4 << 20, 8 << 20);
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            Cluster.Stalled pair = c.startStalled(r2);
            MeshNode w1 = pair.sender(), w2 = pair.receiver();

            // The sender gives up the odd messages once this is set; a recall is asked on the sender's loop.
            AtomicInteger giveUpOdd = new AtomicInteger();
            List<Integer> asked = new ArrayList<>();
            List<Integer> askedFor = new ArrayList<>();
            Recall recall = (dst, p) -> {
                int id = p.getInt(p.readerIndex());
                asked.add(id);
                askedFor.add(dst);
                return giveUpOdd.get() != 0 && (id & 1) != 0;
            };
            int queued = on(w1, () -> {
                int n = 0;
                for (int id = 0; id < COUNT; id++) {
                    ByteBuf b = w1.message(MESSAGE).writeInt(id).writeZero(MESSAGE - 4); // framed in its headroom
                    if (w1.send(2, b, recall) != SendResult.QUEUED) {
                        b.release();
                        break;
                    }
                    n++;
                }
                return n;
            });
            assertThat(queued).isEqualTo(COUNT);
            // Wait until the socket buffers are full: the queue stops draining.
            await("the sender's queue stops draining", () -> {
                long q = w1.queuedBytes(2);
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return q > 0 && w1.queuedBytes(2) == q;
            });
            // In one task of the sender's loop: what went down so far, and from now on the odd ones are given up.
            int askedBefore = on(w1, () -> {
                giveUpOdd.set(1);
                return asked.size();
            });
            assertThat(askedBefore).isLessThan(COUNT);
            w2.setReceiving(1, true);

            await("every message delivered or taken back", () -> r2.messages.size()
                    + w1.peerCounters().get(2).get("takenBack") == COUNT);
            List<Integer> got = new ArrayList<>();
            for (Cluster.Received m : r2.messages) {
                got.add(Unpooled.wrappedBuffer(m.bytes()).getInt(0));
            }
            long takenBack = w1.peerCounters().get(2).get("takenBack");
            // Those asked before the sender gave up went down and arrived, odd ones included; of the rest the
            // odd ones were taken back; the order of what arrived is the order of sending.
            List<Integer> expected = new ArrayList<>();
            for (int id = 0; id < COUNT; id++) {
                if (id < askedBefore || (id & 1) == 0) {
                    expected.add(id);
                }
            }
            assertThat(got).containsExactlyElementsOf(expected);
            assertThat(takenBack).isEqualTo(COUNT - expected.size()).isPositive();
            assertThat(on(w1, () -> List.copyOf(asked))).as("each message asked about once, in order")
                    .isSorted().doesNotHaveDuplicates().hasSize(COUNT);
            assertThat(on(w1, () -> List.copyOf(askedFor))).containsOnly(2);
            assertThat(w1.peerCounters().get(2)).containsEntry("messagesSent", (long) COUNT);
            assertThat(w2.peerCounters().get(1)).containsEntry("messagesReceived", (long) expected.size());
            await("the queue is empty", () -> w1.queuedBytes(2) == 0);

            // The connection goes on as before.
            assertThat(Cluster.send(w1, 2, "after")).isEqualTo(SendResult.QUEUED);
            await("delivered after", () -> r2.has(1, "after"));
        }
    }
}
