package ernic.it.guest;

import ernic.counters.CounterRegistry;
import ernic.server.ErnicServer;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/** The counters of a server running in the test's JVM, as the guest tests read them. */
final class ServerCounters {
    private ServerCounters() {
    }

    /** The counters {@code name} accepts, by name, read on the server's device thread (where they change). */
    static Map<String, Long> read(ErnicServer server, Predicate<String> name) throws Exception {
        return server.vfioUser().eventLoop().submit(() -> {
            Map<String, Long> m = new TreeMap<>();
            for (CounterRegistry.Sample s : server.counterRegistry().snapshot()) {
                if (name.test(s.name())) {
                    m.put(s.name(), s.value());
                }
            }
            return m;
        }).get();
    }
}
