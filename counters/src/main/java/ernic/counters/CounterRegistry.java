package ernic.counters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The one registry of a server's counters. Each module registers its enum-described sets under a
 * prefix ({@code eth.}, {@code rdma.}, {@code rdma.remote.}, {@code mesh.}, {@code vfio.}, ...); sets that
 * exist once per QP or per peer are registered as a family under a label ({@code qp}, {@code peer}).
 * The stats file, the metrics endpoint and power-on reset walk this, so no counter is forgotten in one
 * of them. Owned by the device loop: {@link #snapshot()} and {@link #reset(String)} run there.
 */
public final class CounterRegistry {
    /** One value: full name (prefix + key), its labels (empty for a single set), its value; a gauge or a counter. */
    public record Sample(String name, Map<String, String> labels, long value, boolean gauge) {
        public Sample(String name, Map<String, String> labels, long value) {
            this(name, labels, value, false);
        }
    }

    private record Gauge(String name, LongSupplier value) {
    }

    private record Single(String prefix, Counters<?> set) {
    }

    private record Family(String prefix, String label, Supplier<Map<String, ? extends Counters<?>>> members) {
    }

    private final List<Single> singles = new ArrayList<>();
    private final List<Family> families = new ArrayList<>();
    private final List<Gauge> gauges = new ArrayList<>();

    /** Registers one set; its counters are named {@code prefix + key}. */
    public void register(String prefix, Counters<?> set) {
        checkPrefix(prefix);
        singles.add(new Single(prefix, set));
    }

    /**
     * Registers a family: sets that come and go (one per live QP, one per peer), read through
     * {@code members} (label value to set) at each snapshot.
     */
    public void registerFamily(String prefix, String label, Supplier<Map<String, ? extends Counters<?>>> members) {
        checkPrefix(prefix);
        families.add(new Family(prefix, label, members));
    }

    /** A value that goes up and down (objects in use, bytes held), read at each snapshot. */
    public void registerGauge(String name, LongSupplier value) {
        gauges.add(new Gauge(name, value));
    }

    private static void checkPrefix(String prefix) {
        if (prefix.isEmpty() || !prefix.endsWith(".")) {
            throw new IllegalArgumentException("a counter prefix ends with '.': " + prefix);
        }
    }

    /** Every value now: single sets, gauges, then families, in registration order. Device loop only. */
    public List<Sample> snapshot() {
        List<Sample> out = new ArrayList<>();
        for (Single s : singles) {
            add(out, s.prefix, Map.of(), s.set);
        }
        for (Gauge g : gauges) {
            out.add(new Sample(g.name, Map.of(), g.value.getAsLong(), true));
        }
        for (Family f : families) {
            f.members.get().forEach((id, set) -> add(out, f.prefix, Map.of(f.label, id), set));
        }
        return out;
    }

    private static <E extends Enum<E> & Counter> void add(List<Sample> out, String prefix, Map<String, String> labels,
                                                         Counters<E> set) {
        for (E c : set.names()) {
            out.add(new Sample(prefix + c.key(), labels, set.get(c), c.gauge()));
        }
    }

    /** The single sets' counters and the gauges by full name (families left out), in registration order. */
    public Map<String, Long> totals() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Single s : singles) {
            s.set.forEach((k, v) -> m.put(s.prefix + k, v));
        }
        for (Gauge g : gauges) {
            m.put(g.name, g.value.getAsLong());
        }
        return m;
    }

    /** Zeroes every single set whose prefix starts with {@code prefix} ("" for all): power-on. */
    public void reset(String prefix) {
        for (Single s : singles) {
            if (s.prefix.startsWith(prefix)) {
                s.set.reset();
            }
        }
    }
}
