package ernic.ionic.rdma;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * One kind of RDMA object of the LIF (EQs, AQs, CQs, QPs, MRs, AHs) by id: the one place an id from the guest
 * or a peer is checked against its range, as rxe's typed pools are. Ids run from {@link #first} (1 for MRs,
 * whose index 0 stands for no MR) to {@link #count()} - 1; {@link #get} answers null for an id outside them, so a
 * caller writes one null check instead of a bounds check of its own. No allocation and no boxing per lookup
 * (the iteration, for control-path walks, makes one iterator). Device thread only.
 */
final class Table<T> implements Iterable<T> {
    private final Object[] slots;
    /** The lowest id there may be. */
    final int first;

    /** Ids 0 .. {@code count} - 1. */
    Table(int count) {
        this(0, count);
    }

    /** Ids {@code first} .. {@code count} - 1. */
    Table(int first, int count) {
        if (first < 0 || count < first) {
            throw new IllegalArgumentException("ids " + first + " .. " + (count - 1));
        }
        this.first = first;
        this.slots = new Object[count];
    }

    /** How many ids the table has room for: they are below this. */
    int count() {
        return slots.length;
    }

    /** {@code id} names a slot of this table (whether or not it holds an object). */
    boolean inRange(int id) {
        return id >= first && id < slots.length;
    }

    /** The object under {@code id}, or null: none there, or an id out of range. */
    @SuppressWarnings("unchecked")
    T get(int id) {
        return id >= first && id < slots.length ? (T) slots[id] : null;
    }

    /** Puts {@code value} under {@code id}, which the caller has checked is {@link #inRange}. */
    void put(int id, T value) {
        if (!inRange(id)) {
            throw new IndexOutOfBoundsException("id " + id + " outside " + first + " .. " + (slots.length - 1));
        }
        slots[id] = value;
    }

    /** Empties the slot of {@code id} (nothing happens for an id out of range). */
    void remove(int id) {
        if (inRange(id)) {
            slots[id] = null;
        }
    }

    /** Empties every slot. */
    void clear() {
        Arrays.fill(slots, null);
    }

    /** The objects there are, by id (control path: the walk allocates its iterator). */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private int next = advance(first);

            private int advance(int from) {
                int i = from;
                while (i < slots.length && slots[i] == null) {
                    i++;
                }
                return i;
            }

            @Override
            public boolean hasNext() {
                return next < slots.length;
            }

            @Override
            @SuppressWarnings("unchecked")
            public T next() {
                if (next >= slots.length) {
                    throw new NoSuchElementException();
                }
                T t = (T) slots[next];
                next = advance(next + 1);
                return t;
            }
        };
    }
}
