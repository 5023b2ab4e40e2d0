package ernic.server;

import ernic.counters.CounterRegistry;
import ernic.ionic.IonicDevice;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.RdmaVerbs;
import ernic.server.metrics.MetricsEndpoint;
import ernic.server.metrics.PrometheusNames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stats file, the metrics endpoint and the device's counter map are three views of one registry snapshot
 * taken on the device loop (issue 32): on one snapshot they agree value for value.
 */
class OneSnapshotTest {
    @TempDir
    Path dir;

    @Test
    void statsFileMetricsAndDeviceMapAgreeOnOneSnapshot() throws Exception {
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("ernic.sock").toString()));
             IonicDriverModel drv = IonicDriverModel.connect(server.vfioUser().socketPath())) {
            RdmaVerbs.open(drv); // bring-up: device commands, admin queues, interrupts
            IonicDevice ionic = (IonicDevice) server.device();
            record Views(List<CounterRegistry.Sample> samples, Map<String, Object> stats, Map<String, Long> device) {
            }
            Views v = server.vfioUser().eventLoop().submit(() -> {
                ionic.refusals().refuse("test-device-cause", "a device refusal for the test");
                server.vfioUser().refusals().refuse("test vfio cause", "a protocol refusal for the test");
                List<CounterRegistry.Sample> samples = server.samples();
                return new Views(samples, server.stats(samples), ionic.counters(samples));
            }).get(5, TimeUnit.SECONDS);
            // The endpoint serves that very snapshot.
            Scrape scrape;
            try (MetricsEndpoint endpoint = MetricsEndpoint.start(MetricsEndpoint.Address.parse("localhost:0"),
                    server.vfioUser().eventLoop(), () -> v.samples)) {
                scrape = Scrape.of(endpoint.port());
            }

            // The stats file's device map is the device's map of the snapshot.
            assertThat(v.stats.get("device")).isEqualTo(v.device);
            assertThat(v.device.get("devcmd.executed")).isPositive();
            assertThat(v.device.get("intr.fired")).isPositive();
            assertThat(v.device).containsEntry("refused.test-device-cause", 1L)
                    .containsKeys("lif.rx_ucast_packets", "fault.tx-drop.occurrences", "rdma.hw.refusals");

            // Every value of the snapshot is the metric's value (and the stats file's where it shows it).
            Map<?, ?> vfio = (Map<?, ?>) v.stats.get("vfio_user");
            Map<?, ?> hw = (Map<?, ?>) v.stats.get("hw_counters");
            Map<?, ?> refusals = (Map<?, ?>) v.stats.get("refusals");
            int checked = 0;
            for (CounterRegistry.Sample s : v.samples) {
                String metric = PrometheusNames.of(s.name()) + (s.gauge() ? "" : "_total");
                String labels = s.labels().isEmpty() ? "" : s.labels().entrySet().stream()
                        .map(e -> e.getKey() + "=\"" + e.getValue() + "\"").reduce((a, b) -> a + "," + b)
                        .map(x -> "{" + x + "}").orElse("");
                assertThat(scrape.series()).as(metric + labels).containsKey(metric + labels);
                assertThat(scrape.value(metric + labels)).as(metric + labels).isEqualTo((double) s.value());
                String cause = s.labels().get(CounterRegistry.CAUSE);
                if (s.name().equals("vfio.refused")) {
                    assertThat(((Map<?, ?>) refusals.get("vfio_user")).get(cause)).isEqualTo(s.value());
                } else if (s.name().equals(IonicDevice.REFUSED)) {
                    assertThat(((Map<?, ?>) refusals.get("device")).get(cause)).isEqualTo(s.value());
                    assertThat(v.device.get("refused." + cause)).isEqualTo(s.value());
                } else if (s.labels().isEmpty() && s.name().startsWith("vfio.")) {
                    Object shown = vfio.get(s.name().substring("vfio.".length()));
                    assertThat(shown).isEqualTo(s.name().equals("vfio.client_connected") ? (Object) (s.value() != 0)
                            : (Object) s.value());
                } else if (s.labels().isEmpty() && s.name().startsWith("rdma.hw.")) {
                    assertThat(hw.get(s.name().substring("rdma.hw.".length()))).isEqualTo(s.value());
                    assertThat(v.device.get(s.name())).isEqualTo(s.value());
                } else if (s.labels().isEmpty()) {
                    String key = s.name().startsWith("eth.") ? s.name().substring("eth.".length()) : s.name();
                    assertThat(v.device.get(key)).as(key).isEqualTo(s.value());
                }
                checked++;
            }
            assertThat(checked).isGreaterThan(100);
            assertThat(scrape.value("ernic_refused_total{cause=\"test-device-cause\"}")).isEqualTo(1);
            assertThat(scrape.value("ernic_vfio_refused_total{cause=\"test vfio cause\"}")).isEqualTo(1);
        }
    }
}
