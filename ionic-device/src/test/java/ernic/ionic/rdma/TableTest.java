package ernic.ionic.rdma;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The table's one bounds check: every id outside [first, count) reads as nothing and cannot be written. */
class TableTest {
    @Test
    void outOfRangeIdsAreNothing() {
        Table<String> t = new Table<>(1, 4);
        t.put(1, "a");
        t.put(3, "c");
        assertThat(t.count()).isEqualTo(4);
        for (int id : new int[] {Integer.MIN_VALUE, -1, 0, 4, 5, Integer.MAX_VALUE}) {
            assertThat(t.get(id)).as("id %d", id).isNull();
            assertThat(t.inRange(id)).as("id %d", id).isFalse();
            t.remove(id); // nothing happens
        }
        assertThat(t.get(1)).isEqualTo("a");
        assertThat(t.get(2)).isNull();
        assertThat(t.inRange(2)).isTrue();
        assertThatThrownBy(() -> t.put(0, "x")).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.put(-1, "x")).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.put(4, "x")).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void walksWhatThereIsAndForgetsEverything() {
        Table<String> t = new Table<>(5);
        assertThat(t).isEmpty();
        t.put(0, "a");
        t.put(2, "c");
        t.put(4, "e");
        assertThat(t).containsExactly("a", "c", "e");
        t.remove(2);
        assertThat(t).containsExactly("a", "e");
        t.clear();
        assertThat(t).isEmpty();
        assertThat(t.get(0)).isNull();
    }
}
