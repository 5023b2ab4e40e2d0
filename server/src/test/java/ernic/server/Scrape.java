package ernic.server;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** One scrape of a metrics endpoint in the Prometheus text format: each series ("name{labels}") and its value. */
record Scrape(String text, Map<String, Double> series) {
    static Scrape of(int port) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("scrape: HTTP " + r.statusCode() + ": " + r.body());
            }
            return parse(r.body());
        }
    }

    static Scrape parse(String text) {
        Map<String, Double> series = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            series.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
        }
        return new Scrape(text, series);
    }

    /** The value of one series, exactly as written ("ernic_x_total" or "ernic_x_total{qp=\"1\"}"); 0 if absent. */
    double value(String s) {
        return series.getOrDefault(s, 0.0);
    }

    /** The metric names of every series (labels cut off). */
    Set<String> names() {
        Set<String> names = new TreeSet<>();
        for (String s : series.keySet()) {
            int brace = s.indexOf('{');
            names.add(brace < 0 ? s : s.substring(0, brace));
        }
        return names;
    }

    /** The content type the endpoint promises, from the # TYPE lines: name to type. */
    Map<String, String> types() {
        Map<String, String> t = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] p = line.split(" ");
                t.put(p[2], p[3]);
            }
        }
        return t;
    }
}
