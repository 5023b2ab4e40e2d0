package ernic.roce.rc;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** 24-bit PSN arithmetic: wrap-around, and order within a 2^23 window. */
class PsnTest {
    @Test
    void addWrapsAt2To24() {
        assertThat(Psn.add(0xff_fffe, 3)).isEqualTo(1);
        assertThat(Psn.add(0, -1)).isEqualTo(0xff_ffff);
    }

    @Test
    void diffIsSignedAcrossTheWrap() {
        assertThat(Psn.diff(1, 0xff_ffff)).isEqualTo(2);
        assertThat(Psn.diff(0xff_ffff, 1)).isEqualTo(-2);
        assertThat(Psn.lt(0xff_fff0, 5)).isTrue();
        assertThat(Psn.le(5, 5)).isTrue();
        assertThat(Psn.compare(5, 0xff_fff0)).isPositive();
    }

    @Test
    void halfTheSpaceAwayIsBehind() {
        assertThat(Psn.diff(Psn.WINDOW, 0)).isEqualTo(-Psn.WINDOW);
        assertThat(Psn.diff(Psn.WINDOW - 1, 0)).isEqualTo(Psn.WINDOW - 1);
    }

    @Property
    void addThenDiffGivesBackTheDistance(@ForAll @IntRange(min = 0, max = 0xff_ffff) int psn,
                                         @ForAll @IntRange(min = -(1 << 23), max = (1 << 23) - 1) int n) {
        int q = Psn.add(psn, n);
        assertThat(q).isBetween(0, Psn.MASK);
        assertThat(Psn.diff(q, psn)).isEqualTo(n);
        assertThat(Psn.compare(q, psn)).isEqualTo(Integer.signum(n));
    }
}
