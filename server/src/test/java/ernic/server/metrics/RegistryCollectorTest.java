package ernic.server.metrics;

import ernic.counters.CounterRegistry.Sample;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Names, types, units and the family bound of the registry's Prometheus view. */
class RegistryCollectorTest {
    static String text(List<Sample> samples) throws IOException {
        MetricSnapshots s = RegistryCollector.snapshots(samples, 0);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, s);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void namesFollowThePrometheusConventions() {
        assertThat(PrometheusNames.of("rdma.sq.wqes")).isEqualTo("ernic_rdma_sq_wqes");
        assertThat(PrometheusNames.of("rdma.hw.tx_send_bytes")).isEqualTo("ernic_rdma_hw_tx_send_bytes");
        assertThat(PrometheusNames.of("mesh.peer.bytesSent")).isEqualTo("ernic_mesh_peer_sent_bytes");
        assertThat(PrometheusNames.of("rdma.remote.heldBytes")).isEqualTo("ernic_rdma_remote_held_bytes");
        assertThat(PrometheusNames.of("mesh.node.refusedHandshakes")).isEqualTo("ernic_mesh_node_refused_handshakes");
        assertThat(PrometheusNames.of("eth.port.octets_tx_total")).isEqualTo("ernic_eth_port_octets_tx");
        assertThat(PrometheusNames.of("fault.rx-lost.injected")).isEqualTo("ernic_fault_rx_lost_injected");
    }

    @Test
    void countersGetTotalGaugesDoNotAndBytesHaveTheirUnit() throws IOException {
        String t = text(List.of(new Sample("rdma.hw.tx_send_bytes", Map.of(), 4096),
                new Sample("rdma.qps", Map.of(), 2, true),
                new Sample("rdma.hw.qp.tx_send_reqs", Map.of("qp", "7"), 5)));
        assertThat(t).contains("# TYPE ernic_rdma_hw_tx_send_bytes_total counter\n")
                .contains("\nernic_rdma_hw_tx_send_bytes_total 4096.0\n")
                .contains("# TYPE ernic_rdma_qps gauge\n").contains("\nernic_rdma_qps 2.0\n")
                .contains("\nernic_rdma_hw_qp_tx_send_reqs_total{qp=\"7\"} 5.0\n")
                .contains("\nernic_metrics_series_omitted 0.0\n").contains("\nernic_metrics_scrape_timeouts_total 0.0\n");
    }

    @Test
    void aFamilyShowsItsLowestIdsUpToTheBoundAndCountsTheRest() throws IOException {
        List<Sample> samples = new ArrayList<>();
        for (int qp = RegistryCollector.MAX_MEMBERS + 43; qp >= 0; qp--) { // 300 QPs, two counters each
            samples.add(new Sample("rdma.hw.qp.tx_send_reqs", Map.of("qp", Integer.toString(qp)), qp));
            samples.add(new Sample("rdma.hw.qp.tx_send_bytes", Map.of("qp", Integer.toString(qp)), qp));
        }
        String t = text(samples);
        assertThat(t).contains("ernic_rdma_hw_qp_tx_send_reqs_total{qp=\"0\"} 0.0")
                .contains("ernic_rdma_hw_qp_tx_send_reqs_total{qp=\"255\"} 255.0")
                .doesNotContain("{qp=\"256\"}").doesNotContain("{qp=\"299\"}")
                .contains("ernic_metrics_series_omitted 88.0");
    }

    @Test
    void aClashKeepsTheFirstValueAndTheScrape() throws IOException {
        String t = text(List.of(new Sample("rdma.a_b", Map.of(), 1), new Sample("rdma.a.b", Map.of(), 2),
                new Sample("rdma.a.b", Map.of(), 3, true)));
        assertThat(t).contains("ernic_rdma_a_b_total 1.0").doesNotContain("ernic_rdma_a_b_total 2")
                .doesNotContain("ernic_rdma_a_b 3");
    }
}
