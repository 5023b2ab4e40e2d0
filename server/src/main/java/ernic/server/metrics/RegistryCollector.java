package ernic.server.metrics;

import ernic.counters.CounterRegistry.Sample;
import io.netty.util.concurrent.EventExecutor;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The Prometheus view of a server's counter registry. Each scrape asks the device loop for a registry
 * snapshot (plain values, taken there) and waits a bounded time; the Prometheus objects are built from those
 * values on the scrape's thread, so the data path never sees one. Each family (per QP, per peer) shows at most
 * {@link #MAX_MEMBERS} members, those with the lowest ids; the others are left out and counted in
 * {@code ernic_metrics_series_omitted}.
 */
public final class RegistryCollector implements MultiCollector {
    /** Members of one family (QPs, peers) a scrape shows at most. */
    public static final int MAX_MEMBERS = 256;
    /** How long a scrape waits for the device loop. */
    static final long TIMEOUT_MILLIS = 2000;

    private final EventExecutor loop;
    private final Supplier<List<Sample>> snapshot;
    /** Scrapes that found the device loop too busy; the scrape's thread only. */
    private final AtomicLong timeouts = new AtomicLong();

    /** {@code snapshot} runs on {@code loop}: {@code registry::snapshot}, or more for what the registry lacks. */
    public RegistryCollector(EventExecutor loop, Supplier<List<Sample>> snapshot) {
        this.loop = loop;
        this.snapshot = snapshot;
    }

    @Override
    public MetricSnapshots collect() {
        List<Sample> samples;
        try {
            samples = loop.submit(snapshot::get).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            timeouts.incrementAndGet();
            throw new IllegalStateException("the device loop did not answer within " + TIMEOUT_MILLIS + " ms");
        } catch (ExecutionException e) {
            throw new IllegalStateException("the registry snapshot failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the device loop");
        }
        return snapshots(samples, timeouts.get());
    }

    /** One family being built: the registry name it came from, its type, its points. */
    private static final class Family {
        final String name, registryName;
        final boolean gauge;
        final List<Sample> points = new ArrayList<>();
        final Set<Map<String, String>> labelSets = new HashSet<>();

        Family(String name, String registryName, boolean gauge) {
            this.name = name;
            this.registryName = registryName;
            this.gauge = gauge;
        }
    }

    /** The snapshots of one registry snapshot; {@code timeouts} is the scrapes that timed out so far. */
    static MetricSnapshots snapshots(List<Sample> samples, long timeouts) {
        Set<String> kept = keptMembers(samples);
        long omitted = 0;
        Map<String, Family> families = new LinkedHashMap<>();
        for (Sample s : samples) {
            if (!s.labels().isEmpty() && !kept.contains(memberKey(s.labels()))) {
                omitted++;
                continue;
            }
            String name = PrometheusNames.of(s.name());
            Family f = families.computeIfAbsent(name, n -> new Family(n, s.name(), s.gauge()));
            // Two registry names on one Prometheus name must agree on type and differ in labels (a test checks
            // the server's registry); a clash drops the later value rather than the scrape.
            if (f.gauge == s.gauge() && f.labelSets.add(s.labels())) {
                f.points.add(s);
            }
        }
        List<MetricSnapshot> out = new ArrayList<>();
        for (Family f : families.values()) {
            out.add(f.gauge ? gauge(f) : counter(f));
        }
        out.add(GaugeSnapshot.builder().name("ernic_metrics_series_omitted")
                .help("Family series (per QP, per peer) left out of this scrape: each family shows its "
                        + MAX_MEMBERS + " lowest ids")
                .dataPoint(GaugeDataPointSnapshot.builder().value(omitted).build()).build());
        out.add(CounterSnapshot.builder().name("ernic_metrics_scrape_timeouts")
                .help("Scrapes that failed because the device loop did not answer within " + TIMEOUT_MILLIS + " ms")
                .dataPoint(CounterDataPointSnapshot.builder().value(timeouts).build()).build());
        return new MetricSnapshots(out);
    }

    private static MetricSnapshot counter(Family f) {
        CounterSnapshot.Builder b = named(CounterSnapshot.builder(), f);
        for (Sample s : f.points) {
            b.dataPoint(CounterDataPointSnapshot.builder().value(s.value()).labels(labels(s.labels())).build());
        }
        return b.build();
    }

    private static MetricSnapshot gauge(Family f) {
        GaugeSnapshot.Builder b = named(GaugeSnapshot.builder(), f);
        for (Sample s : f.points) {
            b.dataPoint(GaugeDataPointSnapshot.builder().value(s.value()).labels(labels(s.labels())).build());
        }
        return b.build();
    }

    /** A family's name, HELP line and (for a byte count) unit, on the builder of its snapshot. */
    private static <B extends MetricSnapshot.Builder<B>> B named(B b, Family f) {
        b.name(f.name).help(help(f));
        if (PrometheusNames.isBytes(f.name)) {
            b.unit(Unit.BYTES);
        }
        return b;
    }

    /** The HELP line names the registry counter (what the stats file and docs/monitoring.md call it). */
    private static String help(Family f) {
        return "ernic counter " + f.registryName + (f.gauge ? " (gauge)" : "");
    }

    private static Labels labels(Map<String, String> m) {
        if (m.isEmpty()) {
            return Labels.EMPTY;
        }
        Labels.Builder b = Labels.builder();
        m.forEach(b::label);
        return b.build();
    }

    /**
     * The family members shown: per label name (qp, peer), the {@link #MAX_MEMBERS} lowest ids, numbers in
     * numeric order. Returned as {@link #memberKey} strings.
     */
    private static Set<String> keptMembers(List<Sample> samples) {
        Map<String, TreeSet<String>> byLabel = new LinkedHashMap<>();
        for (Sample s : samples) {
            s.labels().forEach((k, v) -> byLabel.computeIfAbsent(k, x -> new TreeSet<>(ID_ORDER)).add(v));
        }
        Set<String> kept = new HashSet<>();
        byLabel.forEach((label, ids) -> {
            int n = 0;
            for (String id : ids) {
                if (n++ == MAX_MEMBERS) {
                    break;
                }
                kept.add(label + "=" + id);
            }
        });
        return kept;
    }

    /** A member's key: the label set of a family's single label (every family has one). */
    private static String memberKey(Map<String, String> labels) {
        Map.Entry<String, String> e = labels.entrySet().iterator().next();
        return e.getKey() + "=" + e.getValue();
    }

    /** Ids in numeric order where both are numbers (QP 2 before QP 10), else as text. */
    private static final Comparator<String> ID_ORDER = (a, b) -> {
        boolean na = isNumber(a), nb = isNumber(b);
        if (na && nb) {
            return a.length() != b.length() ? Integer.compare(a.length(), b.length()) : a.compareTo(b);
        }
        return na != nb ? (na ? -1 : 1) : a.compareTo(b);
    };

    private static boolean isNumber(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
