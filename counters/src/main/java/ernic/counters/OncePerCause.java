package ernic.counters;

import org.slf4j.Logger;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Counts occurrences by cause and logs a WARN line at most once per cause: a hostile guest, client or peer
 * must not be able to flood the log, but every occurrence stays visible as a counter. The first occurrence of a
 * cause is logged at WARN; later ones are counted and logged at DEBUG. With a summary interval, a cause that goes
 * on gets one more WARN line per interval saying how many there were since the last line; without one
 * ({@link #OncePerCause(Logger)}), later ones are only counted.
 *
 * <p>The counts are per-cause counters a {@link CounterRegistry} can show ({@link CounterRegistry#registerCauses});
 * they are not reset at power-on. Causes should be constants of the code (a few, not text from a peer), so the
 * map stays small. Safe to call from any thread.
 */
public final class OncePerCause {
    /** No summary lines: the first occurrence of a cause is logged, the others only counted. */
    public static final long NEVER = Long.MAX_VALUE;

    private final Logger log;
    private final LongSupplier clock;
    private final long summaryIntervalNanos;
    private final Map<String, Cause> causes = new ConcurrentHashMap<>();

    private static final class Cause {
        long total, sinceLine, lineAt;
    }

    /** Logs each cause once, then only counts it. */
    public OncePerCause(Logger log) {
        this(log, () -> 0, NEVER);
    }

    /** Logs each cause once, then once per {@code summaryIntervalNanos} of {@code clock} while it goes on. */
    public OncePerCause(Logger log, LongSupplier clock, long summaryIntervalNanos) {
        if (summaryIntervalNanos <= 0) {
            throw new IllegalArgumentException("summary interval must be positive: " + summaryIntervalNanos);
        }
        this.log = log;
        this.clock = clock;
        this.summaryIntervalNanos = summaryIntervalNanos;
    }

    /**
     * One occurrence of {@code cause}; {@code format} and {@code args} are SLF4J's (a last Throwable is its stack
     * trace). Logged at WARN the first time, then (with a summary interval) at most once per interval with the
     * count since, otherwise at DEBUG.
     */
    public void warn(String cause, String format, Object... args) {
        Cause c = causes.computeIfAbsent(cause, k -> new Cause());
        long now = clock.getAsLong();
        long more, total;
        synchronized (c) {
            total = ++c.total;
            if (total > 1 && (summaryIntervalNanos == NEVER || now - c.lineAt < summaryIntervalNanos)) {
                c.sinceLine++;
                more = -1;
            } else {
                more = c.sinceLine;
                c.sinceLine = 0;
                c.lineAt = now;
            }
        }
        if (more < 0) {
            if (log.isDebugEnabled()) {
                FormattingTuple t = MessageFormatter.arrayFormat(format, args);
                log.debug(t.getMessage(), t.getThrowable());
            }
            return;
        }
        FormattingTuple t = MessageFormatter.arrayFormat(format, args);
        if (total == 1 && summaryIntervalNanos == NEVER) {
            log.warn("{} (further ones of this cause, {}, are only counted)", t.getMessage(), cause, t.getThrowable());
        } else if (total == 1) {
            log.warn("{} (further ones of this cause, {}, are counted and summarised every {} min)", t.getMessage(),
                    cause, TimeUnit.NANOSECONDS.toMinutes(summaryIntervalNanos), t.getThrowable());
        } else {
            log.warn("{} ({}: {} more since the last line, {} in all)", t.getMessage(), cause, more, total,
                    t.getThrowable());
        }
    }

    /** How many times {@code cause} occurred. */
    public long count(String cause) {
        Cause c = causes.get(cause);
        if (c == null) {
            return 0;
        }
        synchronized (c) {
            return c.total;
        }
    }

    /** Occurrences of every cause together. */
    public long total() {
        long sum = 0;
        for (Cause c : causes.values()) {
            synchronized (c) {
                sum += c.total;
            }
        }
        return sum;
    }

    /** A sorted copy of the counts, by cause. */
    public Map<String, Long> counts() {
        Map<String, Long> m = new TreeMap<>();
        causes.forEach((k, c) -> {
            synchronized (c) {
                m.put(k, c.total);
            }
        });
        return m;
    }
}
