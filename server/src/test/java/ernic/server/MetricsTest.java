package ernic.server;

import ernic.counters.CounterRegistry;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import ernic.server.metrics.MetricsEndpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * {@code --metrics} on a live server: the driver model runs RDMA over the vfio-user socket while the endpoint is
 * scraped with java.net.http; the counters move and {@code promtool check metrics} accepts the scrape.
 */
class MetricsTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    java.nio.file.Path tmp;

    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

    ErnicServer server;
    MetricsEndpoint endpoint;
    IonicDriverModel drv;
    RdmaVerbs v;

    @BeforeEach
    void start() throws Exception {
        server = ErnicServer.start(ErnicServer.Settings.ionic(tmp.resolve("ernic.sock").toString()));
        endpoint = server.startMetrics(MetricsEndpoint.Address.parse("localhost:0"));
        drv = IonicDriverModel.connect(server.vfioUser().socketPath());
        v = RdmaVerbs.open(drv);
    }

    @AfterEach
    void stop() {
        drv.close();
        endpoint.close();
        server.close();
    }

    /** Two connected RC QPs; {@code n} WRITEs of 4 KiB from one to the other, each completed. */
    void writes(int n) throws Exception {
        Cq cqA = v.createCq(6), cqB = v.createCq(6);
        Qp a = v.createQp(RC, cqA, cqA, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ);
        Qp b = v.createQp(RC, cqB, cqB, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ);
        v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
        Buffer bufA = v.buffer(2 * 4096, true), bufB = v.buffer(2 * 4096, true);
        Mr mrA = v.regMr(bufA, 0, bufA.length, ALL), mrB = v.regMr(bufB, 0, bufB.length, ALL);
        SendWr wr = new SendWr();
        Wc wc = new Wc();
        for (int i = 0; i < n; i++) {
            wr.reset().sge(mrA.va(), 4096, mrA.lkey());
            wr.opcode = WRITE;
            wr.remoteVa = mrB.va();
            wr.rkey = mrB.rkey();
            wr.wrId = i;
            v.postSend(a, wr);
            assertThat(v.pollWait(cqA, wc, 5000)).isTrue();
            assertThat(wc.status).isEqualTo(STS_OK);
        }
    }

    @Test
    void countersMoveWithTheWorkloadAndArePrometheusShaped() throws Exception {
        Scrape before = Scrape.of(endpoint.port());
        writes(3);
        Scrape after = Scrape.of(endpoint.port());

        assertThat(after.value("ernic_rdma_hw_tx_rdma_write_reqs_total")
                - before.value("ernic_rdma_hw_tx_rdma_write_reqs_total")).isEqualTo(3);
        assertThat(after.value("ernic_rdma_hw_tx_rdma_write_bytes_total")
                - before.value("ernic_rdma_hw_tx_rdma_write_bytes_total")).isEqualTo(3 * 4096);
        assertThat(after.value("ernic_vfio_region_writes_total")).isGreaterThan(before.value("ernic_vfio_region_writes_total"));
        // Objects in use are gauges; per-QP counters carry the qp label.
        assertThat(after.types()).containsEntry("ernic_rdma_qps", "gauge").containsEntry("ernic_rdma_hw_tx_send_reqs_total", "counter")
                .containsEntry("ernic_rdma_remote_held_bytes", "gauge");
        assertThat(after.value("ernic_rdma_qps")).isEqualTo(2);
        assertThat(after.series().keySet()).anySatisfy(s ->
                assertThat(s).matches("ernic_rdma_hw_qp_tx_rdma_write_reqs_total\\{qp=\"\\d+\"} *"));
        assertThat(after.series().entrySet()).anySatisfy(e -> {
            assertThat(e.getKey()).startsWith("ernic_rdma_hw_qp_tx_rdma_write_reqs_total{");
            assertThat(e.getValue()).isEqualTo(3.0);
        });
        assertThat(after.value("ernic_metrics_series_omitted")).isZero();
        assertThat(after.names()).allMatch(n -> n.startsWith("ernic_"));
    }

    @Test
    void everyRegistryValueIsOneSeries() throws Exception {
        writes(1);
        List<CounterRegistry.Sample> samples = server.vfioUser().eventLoop()
                .submit(() -> server.counterRegistry().snapshot()).get(5, TimeUnit.SECONDS);
        Scrape s = Scrape.of(endpoint.port());
        // No two registry names share a Prometheus series: the endpoint's own two and client_connected come on top.
        assertThat(s.series()).hasSize(samples.size() + 3);
        assertThat(s.value("ernic_vfio_client_connected")).isEqualTo(1);
    }

    @Test
    void promtoolAcceptsALiveScrape() throws Exception {
        File promtool = new File("/usr/bin/promtool");
        if (!promtool.canExecute()) {
            assertThat(System.getenv("CI")).as("CI installs promtool (Debian's prometheus package; .ci/run)")
                    .isNotEqualTo("true");
            assumeThat(promtool.canExecute()).as("promtool is not installed: apt-get install prometheus").isTrue();
        }
        writes(1);
        java.nio.file.Path file = Files.createTempFile(tmp, "ernic-scrape", ".txt");
        Files.writeString(file, Scrape.of(endpoint.port()).text());
        Process p = new ProcessBuilder(promtool.getPath(), "check", "metrics")
                .redirectInput(file.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).as("promtool's lint findings").isBlank();
    }
}
