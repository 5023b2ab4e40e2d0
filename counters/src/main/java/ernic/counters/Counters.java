package ernic.counters;

import java.util.List;
import java.util.function.ObjLongConsumer;

/**
 * A set of counters described by an enum: one plain {@code long} per constant. Owned by one thread
 * (the device loop); counting allocates nothing. Readers elsewhere get a snapshot taken on that thread.
 */
public final class Counters<E extends Enum<E> & Counter> {
    private final E[] names;
    private final long[] values;

    public Counters(Class<E> type) {
        this.names = type.getEnumConstants();
        this.values = new long[names.length];
    }

    public void inc(E c) {
        values[c.ordinal()]++;
    }

    public void add(E c, long n) {
        values[c.ordinal()] += n;
    }

    public void set(E c, long v) {
        values[c.ordinal()] = v;
    }

    public long get(E c) {
        return values[c.ordinal()];
    }

    /** The value at an ordinal, for layouts that index counters by position (ionic STATS_VALS). */
    public long at(int ordinal) {
        return values[ordinal];
    }

    public void reset() {
        java.util.Arrays.fill(values, 0);
    }

    public List<E> names() {
        return List.of(names);
    }

    /** Every counter as (key, value), in declaration order. */
    public void forEach(ObjLongConsumer<String> f) {
        for (E n : names) {
            f.accept(n.key(), values[n.ordinal()]);
        }
    }
}
