package ernic.nvmeof;

import org.slf4j.Logger;

import java.util.HashSet;
import java.util.Set;

/**
 * One WARN line per cause of a refusal, the first time it is seen: a hostile host must not be able to
 * flood the log; the counters show how often. Device thread only.
 */
final class Refusals {
    private final Logger log;
    private final Set<String> logged = new HashSet<>();

    Refusals(Logger log) {
        this.log = log;
    }

    /** Logs {@code cause: detail} once per cause. */
    void refuse(String cause, String detail) {
        if (logged.add(cause)) {
            log.warn("{}: {} (further refusals of this kind are only counted)", cause, detail);
        }
    }

    boolean seen(String cause) {
        return logged.contains(cause);
    }
}
