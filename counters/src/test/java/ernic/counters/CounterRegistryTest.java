package ernic.counters;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CounterRegistryTest {
    enum Q implements Counter {
        WQES("sq.wqes"), BYTES("bytes");

        private final String key;

        Q(String key) {
            this.key = key;
        }

        @Override
        public String key() {
            return key;
        }
    }

    @Test
    void singlesAndFamiliesAreNamedByPrefixAndLabelled() {
        CounterRegistry r = new CounterRegistry();
        Counters<Q> device = new Counters<>(Q.class);
        Counters<Q> qp7 = new Counters<>(Q.class);
        device.add(Q.BYTES, 4096);
        device.inc(Q.WQES);
        qp7.inc(Q.WQES);
        r.register("rdma.", device);
        Map<String, Counters<Q>> qps = new TreeMap<>(Map.of("7", qp7));
        r.registerFamily("rdma.qp.", "qp", () -> qps);

        assertThat(r.snapshot()).containsExactly(
                new CounterRegistry.Sample("rdma.sq.wqes", Map.of(), 1),
                new CounterRegistry.Sample("rdma.bytes", Map.of(), 4096),
                new CounterRegistry.Sample("rdma.qp.sq.wqes", Map.of("qp", "7"), 1),
                new CounterRegistry.Sample("rdma.qp.bytes", Map.of("qp", "7"), 0));
        assertThat(r.totals()).containsExactly(Map.entry("rdma.sq.wqes", 1L), Map.entry("rdma.bytes", 4096L));

        qps.clear(); // the QP went away: so did its counters
        assertThat(r.snapshot()).hasSize(2);
    }

    enum Held implements Counter {
        QPS;

        @Override
        public boolean gauge() {
            return true;
        }
    }

    @Test
    void aCounterThatSaysGaugeIsSampledAsAGauge() {
        CounterRegistry r = new CounterRegistry();
        Counters<Held> held = new Counters<>(Held.class);
        held.set(Held.QPS, 2);
        r.register("rdma.", held);
        assertThat(r.snapshot()).containsExactly(new CounterRegistry.Sample("rdma.qps", Map.of(), 2, true));
    }

    @Test
    void gaugesAreReadAtEachSnapshotAndNotReset() {
        CounterRegistry r = new CounterRegistry();
        long[] inUse = {3};
        r.registerGauge("rdma.qps", () -> inUse[0]);
        assertThat(r.snapshot()).containsExactly(new CounterRegistry.Sample("rdma.qps", Map.of(), 3, true));
        inUse[0] = 1;
        r.reset("");
        assertThat(r.totals()).containsExactly(Map.entry("rdma.qps", 1L));
    }

    @Test
    void resetZeroesTheSetsUnderAPrefixOnly() {
        CounterRegistry r = new CounterRegistry();
        Counters<Q> eth = new Counters<>(Q.class), rdma = new Counters<>(Q.class);
        eth.inc(Q.WQES);
        rdma.inc(Q.WQES);
        r.register("eth.", eth);
        r.register("rdma.", rdma);
        r.reset("rdma.");
        assertThat(eth.get(Q.WQES)).isOne();
        assertThat(rdma.get(Q.WQES)).isZero();
        r.reset("");
        assertThat(eth.get(Q.WQES)).isZero();
    }

    @Test
    void aPrefixMustEndWithADot() {
        assertThatThrownBy(() -> new CounterRegistry().register("rdma", new Counters<>(Q.class)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDuplicateFullNameIsRefusedAndNamed() {
        CounterRegistry r = new CounterRegistry();
        r.register("rdma.", new Counters<>(Q.class));
        assertThatThrownBy(() -> r.register("rdma.", new Counters<>(Q.class)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.sq.wqes");
        assertThatThrownBy(() -> r.registerGauge("rdma.bytes", () -> 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.bytes");
        // one prefix for several sets is fine while no full name repeats
        r.register("rdma.", new Counters<>(Held.class));
        r.register("rdma.sq.", new Counters<>(Held.class));
        assertThat(r.totals()).containsOnlyKeys("rdma.sq.wqes", "rdma.bytes", "rdma.qps", "rdma.sq.qps");
    }

    @Test
    void aFamilyPrefixMayNotCollideWithASetsNames() {
        CounterRegistry r = new CounterRegistry();
        r.register("rdma.", new Counters<>(Q.class)); // rdma.sq.wqes
        assertThatThrownBy(() -> r.registerFamily("rdma.sq.", "qp", Map::of))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.sq.wqes");
        r.registerFamily("rdma.qp.", "qp", Map::of);
        assertThatThrownBy(() -> r.registerFamily("rdma.qp.", "qp", Map::of))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.qp.");
        assertThatThrownBy(() -> r.register("rdma.qp.", new Counters<>(Held.class)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.qp.qps");
        assertThatThrownBy(() -> r.registerGauge("rdma.qp.held", () -> 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rdma.qp.held");
    }

    @Test
    void causeCountersAreLabelledFlattenedNotResetAndReserveTheirName() {
        CounterRegistry r = new CounterRegistry();
        OncePerCause refused = new OncePerCause(org.slf4j.LoggerFactory.getLogger("test"));
        r.registerCauses("refused", "cause", refused);
        refused.warn("db-page", "doorbell page {}", 3);
        refused.warn("db-page", "doorbell page {}", 4);
        refused.warn("bar0", "read-only");
        assertThat(r.snapshot()).containsExactly(
                new CounterRegistry.Sample("refused", Map.of("cause", "bar0"), 1),
                new CounterRegistry.Sample("refused", Map.of("cause", "db-page"), 2));
        r.reset("");
        assertThat(r.totals()).containsExactly(Map.entry("refused.bar0", 1L), Map.entry("refused.db-page", 2L));
        assertThatThrownBy(() -> r.registerGauge("refused.total", () -> 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("refused.total");
        assertThatThrownBy(() -> r.registerCauses("refused", "cause", refused))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("refused");
    }

    @Test
    void aSuffixNamesSeveralSetsOfOneEnum() {
        CounterRegistry r = new CounterRegistry();
        r.register("fault.", new Counters<>(Q.class), ".occurrences");
        r.register("fault.", new Counters<>(Q.class), ".injected");
        assertThat(r.totals()).containsOnlyKeys("fault.sq.wqes.occurrences", "fault.bytes.occurrences",
                "fault.sq.wqes.injected", "fault.bytes.injected");
    }
}
