package ernic.mesh;

import ernic.counters.Counters;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** What a node learns from its guest's source addresses, the cap, and the ageing: no sockets, a mock ticker. */
class LearnedGidsTest {
    private final MockTicker ticker = Ticker.newMockTicker();
    private final Counters<MeshCounter> counters = new Counters<>(MeshCounter.class);
    private int changes;
    private final LearnedGids learned = new LearnedGids(counters, ticker::nanoTime, () -> changes++);

    private boolean seen(String literal) {
        Gid g = Gid.parse(literal);
        return learned.seen(g.hi(), g.lo());
    }

    /** The sweep runs at most once a second: time moves in steps of a second, as the health tick sees it. */
    private void elapse(long seconds) {
        for (long s = 0; s < seconds; s++) {
            ticker.advance(1, TimeUnit.SECONDS);
            learned.tick(ticker.nanoTime());
        }
    }

    @Test
    void onlyUnicastAddressesAreLearned() {
        for (String refused : new String[]{"0.0.0.0", "0.1.2.3", "127.0.0.1", "224.0.0.251", "239.1.1.1",
                "255.255.255.255", "240.0.0.1", "::", "::1", "ff02::1", "ff05::2", "::10.0.0.1"}) {
            assertThat(seen(refused)).as(refused).isFalse();
        }
        assertThat(learned.size()).isZero();
        for (String ok : new String[]{"10.78.0.1", "169.254.3.4", "192.168.77.2", "fe80::1", "2001:db8::7"}) {
            assertThat(seen(ok)).as(ok).isTrue();
        }
        assertThat(learned.set()).containsExactly(Gid.parse("10.78.0.1"), Gid.parse("169.254.3.4"),
                Gid.parse("192.168.77.2"), Gid.parse("fe80::1"), Gid.parse("2001:db8::7"));
        assertThat(counters.get(MeshCounter.GIDS_LEARNED)).isEqualTo(5);
        // Seen again: nothing new to advertise.
        int before = changes;
        assertThat(seen("10.78.0.1")).isTrue();
        assertThat(seen("fe80::1")).isTrue();
        assertThat(changes).isEqualTo(before);
        assertThat(counters.get(MeshCounter.GIDS_LEARNED)).isEqualTo(5);
    }

    @Test
    void declaredGidsAreNotLearnedAndALearnedOneDeclaredLaterLeavesTheLearnedSet() {
        learned.declared(Set.of(Gid.parse("10.78.0.1")));
        assertThat(seen("10.78.0.1")).as("this node's, declared").isTrue();
        assertThat(learned.size()).isZero();
        assertThat(seen("10.78.0.2")).isTrue();
        learned.declared(Set.of(Gid.parse("10.78.0.1"), Gid.parse("10.78.0.2")));
        assertThat(learned.set()).isEmpty();
        assertThat(counters.get(MeshCounter.GIDS_AGED)).as("not aged: declared").isZero();
    }

    @Test
    void atMostSixtyFourAreLearnedAndTheRestAreRefusedAndCounted() {
        for (int i = 1; i <= LearnedGids.MAX; i++) {
            assertThat(seen("10.78.1." + i)).isTrue();
        }
        assertThat(learned.size()).isEqualTo(64);
        assertThat(seen("10.78.2.1")).as("the 65th").isFalse();
        assertThat(seen("10.78.2.2")).isFalse();
        assertThat(counters.get(MeshCounter.GIDS_LEARN_REFUSED)).isEqualTo(2);
        assertThat(learned.set()).doesNotContain(Gid.parse("10.78.2.1"));
        // Room again once one ages out.
        Set<Gid> keep = new HashSet<>(learned.set());
        keep.remove(Gid.parse("10.78.1.7"));
        learned.inUse(keep::contains);
        elapse(300);
        assertThat(learned.size()).isEqualTo(63);
        assertThat(seen("10.78.2.1")).isTrue();
    }

    @Test
    void aGidTheGuestStopsUsingAgesOutAfterFiveMinutes() {
        seen("10.78.0.1");
        seen("10.78.0.2");
        int before = changes;
        // 10.78.0.1 is used every minute; 10.78.0.2 never again.
        for (int minute = 0; minute < 4; minute++) {
            elapse(60);
            seen("10.78.0.1");
        }
        assertThat(learned.set()).as("four minutes").hasSize(2);
        elapse(59);
        assertThat(learned.set()).as("4:59").hasSize(2);
        elapse(1);
        assertThat(learned.set()).as("five minutes").containsExactly(Gid.parse("10.78.0.1"));
        assertThat(counters.get(MeshCounter.GIDS_AGED)).isEqualTo(1);
        assertThat(changes).as("the shrunk set is advertised").isEqualTo(before + 1);
        elapse(600);
        assertThat(learned.set()).isEmpty();
        assertThat(counters.get(MeshCounter.GIDS_AGED)).isEqualTo(2);
    }

    @Test
    void aGidALiveQpOrAhUsesNeverAgesAndAgesFiveMinutesAfterItsLastUse() {
        Set<Gid> inUse = new HashSet<>(Set.of(Gid.parse("10.78.0.1")));
        learned.inUse(inUse::contains);
        seen("10.78.0.1");
        elapse(3600);
        assertThat(learned.set()).as("an hour with a QP on it").containsExactly(Gid.parse("10.78.0.1"));
        inUse.clear(); // the QP is destroyed
        elapse(299);
        assertThat(learned.set()).hasSize(1);
        elapse(1);
        assertThat(learned.set()).isEmpty();
    }
}
