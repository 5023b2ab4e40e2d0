package ernic.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class StatsFileTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void writeReplacesTheFileAtomicallyAndLeavesNoTemporaryFile() throws Exception {
        Path f = dir.resolve("stats.json");
        StatsFile.write(f, Map.of("a", 1, "b", Map.of("c", List.of(1, 2))));
        StatsFile.write(f, Map.of("a", 2));
        JsonNode n = JSON.readTree(f.toFile());
        assertThat(n.get("a").asLong()).isEqualTo(2);
        assertThat(n.has("b")).isFalse();
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(f)))
                .isEqualTo("rw-r--r--");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("stats.json");
        }
    }

    @Test
    void snapshotsOnTheLoopWritesElsewhereAndOnceMoreAtClose() throws Exception {
        Path f = dir.resolve("stats.json");
        EventLoop loop = new DefaultEventLoop();
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger offLoop = new AtomicInteger();
        try {
            StatsFile sf = new StatsFile(f, loop, () -> {
                if (!loop.inEventLoop()) {
                    offLoop.incrementAndGet();
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("n", calls.incrementAndGet());
                return m;
            }).start(20);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sf.writes() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(sf.writes()).isGreaterThanOrEqualTo(3);
            sf.close();
            int last = calls.get();
            assertThat(JSON.readTree(f.toFile()).get("n").asInt()).as("the file holds the last snapshot").isEqualTo(last);
            Thread.sleep(100);
            assertThat(calls.get()).as("no ticks after close").isEqualTo(last);
            assertThat(offLoop.get()).as("snapshots taken off the loop").isZero();
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    @Test
    void aWriteFailureDoesNotStopTheTicks() throws Exception {
        Path f = dir.resolve("missing").resolve("stats.json");
        EventLoop loop = new DefaultEventLoop();
        AtomicInteger calls = new AtomicInteger();
        try {
            StatsFile sf = new StatsFile(f, loop, () -> Map.<String, Object>of("n", calls.incrementAndGet())).start(10);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (calls.get() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            sf.close();
            assertThat(calls.get()).isGreaterThanOrEqualTo(3);
            assertThat(sf.writes()).isZero();
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    @Test
    void serverWritesDeviceCountersHwCountersAndRefusals() throws Exception {
        Path f = dir.resolve("stats.json");
        ErnicServer.Settings s = ErnicServer.Settings.ionic(dir.resolve("ernic.sock").toString())
                .withStatsFile(f.toString());
        try (ErnicServer server = ErnicServer.start(s)) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(f) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(f).exists();
        }
        JsonNode n = JSON.readTree(f.toFile());
        assertThat(n.get("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(n.get("device_kind").asText()).isEqualTo("ionic");
        assertThat(n.get("vfio_user").get("connections").asLong()).isZero();
        List<String> vfioKeys = new java.util.ArrayList<>();
        n.get("vfio_user").fieldNames().forEachRemaining(vfioKeys::add);
        assertThat(vfioKeys).as("the stats file's vfio_user keys, in order").containsExactly("connections",
                "client_connected", "versions_negotiated", "dma_maps_with_fd", "dma_maps_without_fd", "dma_unmaps",
                "irq_eventfds", "region_reads", "region_writes", "config_reads", "config_writes", "resets",
                "error_replies", "protocol_closes");
        assertThat(n.get("refusals").has("vfio_user")).isTrue();
        assertThat(n.get("refusals").has("device")).isTrue();
        assertThat(n.get("device").get("rdma.hw.tx_send_reqs").asLong()).isZero();
        assertThat(n.get("hw_counters").get("tx_send_reqs").asLong()).isZero();
        assertThat(n.get("qps").size()).isZero();
    }

    @Test
    void aStatsFileInAMissingDirectoryIsRefusedAtStart() {
        ErnicServer.Settings s = ErnicServer.Settings.ionic(dir.resolve("ernic.sock").toString())
                .withStatsFile(dir.resolve("nope/stats.json").toString());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ErnicServer.start(s))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--stats-file");
    }
}
