package ernic.ionic.fault;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The faults of {@code --inject}. Each {@code --inject} value is {@code KIND:PATTERN}:
 * <pre>
 * KIND     stats-vals | rx-lost | rx-nobuf | tx-drop
 * PATTERN  every=N              occurrences N, 2N, 3N, ...
 *          from=N               every occurrence from the Nth on
 *          from=N,count=C       C occurrences starting at the Nth
 *          burst=K/M            the first K of every M occurrences
 *          seq=A,B,C            exactly occurrences A, B and C
 * </pre>
 * Examples: {@code rx-lost:every=5}, {@code rx-nobuf:from=10,count=3}, {@code tx-drop:burst=2/10},
 * {@code stats-vals:seq=1,4,9}. Several values may name the same kind; an occurrence then fails when
 * any of its patterns matches.
 *
 * <p>What counts as an occurrence: for {@code rx-lost} and {@code rx-nobuf}, each frame offered to
 * the device from the wire (the TAP), in-process endpoints' frames excluded; when both fire on one
 * frame it is lost. For {@code tx-drop}, each frame the guest transmits, before any in-process
 * endpoint sees it. For {@code stats-vals}, each RDMA STATS_VALS admin command.
 *
 * <p>The plan counts occurrences and injected faults per kind; {@link #reset()} starts both over.
 * Used on the device thread only.
 */
public final class FaultPlan {
    private final Map<FaultKind, List<FaultPattern>> patterns = new EnumMap<>(FaultKind.class);
    private final long[] occurrences = new long[FaultKind.values().length];
    private final long[] injected = new long[FaultKind.values().length];

    private FaultPlan() {}

    /** No faults. */
    public static FaultPlan none() {
        return new FaultPlan();
    }

    /** Parses {@code --inject} values; throws IllegalArgumentException naming the bad value. */
    public static FaultPlan parse(Iterable<String> specs) {
        FaultPlan plan = new FaultPlan();
        for (String spec : specs) {
            plan.add(spec);
        }
        return plan;
    }

    public static FaultPlan parse(String... specs) {
        return parse(List.of(specs));
    }

    private void add(String spec) {
        int colon = spec.indexOf(':');
        if (colon < 0) {
            throw bad(spec, "expected KIND:PATTERN");
        }
        FaultKind kind = FaultKind.parse(spec.substring(0, colon));
        if (kind == null) {
            throw bad(spec, "unknown kind '" + spec.substring(0, colon) + "' (stats-vals, rx-lost, rx-nobuf, tx-drop)");
        }
        FaultPattern pattern;
        try {
            pattern = pattern(spec.substring(colon + 1).trim());
        } catch (NumberFormatException e) {
            throw bad(spec, "not a number: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw bad(spec, e.getMessage());
        }
        patterns.computeIfAbsent(kind, k -> new ArrayList<>()).add(pattern);
    }

    private static FaultPattern pattern(String p) {
        if (p.startsWith("every=")) {
            return new FaultPattern.Every(Long.parseLong(p.substring(6).trim()));
        }
        if (p.startsWith("burst=")) {
            String[] km = p.substring(6).split("/");
            if (km.length != 2) {
                throw new IllegalArgumentException("burst needs K/M");
            }
            return new FaultPattern.Burst(Long.parseLong(km[0].trim()), Long.parseLong(km[1].trim()));
        }
        if (p.startsWith("seq=")) {
            String[] parts = p.substring(4).split(",");
            long[] n = new long[parts.length];
            for (int i = 0; i < parts.length; i++) {
                n[i] = Long.parseLong(parts[i].trim());
            }
            return new FaultPattern.Sequence(n);
        }
        if (p.startsWith("from=")) {
            String[] parts = p.substring(5).split(",");
            long from = Long.parseLong(parts[0].trim());
            if (parts.length == 1) {
                return new FaultPattern.Run(from, FaultPattern.Run.FOREVER);
            }
            if (parts.length == 2 && parts[1].trim().startsWith("count=")) {
                return new FaultPattern.Run(from, Long.parseLong(parts[1].trim().substring(6).trim()));
            }
            throw new IllegalArgumentException("from=N takes only ',count=C' after it");
        }
        throw new IllegalArgumentException("unknown pattern '" + p + "' (every=N, from=N[,count=C], burst=K/M, seq=A,B,...)");
    }

    private static IllegalArgumentException bad(String spec, String why) {
        return new IllegalArgumentException("--inject " + spec + ": " + why);
    }

    /** True when some pattern is configured for {@code kind}. */
    public boolean armed(FaultKind kind) {
        return patterns.containsKey(kind);
    }

    /**
     * Counts one occurrence of {@code kind} and says whether it should fail. The caller then calls
     * {@link #injected(FaultKind)} when it actually applied the fault.
     */
    public boolean check(FaultKind kind) {
        long n = ++occurrences[kind.ordinal()];
        List<FaultPattern> list = patterns.get(kind);
        if (list == null) {
            return false;
        }
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i).matches(n)) {
                return true;
            }
        }
        return false;
    }

    /** Records that a fault of {@code kind} was applied. */
    public void injected(FaultKind kind) {
        injected[kind.ordinal()]++;
    }

    /** {@link #check} and, when it says yes, {@link #injected}. */
    public boolean fire(FaultKind kind) {
        if (check(kind)) {
            injected(kind);
            return true;
        }
        return false;
    }

    public long occurrences(FaultKind kind) {
        return occurrences[kind.ordinal()];
    }

    public long injectedCount(FaultKind kind) {
        return injected[kind.ordinal()];
    }

    /** Patterns per kind, for logs. */
    public Map<FaultKind, List<FaultPattern>> patterns() {
        Map<FaultKind, List<FaultPattern>> m = new EnumMap<>(FaultKind.class);
        patterns.forEach((k, v) -> m.put(k, List.copyOf(v)));
        return m;
    }

    /** Occurrence numbering and counters start over (device power-on). */
    public void reset() {
        java.util.Arrays.fill(occurrences, 0);
        java.util.Arrays.fill(injected, 0);
    }
}
