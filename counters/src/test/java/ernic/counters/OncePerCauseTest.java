package ernic.counters;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

class OncePerCauseTest {
    @Test
    void countsEveryOccurrenceByCause() {
        OncePerCause once = new OncePerCause(LoggerFactory.getLogger("test"));
        for (int i = 0; i < 5; i++) {
            once.warn("a", "detail {}", i);
        }
        once.warn("b", "other");
        assertThat(once.count("a")).isEqualTo(5);
        assertThat(once.count("c")).isZero();
        assertThat(once.total()).isEqualTo(6);
        assertThat(once.counts()).containsExactly(java.util.Map.entry("a", 5L), java.util.Map.entry("b", 1L));
    }
}
