package ernic.vfiouser.server;

import org.slf4j.Logger;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts refused requests by cause and logs each cause once: a hostile guest or client must not be
 * able to flood the log, but every refusal stays visible as a counter.
 */
public final class Refusals {
    private final Logger log;
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();

    public Refusals(Logger log) {
        this.log = log;
    }

    /** Counts {@code cause}; logs {@code detail} at WARN the first time the cause is seen. */
    public void refuse(String cause, String detail) {
        AtomicLong c = counts.computeIfAbsent(cause, k -> new AtomicLong());
        if (c.getAndIncrement() == 0) {
            log.warn("{}: {} (further refusals of this kind are only counted)", cause, detail);
        }
    }

    public long count(String cause) {
        AtomicLong c = counts.get(cause);
        return c == null ? 0 : c.get();
    }

    public long total() {
        return counts.values().stream().mapToLong(AtomicLong::get).sum();
    }

    /** A sorted copy of the counters. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        counts.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }
}
