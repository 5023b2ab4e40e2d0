package ernic.server.metrics;

import ernic.counters.CounterRegistry.Sample;
import io.netty.util.concurrent.EventExecutor;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code ernic serve --metrics [HOST:]PORT}: the Prometheus text format at {@code /metrics}, served by the
 * Prometheus client's HTTP server on threads of its own, from a {@link RegistryCollector}. One registry of its
 * own per endpoint (never the client's default), so nothing else is exported.
 */
public final class MetricsEndpoint implements AutoCloseable {
    /**
     * Where to listen: {@code PORT} (on localhost), {@code HOST:PORT}, or {@code [IPv6]:PORT}; port 0 takes
     * a free one.
     */
    public record Address(String host, int port) {
        public static Address parse(String spec) {
            String host = "localhost", port = spec;
            int colon = spec.lastIndexOf(':');
            if (colon >= 0) {
                host = spec.substring(0, colon);
                port = spec.substring(colon + 1);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                } else if (host.contains(":")) {
                    throw new IllegalArgumentException("--metrics " + spec + ": an IPv6 host goes in brackets, [::1]:PORT");
                }
                if (host.isEmpty()) {
                    throw new IllegalArgumentException("--metrics " + spec + ": expected [HOST:]PORT");
                }
            }
            int p;
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 0 || p > 65535) {
                throw new IllegalArgumentException("--metrics " + spec + ": expected [HOST:]PORT, PORT 0..65535");
            }
            return new Address(host, p);
        }
    }

    private final HTTPServer http;

    private MetricsEndpoint(HTTPServer http) {
        this.http = http;
    }

    /** Starts serving; {@code snapshot} runs on {@code loop} at each scrape. A port in use is an IOException. */
    public static MetricsEndpoint start(Address at, EventExecutor loop, Supplier<List<Sample>> snapshot)
            throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(new RegistryCollector(loop, snapshot));
        try {
            return new MetricsEndpoint(HTTPServer.builder().hostname(at.host()).port(at.port()).registry(registry)
                    .buildAndStart());
        } catch (IOException e) {
            throw new IOException("--metrics " + at.host() + ":" + at.port() + ": " + e.getMessage(), e);
        }
    }

    /** The port it listens on (the one taken when asked for 0). */
    public int port() {
        return http.getPort();
    }

    /** Stops the HTTP server and its threads. */
    @Override
    public void close() {
        http.close();
    }
}
