package ernic.ionic.fault;

import ernic.common.IpAddress;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The faults of {@code --inject}. Each {@code --inject} value is {@code KIND:PATTERN}, the pattern one or more
 * comma-separated items:
 * <pre>
 * KIND   stats-vals | rx-lost | rx-nobuf | tx-drop | roce-drop | roce-duplicate | roce-reorder | roce-corrupt |
 *        rdma-rem-access | rdma-rnr | rdma-retry-exc | rdma-latency
 * ITEM   every=N              occurrences N, 2N, 3N, ...
 *        from=N               every occurrence from the Nth on
 *        from=N,count=C       C occurrences starting at the Nth
 *        burst=K/M            the first K of every M occurrences
 *        seq=A,B,C            exactly occurrences A, B and C
 *                             (at most one of these five; none: every occurrence)
 *        frac=F               of those, each with probability F (0 &lt; F &lt;= 1), drawn from the seed and the
 *                             occurrence's number only, so the same workload fails the same way on every run
 *        seed=S               the seed of frac= (any integer; default 1)
 *        qp=Q,R               rdma-* only: only operations of QPs Q and R count, numbered among themselves
 *        peer=A,B             roce-* only: only packets to or from IP address A or B count, numbered among
 *                             themselves
 *        us=N                 rdma-latency only, and required: the time added, 1 to 10,000,000 microseconds
 * </pre>
 * A bare value continues the list before it ({@code seq=3,7}, {@code qp=5,9}). Examples: {@code rx-lost:every=5},
 * {@code rx-nobuf:from=10,count=3}, {@code tx-drop:burst=2/10}, {@code stats-vals:seq=1,4,9},
 * {@code rdma-rem-access:seq=2,qp=5}, {@code rdma-retry-exc:frac=0.01,seed=7}, {@code rdma-latency:us=500,qp=5,9}.
 * Several values may name the same kind; an occurrence then fails when any of them picks it (for
 * {@code rdma-latency} the longest of their times is added).
 *
 * <p>What counts as an occurrence: for {@code rx-lost} and {@code rx-nobuf}, each frame offered to the device
 * from the wire (the TAP), in-process endpoints' frames excluded; when both fire on one frame it is lost. For
 * {@code tx-drop}, each frame the guest transmits, before any in-process endpoint sees it. For
 * {@code stats-vals}, each RDMA STATS_VALS admin command. For the {@code rdma-*} kinds, each send WQE of an RC QP
 * the requester reaches whose opcode the kind applies to (see {@link FaultKind}); the data path decides them
 * together when it first reaches the WQE. For the {@code roce-*} kinds, each RoCEv2 packet the wire end sends, and
 * each it takes for this device after the parser's checks.
 *
 * <p>The plan counts occurrences and injected faults per kind ({@link #occurrences}: every occurrence, whatever
 * QP), and each value its own occurrences; {@link #reset()} starts them all over. Used on the device thread
 * only; deciding allocates nothing.
 */
public final class FaultPlan {
    /** The largest {@code us=}: 10 s. */
    public static final long MAX_LATENCY_US = 10_000_000;
    /** The seed of {@code frac=} when no {@code seed=} is given. */
    public static final long DEFAULT_SEED = 1;

    private static final String PATTERNS = "every=N, from=N[,count=C], burst=K/M, seq=A,B,..., frac=F[,seed=S],"
            + " qp=Q,... (rdma-*), peer=ADDRESS,... (roce-*), us=N (rdma-latency)";
    private static final Set<String> KEYS = Set.of("every", "from", "count", "burst", "seq", "frac", "seed", "qp",
            "peer", "us");
    private static final Set<String> LISTS = Set.of("seq", "qp", "peer");
    private static final Pattern DECIMAL = Pattern.compile("\\d+(\\.\\d+)?|\\.\\d+");

    /** One {@code --inject} value. */
    private static final class Rule {
        final FaultPattern pattern;
        /** The QPs it is limited to, sorted; null: all. */
        final int[] qps;
        /** The peers' addresses it is limited to, as GIDs (high and low halves); null: all. */
        final long[] peerHi, peerLo;
        final double frac;
        /** frac='s draws: from the seed and the kind. */
        final long base;
        final long delayNanos;
        /** Occurrences this value has seen (of its QPs, with qp=). */
        long seen;

        Rule(FaultKind kind, FaultPattern pattern, int[] qps, IpAddress[] peers, double frac, long seed,
                long delayNanos) {
            this.pattern = pattern;
            this.qps = qps;
            this.peerHi = peers == null ? null : new long[peers.length];
            this.peerLo = peers == null ? null : new long[peers.length];
            for (int i = 0; peers != null && i < peers.length; i++) {
                byte[] gid = peers[i].gid();
                peerHi[i] = IpAddress.high(gid);
                peerLo[i] = IpAddress.low(gid);
            }
            this.frac = frac;
            this.base = mix(seed * 0x9E3779B97F4A7C15L ^ (kind.ordinal() + 1) * 0xD1B54A32D192ED03L);
            this.delayNanos = delayNanos;
        }

        boolean sees(int qp) {
            return qps == null || qp >= 0 && Arrays.binarySearch(qps, qp) >= 0;
        }

        boolean sees(long hi, long lo) {
            if (peerHi == null) {
                return true;
            }
            for (int i = 0; i < peerHi.length; i++) {
                if (peerHi[i] == hi && peerLo[i] == lo) {
                    return true;
                }
            }
            return false;
        }

        boolean fires(long n) {
            return pattern.matches(n) && (frac >= 1 || draw(base, n) < frac);
        }
    }

    private final Map<FaultKind, List<FaultPattern>> patterns = new EnumMap<>(FaultKind.class);
    private final Rule[][] rules = new Rule[FaultKind.values().length][];
    private final Counters<FaultKind> occurrences = new Counters<>(FaultKind.class);
    private final Counters<FaultKind> injected = new Counters<>(FaultKind.class);
    /** The time {@code rdma-latency} adds, as the last check that fired chose it. */
    private long delayNanos;

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
            throw bad(spec, "unknown kind '" + spec.substring(0, colon).trim() + "' (" + FaultKind.keys() + ")");
        }
        Rule rule;
        try {
            rule = rule(kind, spec.substring(colon + 1).trim());
        } catch (IllegalArgumentException e) {
            throw bad(spec, e.getMessage());
        }
        patterns.computeIfAbsent(kind, k -> new ArrayList<>()).add(rule.pattern);
        Rule[] list = rules[kind.ordinal()];
        list = list == null ? new Rule[1] : Arrays.copyOf(list, list.length + 1);
        list[list.length - 1] = rule;
        rules[kind.ordinal()] = list;
    }

    /** One value's items, checked; every refusal is one line naming the item. */
    private static Rule rule(FaultKind kind, String body) {
        if (body.isEmpty()) {
            throw new IllegalArgumentException("no pattern after the kind (" + PATTERNS + ")");
        }
        Map<String, List<String>> items = new LinkedHashMap<>();
        String last = null;
        for (String raw : body.split(",", -1)) {
            String item = raw.trim();
            if (item.isEmpty()) {
                throw new IllegalArgumentException("an empty item (a comma too many)");
            }
            int eq = item.indexOf('=');
            if (eq < 0) {
                if (last == null) {
                    throw new IllegalArgumentException("unknown pattern '" + item + "' (" + PATTERNS + ")");
                }
                if (!LISTS.contains(last)) {
                    throw new IllegalArgumentException(last + "= takes one value, and '" + item + "' follows it");
                }
                items.get(last).add(item);
                continue;
            }
            String key = item.substring(0, eq).trim(), value = item.substring(eq + 1).trim();
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("unknown pattern '" + item + "' (" + PATTERNS + ")");
            }
            if (items.containsKey(key)) {
                throw new IllegalArgumentException(key + "= is given twice");
            }
            if (value.isEmpty()) {
                throw new IllegalArgumentException(key + "= needs a value");
            }
            items.put(key, new ArrayList<>(List.of(value)));
            last = key;
        }
        FaultPattern pattern = pattern(items);
        int[] qps = null;
        if (items.containsKey("qp")) {
            if (!kind.rdma()) {
                throw new IllegalArgumentException("qp= is for the rdma-* kinds only");
            }
            qps = items.get("qp").stream().mapToLong(v -> number("qp", v)).peek(q -> {
                if (q < 2 || q > 0xff_ffff) {
                    throw new IllegalArgumentException("qp=" + q + ": a QP number is 2 to 16777215 (0 and 1 are the"
                            + " special QPs, never RC)");
                }
            }).mapToInt(q -> (int) q).sorted().distinct().toArray();
        }
        IpAddress[] peers = null;
        if (items.containsKey("peer")) {
            if (!kind.roce()) {
                throw new IllegalArgumentException("peer= is for the roce-* kinds only");
            }
            peers = items.get("peer").stream().map(v -> {
                try {
                    return IpAddress.parse(v);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("peer=" + v + ": not an IPv4 or IPv6 address");
                }
            }).toArray(IpAddress[]::new);
        }
        double frac = 1;
        long seed = DEFAULT_SEED;
        if (items.containsKey("frac")) {
            String f = items.get("frac").get(0);
            if (!DECIMAL.matcher(f).matches()) {
                throw new IllegalArgumentException("frac=" + f + ": not a decimal number (such as 0.01)");
            }
            frac = Double.parseDouble(f);
            if (!(frac > 0 && frac <= 1)) {
                throw new IllegalArgumentException("frac=" + f + ": must be more than 0 and at most 1");
            }
        }
        if (items.containsKey("seed")) {
            if (!items.containsKey("frac")) {
                throw new IllegalArgumentException("seed=S goes with frac=F");
            }
            seed = number("seed", items.get("seed").get(0));
        }
        long delayNanos = 0;
        if (kind == FaultKind.RDMA_LATENCY) {
            if (!items.containsKey("us")) {
                throw new IllegalArgumentException("rdma-latency needs us=N, the time to add in microseconds");
            }
            String v = items.get("us").get(0);
            long us = number("us", v);
            if (us < 1 || us > MAX_LATENCY_US) {
                throw new IllegalArgumentException("us=" + v + ": must be 1 to " + MAX_LATENCY_US + " (10 s)");
            }
            delayNanos = us * 1000;
        } else if (items.containsKey("us")) {
            throw new IllegalArgumentException("us= is for rdma-latency only");
        }
        return new Rule(kind, pattern, qps, peers, frac, seed, delayNanos);
    }

    /** The occurrences a value picks: its one counting item, or every occurrence. */
    private static FaultPattern pattern(Map<String, List<String>> items) {
        List<String> given = new ArrayList<>();
        for (String k : List.of("every", "from", "burst", "seq")) {
            if (items.containsKey(k)) {
                given.add(k + "=");
            }
        }
        if (items.containsKey("count") && !items.containsKey("from")) {
            throw new IllegalArgumentException("count=C goes with from=N");
        }
        if (given.size() > 1) {
            throw new IllegalArgumentException("one of every=N, from=N[,count=C], burst=K/M and seq=A,B,... at most,"
                    + " not " + String.join(" and ", given));
        }
        if (items.containsKey("every")) {
            return new FaultPattern.Every(number("every", items.get("every").get(0)));
        }
        if (items.containsKey("burst")) {
            String v = items.get("burst").get(0);
            String[] km = v.split("/", -1);
            if (km.length != 2) {
                throw new IllegalArgumentException("burst=" + v + ": needs K/M");
            }
            return new FaultPattern.Burst(number("burst", km[0].trim()), number("burst", km[1].trim()));
        }
        if (items.containsKey("seq")) {
            return new FaultPattern.Sequence(items.get("seq").stream().mapToLong(v -> number("seq", v)).toArray());
        }
        if (items.containsKey("from")) {
            long from = number("from", items.get("from").get(0));
            return new FaultPattern.Run(from, items.containsKey("count") ? number("count", items.get("count").get(0))
                    : FaultPattern.Run.FOREVER);
        }
        return new FaultPattern.Run(1, FaultPattern.Run.FOREVER);
    }

    private static long number(String key, String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + ": not a number");
        }
    }

    private static IllegalArgumentException bad(String spec, String why) {
        return new IllegalArgumentException("--inject " + spec + ": " + why);
    }

    /** SplitMix64's finalizer. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** frac='s draw for occurrence {@code n}: uniform in [0, 1), a function of the value's seed and kind and n. */
    static double draw(long base, long n) {
        return (mix(base + n * 0x9E3779B97F4A7C15L) >>> 11) * 0x1.0p-53;
    }

    /** True when some pattern is configured for {@code kind}. */
    public boolean armed(FaultKind kind) {
        return rules[kind.ordinal()] != null;
    }

    /**
     * Counts one occurrence of {@code kind} and says whether it should fail. The caller then calls
     * {@link #injected(FaultKind)} when it actually applied the fault.
     */
    public boolean check(FaultKind kind) {
        return check(kind, -1);
    }

    /**
     * {@link #check(FaultKind)} for an operation of QP {@code qp} (-1: none): values limited to other QPs do
     * not see it. When it fires for {@code rdma-latency}, {@link #delayNanos()} says how long.
     */
    public boolean check(FaultKind kind, int qp) {
        return check(kind, qp, 0, 0, false);
    }

    /**
     * {@link #check(FaultKind)} for a RoCEv2 packet to or from the peer whose address, as a GID, is
     * {@code peerHi:peerLo}: values limited to other peers do not see it.
     */
    public boolean check(FaultKind kind, long peerHi, long peerLo) {
        return check(kind, -1, peerHi, peerLo, true);
    }

    private boolean check(FaultKind kind, int qp, long peerHi, long peerLo, boolean packet) {
        occurrences.inc(kind);
        Rule[] list = rules[kind.ordinal()];
        if (list == null) {
            return false;
        }
        boolean fired = false;
        long delay = 0;
        for (Rule r : list) {
            boolean sees = packet ? r.sees(peerHi, peerLo) : r.sees(qp);
            if (sees && r.fires(++r.seen)) { // every value counts the occurrence, so no short cut
                fired = true;
                delay = Math.max(delay, r.delayNanos);
            }
        }
        delayNanos = fired ? delay : 0;
        return fired;
    }

    /** The time to add, in nanoseconds, when the last {@link #check} that fired was for {@code rdma-latency}. */
    public long delayNanos() {
        return delayNanos;
    }

    /** Records that a fault of {@code kind} was applied. */
    public void injected(FaultKind kind) {
        injected.inc(kind);
    }

    /** {@link #check} and, when it says yes, {@link #injected}. */
    public boolean fire(FaultKind kind) {
        return fired(kind, check(kind));
    }

    /** {@link #check(FaultKind, long, long)} and, when it says yes, {@link #injected}. */
    public boolean fire(FaultKind kind, long peerHi, long peerLo) {
        return fired(kind, check(kind, peerHi, peerLo));
    }

    private boolean fired(FaultKind kind, boolean picked) {
        if (picked) {
            injected(kind);
        }
        return picked;
    }

    /** Registers the counts as {@code fault.KIND.occurrences} and {@code fault.KIND.injected}; device thread. */
    public void registerCounters(CounterRegistry r) {
        r.register("fault.", occurrences, ".occurrences");
        r.register("fault.", injected, ".injected");
    }

    public long occurrences(FaultKind kind) {
        return occurrences.get(kind);
    }

    public long injectedCount(FaultKind kind) {
        return injected.get(kind);
    }

    /** Patterns per kind, for logs. */
    public Map<FaultKind, List<FaultPattern>> patterns() {
        Map<FaultKind, List<FaultPattern>> m = new EnumMap<>(FaultKind.class);
        patterns.forEach((k, v) -> m.put(k, List.copyOf(v)));
        return m;
    }

    /** Occurrence numbering and counters start over (device power-on). */
    public void reset() {
        occurrences.reset();
        injected.reset();
        for (Rule[] list : rules) {
            if (list != null) {
                for (Rule r : list) {
                    r.seen = 0;
                }
            }
        }
    }
}
