package ernic.counters;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The one registry of a server's counters. Each module registers its enum-described sets under a
 * prefix ({@code eth.}, {@code rdma.}, {@code rdma.remote.}, {@code mesh.}, {@code vfio.}, ...); sets that
 * exist once per QP or per peer are registered as a family under a label ({@code qp}, {@code peer}).
 * The stats file, the metrics endpoint and power-on reset walk this, so no counter is forgotten in one
 * of them. Owned by the device loop: {@link #snapshot()} and {@link #reset(String)} run there.
 *
 * <p>Every full name is registered once: a set, gauge, family or cause counter whose name is taken already is
 * refused with an {@link IllegalArgumentException} naming it. Several sets may share a prefix as long as no full
 * name repeats. A family's prefix and a cause counter's name reserve every name under them (their members are
 * known only at a snapshot), so no set's name may start with them.
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

    private record Single(String prefix, String suffix, Counters<?> set) {
    }

    private record Causes(String name, String label, OncePerCause counts) {
    }

    private record Family(String prefix, String label, Supplier<Map<String, ? extends Counters<?>>> members) {
    }

    private final List<Single> singles = new ArrayList<>();
    private final List<Family> families = new ArrayList<>();
    private final List<Gauge> gauges = new ArrayList<>();
    private final List<Causes> causes = new ArrayList<>();
    /** Every full name of the single sets and gauges. */
    private final Set<String> names = new HashSet<>();
    /** Prefixes under which names appear only at a snapshot: families' prefixes, cause counters' names + ".". */
    private final List<String> spaces = new ArrayList<>();

    /** Registers one set; its counters are named {@code prefix + key}. */
    public void register(String prefix, Counters<?> set) {
        register(prefix, set, "");
    }

    /**
     * Registers one set whose counters are named {@code prefix + key + suffix} (several sets of one enum, such as
     * {@code fault.KIND.occurrences} and {@code fault.KIND.injected}).
     */
    public void register(String prefix, Counters<?> set, String suffix) {
        checkPrefix(prefix);
        List<String> full = new ArrayList<>();
        set.forEach((k, v) -> full.add(prefix + k + suffix));
        Set<String> seen = new HashSet<>();
        for (String n : full) {
            if (!seen.add(n)) {
                throw new IllegalArgumentException("counter " + n + " is twice in the set registered under " + prefix);
            }
            checkName(n);
        }
        names.addAll(full);
        singles.add(new Single(prefix, suffix, set));
    }

    /**
     * Registers a family: sets that come and go (one per live QP, one per peer), read through
     * {@code members} (label value to set) at each snapshot.
     */
    public void registerFamily(String prefix, String label, Supplier<Map<String, ? extends Counters<?>>> members) {
        checkPrefix(prefix);
        checkSpace(prefix);
        spaces.add(prefix);
        families.add(new Family(prefix, label, members));
    }

    /** A value that goes up and down (objects in use, bytes held), read at each snapshot. */
    public void registerGauge(String name, LongSupplier value) {
        checkName(name);
        names.add(name);
        gauges.add(new Gauge(name, value));
    }

    /**
     * Registers per-cause counters whose causes are learned at run time (refusals): each cause is a sample named
     * {@code name} labelled {@code label=cause}; in a flat map of names (the device's counter map) it is
     * {@code name.cause}. They count since the server started: {@link #reset} leaves them alone. The name and
     * every name under {@code name + "."} are reserved.
     */
    public void registerCauses(String name, String label, OncePerCause counts) {
        if (name.isEmpty() || name.endsWith(".")) {
            throw new IllegalArgumentException("a cause counter's name does not end with '.': " + name);
        }
        checkName(name);
        checkSpace(name + ".");
        names.add(name);
        spaces.add(name + ".");
        causes.add(new Causes(name, label, counts));
    }

    private void checkName(String name) {
        if (names.contains(name)) {
            throw new IllegalArgumentException("counter " + name + " is registered already");
        }
        for (String space : spaces) {
            if (name.startsWith(space)) {
                throw new IllegalArgumentException("counter " + name + " is under " + space
                        + ", which a family or cause counter holds");
            }
        }
    }

    private void checkSpace(String prefix) {
        for (String space : spaces) {
            if (prefix.startsWith(space) || space.startsWith(prefix)) {
                throw new IllegalArgumentException("counter prefix " + prefix + " overlaps " + space
                        + ", registered already");
            }
        }
        for (String n : names) {
            if (n.startsWith(prefix)) {
                throw new IllegalArgumentException("counter prefix " + prefix + " holds " + n
                        + ", registered already");
            }
        }
    }

    private static void checkPrefix(String prefix) {
        if (prefix.isEmpty() || !prefix.endsWith(".")) {
            throw new IllegalArgumentException("a counter prefix ends with '.': " + prefix);
        }
    }

    /**
     * Every value now: single sets, gauges, cause counters (by cause, sorted), then families, in registration
     * order. Device loop only. The list is the caller's (a server may add what is no counter, such as whether a
     * client is connected).
     */
    public List<Sample> snapshot() {
        List<Sample> out = new ArrayList<>();
        for (Single s : singles) {
            add(out, s.prefix, s.suffix, Map.of(), s.set);
        }
        for (Gauge g : gauges) {
            out.add(new Sample(g.name, Map.of(), g.value.getAsLong(), true));
        }
        for (Causes c : causes) {
            c.counts.counts().forEach((cause, n) -> out.add(new Sample(c.name, Map.of(c.label, cause), n)));
        }
        for (Family f : families) {
            f.members.get().forEach((id, set) -> add(out, f.prefix, "", Map.of(f.label, id), set));
        }
        return out;
    }

    private static <E extends Enum<E> & Counter> void add(List<Sample> out, String prefix, String suffix,
                                                         Map<String, String> labels, Counters<E> set) {
        for (E c : set.names()) {
            out.add(new Sample(prefix + c.key() + suffix, labels, set.get(c), c.gauge()));
        }
    }

    /**
     * A snapshot as one flat map of names: single sets and gauges by full name, each cause of a cause counter as
     * {@code name.cause}; families left out. In the order of {@link #snapshot()}.
     */
    public static Map<String, Long> flat(List<Sample> samples) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Sample s : samples) {
            if (s.labels().isEmpty()) {
                m.put(s.name(), s.value());
            } else if (s.labels().size() == 1 && s.labels().containsKey(CAUSE)) {
                m.put(s.name() + "." + s.labels().get(CAUSE), s.value());
            }
        }
        return m;
    }

    /** The label of cause counters that {@link #flat} folds into names. */
    public static final String CAUSE = "cause";

    /**
     * Whether {@code name} (a sample's name, without its labels) is one this registry holds: a single set's counter,
     * a gauge, or a cause counter. Family members are not.
     */
    public boolean holds(String name) {
        return names.contains(name);
    }

    /** {@link #flat} of a {@link #snapshot()} now. Device loop only. */
    public Map<String, Long> totals() {
        return flat(snapshot());
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
