package ernic.ionic;

import ernic.counters.CounterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Map;

import static ernic.model.rdma.RdmaVerbs.QP_PRIVILEGED;
import static ernic.model.rdma.RdmaVerbs.UD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The device's counter sets in a registry, and the stats-file keys built from them; the RDMA bring-up and admin
 * commands come from the driver model on a {@link ModelGuest}.
 */
class CounterRegistrationTest extends RawVerbsTest {
    final CounterRegistry registry = new CounterRegistry();

    @BeforeEach
    void setUp() throws IOException {
        startGuest(16 << 20);
        openRdma();
        dev.registerCounters(registry);
    }

    @Test
    void setsRegisterUnderTheirPrefixesAndTheStatsKeysStay() throws IOException {
        long cq = guest.alloc(32L * 1024), sq = guest.alloc(64 * 16), rq = guest.alloc(64 * 16);
        assertThat(rdma.createCq(5, 2, cq, 10).status()).isZero();
        assertThat(rdma.createQp(1, UD, QP_PRIVILEGED, 5, sq, 4, rq, 4).status()).isZero();

        Map<String, Long> totals = registry.totals();
        assertThat(totals).containsKeys("eth.lif.rx_ucast_packets", "eth.port.frames_tx_ok", "eth.device.tx_sent",
                "devcmd.executed", "rdma.admin.commands", "rdma.hw.tx_send_reqs");
        assertThat(totals).containsEntry("rdma.qps", 1L).containsEntry("rdma.admin.commands", 2L)
                .containsEntry("rdma.hw.admin_commands", 2L);
        assertThat(registry.snapshot()).anySatisfy(s -> {
            assertThat(s.name()).isEqualTo("rdma.hw.qp.tx_send_reqs");
            assertThat(s.labels()).containsEntry("qp", "1");
        });

        // The stats file's keys: the registry's, without eth.
        Map<String, Long> stats = dev.counters();
        assertThat(stats).containsKeys("lif.rx_ucast_packets", "port.frames_tx_ok", "device.tx_sent",
                "devcmd.executed", "rdma.admin.commands", "rdma.admin.errors", "rdma.events", "rdma.qps", "rdma.cqs",
                "rdma.mrs", "rdma.ahs", "rdma.hw.refusals", "intr.fired");
        assertThat(stats.keySet()).noneMatch(k -> k.startsWith("eth.") || k.startsWith("rdma.hw.qp."));
        assertThat(stats.get("devcmd.executed")).isPositive();
    }

    @Test
    void faultsInterruptsAndRefusalsAreInTheRegistryUnderTheirStatsNames() {
        dev.refusals().refuse("test-cause", "a refusal for the test");
        Map<String, Long> totals = registry.totals();
        assertThat(totals).containsKeys("intr.fired", "intr.latched", "fault.tx-drop.occurrences",
                "fault.tx-drop.injected", "fault.rdma-latency.occurrences").containsEntry("refused.test-cause", 1L);
        assertThat(registry.snapshot()).contains(
                new CounterRegistry.Sample("refused", Map.of("cause", "test-cause"), 1));
        // The device's map is its part of a snapshot, whatever registry the snapshot came from.
        assertThat(dev.counters(dev.snapshot(registry))).isEqualTo(dev.counters());
        dev.reset();
        assertThat(registry.totals()).containsEntry("refused.test-cause", 1L); // since the server started
    }

    @Test
    void aSecondRegistrationOfTheDeviceIsRefused() {
        assertThatThrownBy(() -> dev.registerCounters(registry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("eth.lif.");
    }

    @Test
    void powerOnZeroesEverySet() throws IOException {
        assertThat(rdma.createCq(5, 2, guest.alloc(32L * 1024), 10).status()).isZero();
        dev.reset();
        assertThat(registry.totals()).allSatisfy((k, v) -> {
            if (!k.equals("rdma.hw.refusals")) { // refusals span sessions (see docs/monitoring.md)
                assertThat(v).as(k).isZero();
            }
        });
    }
}
