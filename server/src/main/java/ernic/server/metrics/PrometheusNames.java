package ernic.server.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Registry names to Prometheus names: {@code ernic_} first, dots and camelCase to snake_case, a "bytes" word
 * moved to the end (the unit is the last word: {@code mesh.peer.bytesSent} is {@code ernic_mesh_peer_sent_bytes}).
 * A counter's {@code _total} is the exposition's to add, so a trailing "total" word is dropped here.
 */
public final class PrometheusNames {
    public static final String PREFIX = "ernic_";

    private PrometheusNames() {
    }

    /** The Prometheus name of a registry name, without {@code _total}. */
    public static String of(String registryName) {
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        for (int i = 0; i < registryName.length(); i++) {
            char c = registryName.charAt(i);
            if (c == '.' || c == '_' || c == '-') {
                flush(words, w);
            } else if (Character.isUpperCase(c)) {
                flush(words, w);
                w.append(Character.toLowerCase(c));
            } else if (c < 128 && Character.isLetterOrDigit(c)) {
                w.append(c);
            } else {
                flush(words, w); // nothing else is valid in a metric name
            }
        }
        flush(words, w);
        if (words.size() > 1 && words.getLast().equals("total")) {
            words.removeLast();
        }
        if (words.remove("bytes")) {
            words.add("bytes");
        }
        return PREFIX + String.join("_", words).toLowerCase(Locale.ROOT);
    }

    /** True when the name's unit is bytes (its last word). */
    public static boolean isBytes(String prometheusName) {
        return prometheusName.endsWith("_bytes");
    }

    private static void flush(List<String> words, StringBuilder w) {
        if (!w.isEmpty()) {
            words.add(w.toString());
            w.setLength(0);
        }
    }
}
