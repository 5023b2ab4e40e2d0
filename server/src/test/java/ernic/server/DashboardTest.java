package ernic.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Cq;
import ernic.model.rdma.RdmaVerbs;
import ernic.server.metrics.MetricsEndpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/grafana-ernic.json queries only what a server exports: every metric name in its queries (panels and
 * template variables) is in a live scrape of a mesh manager with one worker and a QP, so the per-peer and per-QP
 * series exist.
 */
class DashboardTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path tmp;

    static final Path DASHBOARD = Path.of("..", "docs", "grafana-ernic.json");
    final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    @Test
    void everyQueryNamesAnExportedMetric() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path dir = Files.createTempDirectory(tmp, "ernic-dashboard");
        ErnicServer manager = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("m.sock").toString())
                .withMesh("tcp:manager:listen:" + port, null));
        open.add(manager);
        MetricsEndpoint endpoint = manager.startMetrics(MetricsEndpoint.Address.parse("0"));
        open.add(endpoint);
        open.add(ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("w.sock").toString())
                .withMesh("tcp:worker:localhost:" + port, null)));

        // A QP, so the per-QP family has a member.
        IonicDriverModel drv = IonicDriverModel.connect(manager.vfioUser().socketPath());
        open.add(drv);
        RdmaVerbs v = RdmaVerbs.open(drv);
        Cq cq = v.createCq(6);
        v.createQp(RdmaVerbs.RC, cq, cq, 5, 5, 8, 0);

        Scrape scrape = Scrape.of(endpoint.port());
        for (int i = 0; i < 200 && !scrape.names().contains("ernic_mesh_peer_sent_bytes_total"); i++) {
            Thread.sleep(50); // the worker registers with the manager
            scrape = Scrape.of(endpoint.port());
        }
        Set<String> exported = scrape.names();
        assertThat(exported).contains("ernic_mesh_peer_sent_bytes_total", "ernic_mesh_node_protocol_errors_total");

        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        List<String> queries = new ArrayList<>();
        dashboard.findValues("expr").forEach(e -> queries.add(e.asText()));
        dashboard.path("templating").findValues("definition").forEach(e -> queries.add(e.asText()));
        assertThat(queries).hasSizeGreaterThan(10);
        Set<String> queried = new TreeSet<>();
        Pattern metric = Pattern.compile("\\bernic_[a-z0-9_]+");
        for (String q : queries) {
            Matcher m = metric.matcher(q);
            int found = 0;
            while (m.find()) {
                queried.add(m.group());
                found++;
            }
            assertThat(found).as("a query that names no ernic metric: " + q).isPositive();
        }
        assertThat(exported).containsAll(queried);
    }
}
