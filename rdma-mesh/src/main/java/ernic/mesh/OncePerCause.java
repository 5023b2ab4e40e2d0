package ernic.mesh;

import org.slf4j.Logger;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A WARN line at most once per cause: a peer that connects, fails and reconnects in a loop must not fill the log.
 * The first occurrence of a cause is logged at WARN; later ones are counted (the callers count them in their
 * {@link MeshCounter} too) and logged at DEBUG; while they go on, one summary line per cause and
 * {@link #SUMMARY_INTERVAL_NANOS} says how many there were since the last line. Causes are constants of the code,
 * never text from a peer, so the map stays small. The mesh's counterpart of vfio-user's {@code Refusals}, which this
 * module cannot use (rdma-mesh depends on nothing of vfio-user).
 */
final class OncePerCause {
    static final long SUMMARY_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final Logger log;
    private final LongSupplier clock;
    private final Map<String, Cause> causes = new ConcurrentHashMap<>();

    private static final class Cause {
        long total, sinceLine, lineAt;
    }

    OncePerCause(Logger log, LongSupplier clock) {
        this.log = log;
        this.clock = clock;
    }

    /**
     * One occurrence of {@code cause}; {@code format} and {@code args} are SLF4J's (a last Throwable is its stack
     * trace). Logged at WARN the first time, then at most once per summary interval with the count since.
     */
    void warn(String cause, String format, Object... args) {
        Cause c = causes.computeIfAbsent(cause, k -> new Cause());
        long now = clock.getAsLong();
        long more, total;
        synchronized (c) {
            total = ++c.total;
            if (total > 1 && now - c.lineAt < SUMMARY_INTERVAL_NANOS) {
                c.sinceLine++;
                more = -1;
            } else {
                more = c.sinceLine;
                c.sinceLine = 0;
                c.lineAt = now;
            }
        }
        FormattingTuple t = MessageFormatter.arrayFormat(format, args);
        if (more < 0) {
            if (log.isDebugEnabled()) {
                log.debug(t.getMessage(), t.getThrowable());
            }
        } else if (total == 1) {
            log.warn("{} (further ones of this cause, {}, are counted and summarised every {} min)", t.getMessage(),
                    cause, TimeUnit.NANOSECONDS.toMinutes(SUMMARY_INTERVAL_NANOS), t.getThrowable());
        } else {
            log.warn("{} ({}: {} more since the last line, {} in all)", t.getMessage(), cause, more, total,
                    t.getThrowable());
        }
    }

    /** How many times {@code cause} occurred. */
    long count(String cause) {
        Cause c = causes.get(cause);
        if (c == null) {
            return 0;
        }
        synchronized (c) {
            return c.total;
        }
    }
}
