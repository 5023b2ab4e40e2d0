package ernic.vfiouser.server;

import ernic.counters.CounterRegistry;
import ernic.counters.OncePerCause;
import org.slf4j.Logger;

import java.util.Map;

/**
 * Requests refused by a guest or client, counted by cause; each cause is logged once ({@link OncePerCause}): a
 * hostile guest or client must not be able to flood the log, but every refusal stays visible as a counter. The
 * counts are per-cause counters of the {@link CounterRegistry} ({@link #registerIn}), kept since the server
 * started (a device reset does not clear them).
 */
public final class Refusals {
    private final OncePerCause causes;

    public Refusals(Logger log) {
        this.causes = new OncePerCause(log);
    }

    /** Counts {@code cause}; logs {@code detail} at WARN the first time the cause is seen. */
    public void refuse(String cause, String detail) {
        causes.warn(cause, "{}: {}", cause, detail);
    }

    public long count(String cause) {
        return causes.count(cause);
    }

    public long total() {
        return causes.total();
    }

    /** A sorted copy of the counts, by cause. */
    public Map<String, Long> snapshot() {
        return causes.counts();
    }

    /** Shows the counts in {@code r} as {@code name} labelled {@code cause} ({@code name.CAUSE} in a flat map). */
    public void registerIn(CounterRegistry r, String name) {
        r.registerCauses(name, CounterRegistry.CAUSE, causes);
    }
}
