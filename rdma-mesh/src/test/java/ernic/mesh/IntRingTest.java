package ernic.mesh;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.NoSuchElementException;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IntRingTest {
    @Test
    void keepsOrderAcrossWrapsAndGrowth() {
        IntRing ring = new IntRing();
        ArrayDeque<Integer> model = new ArrayDeque<>();
        Random r = new Random(35);
        int next = 0;
        for (int step = 0; step < 20_000; step++) {
            // Grows to a few hundred, drains, grows again: the head wraps inside the array and across a doubling.
            boolean add = model.isEmpty() || r.nextInt(100) < (step % 4000 < 2000 ? 60 : 40);
            if (add) {
                ring.add(next);
                model.add(next++);
            } else {
                assertThat(ring.remove()).isEqualTo(model.remove());
            }
            assertThat(ring.size()).isEqualTo(model.size());
        }
    }

    @Test
    void anEmptyRingRefusesARemoveAndClearEmptiesIt() {
        IntRing ring = new IntRing();
        assertThatThrownBy(ring::remove).isInstanceOf(NoSuchElementException.class);
        for (int i = 0; i < 40; i++) {
            ring.add(i);
        }
        ring.clear();
        assertThat(ring.isEmpty()).isTrue();
        ring.add(7);
        assertThat(ring.remove()).isEqualTo(7);
    }
}
