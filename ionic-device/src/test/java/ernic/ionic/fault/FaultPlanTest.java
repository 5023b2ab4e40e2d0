package ernic.ionic.fault;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

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

    @Test
    void badSpecsAreClear() {
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost")).hasMessageContaining("KIND:PATTERN");
        assertThatThrownBy(() -> FaultPlan.parse("disk-full:every=2")).hasMessageContaining("unknown kind 'disk-full'");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:every=0")).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:every=x")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:burst=5/3")).hasMessageContaining("K <= M");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:sometimes")).hasMessageContaining("unknown pattern");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:from=3,every=2")).hasMessageContaining("count=C");
        assertThatThrownBy(() -> FaultPlan.parse("rx-lost:seq=0")).hasMessageContaining("at least 1");
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
