package ernic.ionic.fault;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FaultPlanTest {
    private static List<Long> firing(FaultPlan plan, FaultKind kind, int events) {
        List<Long> out = new ArrayList<>();
        for (long n = 1; n <= events; n++) {
            if (plan.fire(kind)) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void patterns() {
        assertThat(firing(FaultPlan.parse("rx-lost:every=5"), FaultKind.RX_LOST, 20)).containsExactly(5L, 10L, 15L, 20L);
        assertThat(firing(FaultPlan.parse("rx-nobuf:from=10,count=3"), FaultKind.RX_NOBUF, 20)).containsExactly(10L, 11L, 12L);
        assertThat(firing(FaultPlan.parse("rx-nobuf:from=18"), FaultKind.RX_NOBUF, 20)).containsExactly(18L, 19L, 20L);
        assertThat(firing(FaultPlan.parse("tx-drop:burst=2/10"), FaultKind.TX_DROP, 25)).containsExactly(1L, 2L, 11L, 12L, 21L, 22L);
        assertThat(firing(FaultPlan.parse("stats-vals:seq=1,4,9"), FaultKind.STATS_VALS, 20)).containsExactly(1L, 4L, 9L);
    }

    @Test
    void kindsAreIndependentAndPatternsCombine() {
        FaultPlan plan = FaultPlan.parse("rx-lost:seq=2", "rx-lost:seq=4", "tx-drop:every=2");
        assertThat(firing(plan, FaultKind.RX_LOST, 5)).containsExactly(2L, 4L);
        assertThat(firing(plan, FaultKind.STATS_VALS, 5)).isEmpty();
        assertThat(plan.occurrences(FaultKind.RX_LOST)).isEqualTo(5);
        assertThat(plan.injectedCount(FaultKind.RX_LOST)).isEqualTo(2);
        assertThat(plan.armed(FaultKind.TX_DROP)).isTrue();
        assertThat(plan.armed(FaultKind.RX_NOBUF)).isFalse();
        plan.reset();
        assertThat(plan.occurrences(FaultKind.RX_LOST)).isZero();
        assertThat(firing(plan, FaultKind.RX_LOST, 5)).containsExactly(2L, 4L);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            rx-lost                 | KIND:PATTERN
            disk-full:every=2       | unknown kind 'disk-full'
            rx-lost:every=0         | at least 1
            rx-lost:every=x         | not a number
            rx-lost:burst=5/3       | K <= M
            rx-lost:sometimes       | unknown pattern
            rx-lost:from=3,every=2  | count=C
            rx-lost:seq=0           | at least 1
            """)
    void badSpecsAreClear(String spec, String message) {
        assertThatThrownBy(() -> FaultPlan.parse(spec)).hasMessageContaining(message);
    }

    /** Every refusal of the parser: one line, naming the value and what is wrong with it. */
    @Test
    void everyRefusalIsOneLineNamingTheValue() {
        String[][] cases = {
                {"rdma-rnr", "expected KIND:PATTERN"},
                {"rdma-nak:every=2", "unknown kind 'rdma-nak' (stats-vals, rx-lost, rx-nobuf, tx-drop, roce-drop,"
                        + " roce-duplicate, roce-reorder, roce-corrupt, rdma-rem-access, rdma-rnr, rdma-retry-exc,"
                        + " rdma-latency)"},
                {"rdma-rnr:", "no pattern after the kind"},
                {"rdma-rnr:every=2,,qp=5", "an empty item (a comma too many)"},
                {"rdma-rnr:every=2,", "an empty item"},
                {"rdma-rnr:sometimes", "unknown pattern 'sometimes'"},
                {"rdma-rnr:often=3", "unknown pattern 'often=3'"},
                {"rdma-rnr:every=2,3", "every= takes one value, and '3' follows it"},
                {"rdma-rnr:every=2,every=3", "every= is given twice"},
                {"rdma-rnr:qp=5,qp=6", "qp= is given twice"},
                {"rdma-rnr:every=", "every= needs a value"},
                {"rdma-rnr:every=x", "every=x: not a number"},
                {"rdma-rnr:every=0", "every=0: must be at least 1"},
                {"rdma-rnr:every=2,seq=3", "one of every=N, from=N[,count=C], burst=K/M and seq=A,B,... at most, not"
                        + " every= and seq="},
                {"rdma-rnr:count=3", "count=C goes with from=N"},
                {"rdma-rnr:from=0", "from=0,count=" + Long.MAX_VALUE + ": both must be at least 1"},
                {"rdma-rnr:from=2,count=0", "from=2,count=0: both must be at least 1"},
                {"rdma-rnr:burst=3", "burst=3: needs K/M"},
                {"rdma-rnr:burst=5/3", "burst=5/3: needs 1 <= K <= M"},
                {"rdma-rnr:burst=1/x", "burst=x: not a number"},
                {"rdma-rnr:seq=0,4", "seq: needs one or more occurrence numbers, each at least 1"},
                {"rdma-rnr:seq=2,y", "seq=y: not a number"},
                {"rx-lost:qp=5", "qp= is for the rdma-* kinds only"},
                {"rdma-rnr:peer=10.0.0.1", "peer= is for the roce-* kinds only"},
                {"roce-drop:peer=10.0.0", "peer=10.0.0: not an IPv4 or IPv6 address"},
                {"rdma-rnr:qp=1", "qp=1: a QP number is 2 to 16777215 (0 and 1 are the special QPs, never RC)"},
                {"rdma-rnr:qp=5,16777216", "qp=16777216: a QP number is 2 to 16777215"},
                {"rdma-rnr:qp=five", "qp=five: not a number"},
                {"rdma-rnr:frac=1.5", "frac=1.5: must be more than 0 and at most 1"},
                {"rdma-rnr:frac=0", "frac=0: must be more than 0 and at most 1"},
                {"rdma-rnr:frac=NaN", "frac=NaN: not a decimal number (such as 0.01)"},
                {"rdma-rnr:frac=1e-3", "frac=1e-3: not a decimal number"},
                {"rdma-rnr:frac=-0.5", "frac=-0.5: not a decimal number"},
                {"rdma-rnr:seed=3", "seed=S goes with frac=F"},
                {"rdma-rnr:frac=0.5,seed=x", "seed=x: not a number"},
                {"rdma-latency:every=1", "rdma-latency needs us=N, the time to add in microseconds"},
                {"rdma-latency:us=0", "us=0: must be 1 to 10000000 (10 s)"},
                {"rdma-latency:us=10000001", "us=10000001: must be 1 to 10000000 (10 s)"},
                {"rdma-latency:us=1ms", "us=1ms: not a number"},
                {"rdma-rnr:us=500", "us= is for rdma-latency only"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> FaultPlan.parse(c[0])).as(c[0]).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("--inject " + c[0] + ": ").hasMessageContaining(c[1])
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        }
    }

    @Test
    void roceValuesAreLimitedToTheirPeersAndNumberedAmongThem() {
        FaultPlan plan = FaultPlan.parse("roce-duplicate:every=2,peer=10.0.0.2,fe80::1");
        byte[] v4 = ernic.common.IpAddress.parse("10.0.0.2").gid(), v6 = ernic.common.IpAddress.parse("fe80::1").gid();
        byte[] other = ernic.common.IpAddress.parse("10.0.0.3").gid();
        byte[][] peers = {v4, other, v6, other, v4, v6};
        List<Integer> fired = new ArrayList<>();
        for (int i = 0; i < peers.length; i++) {
            if (plan.check(FaultKind.ROCE_DUPLICATE, ernic.common.IpAddress.high(peers[i]),
                    ernic.common.IpAddress.low(peers[i]))) {
                fired.add(i + 1);
            }
        }
        // The listed peers' packets are events 1, 3, 5 and 6: their 2nd and 4th fire.
        assertThat(fired).containsExactly(3, 6);
        assertThat(plan.occurrences(FaultKind.ROCE_DUPLICATE)).isEqualTo(6);
    }

    @Test
    void rdmaValuesAreLimitedToTheirQpsAndNumberedAmongThem() {
        FaultPlan plan = FaultPlan.parse("rdma-rem-access:seq=2,3,qp=9,5", "rdma-rem-access:every=4");
        List<Integer> fired = new ArrayList<>();
        int[] qps = {5, 7, 9, 7, 5, 9, 7, 7};
        for (int i = 0; i < qps.length; i++) {
            if (plan.check(FaultKind.RDMA_REM_ACCESS, qps[i])) {
                fired.add(i + 1);
            }
        }
        // The first value sees QPs 5 and 9 only: their 2nd and 3rd operations are events 3 and 5; the second
        // value sees all: events 4 and 8.
        assertThat(fired).containsExactly(3, 4, 5, 8);
        assertThat(plan.occurrences(FaultKind.RDMA_REM_ACCESS)).isEqualTo(8);
        assertThat(plan.check(FaultKind.RDMA_REM_ACCESS)).as("an event of no QP: only values for all QPs see it")
                .isFalse();
        plan.reset();
        assertThat(plan.check(FaultKind.RDMA_REM_ACCESS, 7)).isFalse();
        assertThat(plan.check(FaultKind.RDMA_REM_ACCESS, 5)).isFalse();
        assertThat(plan.check(FaultKind.RDMA_REM_ACCESS, 5)).as("numbering starts over at a reset").isTrue();
    }

    @Test
    void latencyValuesCarryTheirTimeAndTheLongestWins() {
        FaultPlan plan = FaultPlan.parse("rdma-latency:us=500", "rdma-latency:us=2000,every=2,qp=4");
        assertThat(plan.check(FaultKind.RDMA_LATENCY, 4)).isTrue();
        assertThat(plan.delayNanos()).isEqualTo(500_000);
        assertThat(plan.check(FaultKind.RDMA_LATENCY, 4)).isTrue();
        assertThat(plan.delayNanos()).isEqualTo(2_000_000);
        assertThat(plan.check(FaultKind.RDMA_LATENCY, 6)).isTrue();
        assertThat(plan.delayNanos()).isEqualTo(500_000);
        assertThat(FaultPlan.parse("rdma-latency:us=10000000").check(FaultKind.RDMA_LATENCY, 2)).isTrue();
        assertThat(FaultPlan.none().check(FaultKind.RDMA_LATENCY, 2)).isFalse();
    }

    @Test
    void aBarePatternMeansEveryOccurrenceAndSpacesAreAllowed() {
        assertThat(firing(FaultPlan.parse("rdma-retry-exc:qp=3"), FaultKind.RDMA_RETRY_EXC, 3)).isEmpty();
        FaultPlan plan = FaultPlan.parse("rdma-retry-exc: qp = 3 , 4");
        assertThat(plan.check(FaultKind.RDMA_RETRY_EXC, 3)).isTrue();
        assertThat(plan.check(FaultKind.RDMA_RETRY_EXC, 4)).isTrue();
        assertThat(plan.check(FaultKind.RDMA_RETRY_EXC, 5)).isFalse();
        assertThat(firing(FaultPlan.parse("tx-drop:seq=2, 5"), FaultKind.TX_DROP, 6)).containsExactly(2L, 5L);
        assertThat(firing(FaultPlan.parse("rx-lost:frac=1"), FaultKind.RX_LOST, 4)).containsExactly(1L, 2L, 3L, 4L);
        assertThat(FaultKind.RDMA_REM_ACCESS.key()).isEqualTo("rdma-rem-access");
        assertThat(FaultKind.RDMA_RETRY_EXC.key()).isEqualTo("rdma-retry-exc");
        assertThat(FaultKind.TX_DROP.rdma()).isFalse();
        assertThat(FaultKind.RDMA_LATENCY.rdma()).isTrue();
    }

    @Test
    void aFractionIsSeededAndNeverHangsOnTime() {
        List<Long> a = firing(FaultPlan.parse("rx-lost:frac=0.25"), FaultKind.RX_LOST, 20_000);
        assertThat(a).as("the default seed: the same every run").isEqualTo(
                firing(FaultPlan.parse("rx-lost:frac=0.25,seed=" + FaultPlan.DEFAULT_SEED), FaultKind.RX_LOST, 20_000));
        assertThat(a.size()).as("about a quarter").isBetween(4_700, 5_300);
        List<Long> b = firing(FaultPlan.parse("rx-lost:frac=0.25,seed=99"), FaultKind.RX_LOST, 20_000);
        assertThat(b).isNotEqualTo(a);
        assertThat(b).isEqualTo(firing(FaultPlan.parse("rx-lost:frac=0.25,seed=99"), FaultKind.RX_LOST, 20_000));
        // Of the occurrences a counting item picks: every=2 with frac=0.5 is about one in four, all even.
        List<Long> c = firing(FaultPlan.parse("tx-drop:every=2,frac=.5,seed=3"), FaultKind.TX_DROP, 20_000);
        assertThat(c).allMatch(n -> n % 2 == 0);
        assertThat(c.size()).isBetween(4_700, 5_300);
        // Two kinds with one seed do not fail together.
        FaultPlan two = FaultPlan.parse("rdma-rnr:frac=0.5,seed=4", "rdma-retry-exc:frac=0.5,seed=4");
        int same = 0;
        for (int i = 0; i < 1000; i++) {
            if (two.check(FaultKind.RDMA_RNR, 2) == two.check(FaultKind.RDMA_RETRY_EXC, 2)) {
                same++;
            }
        }
        assertThat(same).isBetween(400, 600);
    }

    @Property
    void everyNFiresExactlyFloorEventsOverN(@ForAll @IntRange(min = 1, max = 50) int n,
                                            @ForAll @IntRange(min = 0, max = 500) int events) {
        FaultPlan plan = FaultPlan.parse("tx-drop:every=" + n);
        assertThat(firing(plan, FaultKind.TX_DROP, events)).hasSize(events / n);
    }

    @Property
    void burstFiresKOfEveryM(@ForAll @IntRange(min = 1, max = 20) int k, @ForAll @IntRange(min = 0, max = 20) int extra,
                             @ForAll @IntRange(min = 1, max = 10) int periods) {
        int m = k + extra;
        FaultPlan plan = FaultPlan.parse("rx-lost:burst=" + k + "/" + m);
        assertThat(firing(plan, FaultKind.RX_LOST, m * periods)).hasSize(k * periods);
    }

    @Property
    void runFiresCountFromStart(@ForAll @IntRange(min = 1, max = 100) int from, @ForAll @IntRange(min = 1, max = 100) int count) {
        FaultPlan plan = FaultPlan.parse("rx-nobuf:from=" + from + ",count=" + count);
        List<Long> f = firing(plan, FaultKind.RX_NOBUF, 300);
        assertThat(f).hasSize(count);
        assertThat(f.get(0)).isEqualTo(from);
        assertThat(f.get(count - 1)).isEqualTo(from + count - 1);
    }

    @Property
    void samePlanSameFaults(@ForAll @IntRange(min = 1, max = 9) int n) {
        String spec = "tx-drop:every=" + n;
        assertThat(firing(FaultPlan.parse(spec), FaultKind.TX_DROP, 100))
                .isEqualTo(firing(FaultPlan.parse(spec), FaultKind.TX_DROP, 100));
    }
}
