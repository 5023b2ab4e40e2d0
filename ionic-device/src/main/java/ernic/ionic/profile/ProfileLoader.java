package ernic.ionic.profile;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link Profile} from {@code --nic-profile}: a comma-separated list of built-in profile
 * names and ini file paths, applied in order over {@code compat}. A later layer overrides the keys
 * it sets and keeps the rest.
 *
 * <p>Ini format: {@code key = value} lines; {@code #} or {@code ;} start a comment line; blank lines
 * are ignored; an optional {@code [profile]} section header is accepted. Keys:
 * <pre>
 * interrupts          MSI-X vectors, 2..128
 * eth_queues          Ethernet RX/TX queue pairs, 1..256
 * rdma_eqs            RDMA event queues, 4..256
 * link_speed_mbps     link speed in Mb/s
 * transceiver         e.g. qsfp-100g-cr4 (see {@link Transceiver})
 * max_mtu             largest MTU, 68..9198
 * firmware_version    up to 31 printable ASCII characters
 * stats_interval_ms   statistics rewrite interval, 0 or 10..3600000
 * </pre>
 * The built-in profiles are ini files on the class path under {@code profiles/} (and the same files
 * ship in the source tree as {@code ionic-device/src/main/resources/profiles/*.ini}).
 */
public final class ProfileLoader {
    public static final String DEFAULT = "compat";
    public static final List<String> BUILT_INS = List.of("compat", "minimal", "max", "25g", "400g");
    public static final List<String> KEYS = List.of("interrupts", "eth_queues", "rdma_eqs", "link_speed_mbps",
            "transceiver", "max_mtu", "firmware_version", "stats_interval_ms");

    private ProfileLoader() {}

    /** The default profile. */
    public static Profile compat() {
        return load(DEFAULT);
    }

    /**
     * Loads {@code spec} over compat; a null or blank spec gives compat.
     *
     * @throws IllegalArgumentException with the layer, line and reason for any unknown name, unreadable
     *         file, unknown key, duplicate key or bad value
     */
    public static Profile load(String spec) {
        Map<String, String> values = new LinkedHashMap<>();
        parseInto(values, DEFAULT, builtIn(DEFAULT));
        StringBuilder name = new StringBuilder(DEFAULT);
        if (spec != null && !spec.isBlank()) {
            for (String raw : spec.split(",")) {
                String layer = raw.trim();
                if (layer.isEmpty()) {
                    throw new IllegalArgumentException("--nic-profile '" + spec + "': empty entry");
                }
                if (layer.equals(DEFAULT)) {
                    continue;
                }
                parseInto(values, layer, open(layer));
                name.append('+').append(layer);
            }
        }
        return build(name.toString(), values);
    }

    /** Parses one ini text on its own (for tests and tools); {@code origin} names it in errors. */
    public static Map<String, String> parse(String origin, String text) {
        Map<String, String> values = new LinkedHashMap<>();
        parseInto(values, origin, new StringReader(text));
        return values;
    }

    private static Reader open(String layer) {
        if (BUILT_INS.contains(layer)) {
            return builtIn(layer);
        }
        boolean looksLikePath = layer.contains("/") || layer.endsWith(".ini");
        Path p = Path.of(layer);
        if (!looksLikePath && !Files.exists(p)) {
            throw new IllegalArgumentException("unknown NIC profile '" + layer + "': not a built-in profile "
                    + BUILT_INS + " and no such file");
        }
        try {
            return Files.newBufferedReader(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("NIC profile file " + layer + ": cannot read (" + e.getMessage() + ")");
        }
    }

    private static Reader builtIn(String name) {
        InputStream in = ProfileLoader.class.getResourceAsStream("/profiles/" + name + ".ini");
        if (in == null) {
            throw new IllegalStateException("built-in NIC profile " + name + " is missing from the class path");
        }
        return new InputStreamReader(in, StandardCharsets.UTF_8);
    }

    private static void parseInto(Map<String, String> values, String origin, Reader reader) {
        Map<String, Integer> seen = new LinkedHashMap<>();
        try (BufferedReader r = new BufferedReader(reader)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                String t = line.strip();
                if (t.isEmpty() || t.startsWith("#") || t.startsWith(";")) {
                    continue;
                }
                if (t.startsWith("[")) {
                    if (!t.equals("[profile]")) {
                        throw error(origin, n, "unexpected section " + t + " (only [profile] is allowed)");
                    }
                    continue;
                }
                int eq = t.indexOf('=');
                if (eq <= 0) {
                    throw error(origin, n, "expected 'key = value', got '" + t + "'");
                }
                String key = t.substring(0, eq).strip();
                String value = t.substring(eq + 1).strip();
                if (!KEYS.contains(key)) {
                    throw error(origin, n, "unknown key '" + key + "' (known keys: " + String.join(", ", KEYS) + ")");
                }
                Integer before = seen.put(key, n);
                if (before != null) {
                    throw error(origin, n, "key '" + key + "' already set on line " + before);
                }
                if (value.isEmpty()) {
                    throw error(origin, n, "key '" + key + "' has no value");
                }
                try {
                    checkValue(key, value);
                } catch (IllegalArgumentException e) {
                    throw error(origin, n, e.getMessage());
                }
                values.put(key, value);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("NIC profile " + origin + ": " + e.getMessage());
        }
    }

    private static void checkValue(String key, String value) {
        switch (key) {
            case "transceiver" -> {
                if (Transceiver.parse(value) == null) {
                    StringBuilder known = new StringBuilder();
                    for (Transceiver t : Transceiver.values()) {
                        known.append(known.isEmpty() ? "" : ", ").append(t.key());
                    }
                    throw new IllegalArgumentException("unknown transceiver '" + value + "' (known: " + known + ")");
                }
            }
            case "firmware_version" -> { }
            default -> integer(key, value);
        }
    }

    private static int integer(String key, String value) {
        try {
            return Integer.parseInt(value.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("key '" + key + "' needs an integer, got '" + value + "'");
        }
    }

    private static Profile build(String name, Map<String, String> v) {
        for (String k : KEYS) {
            if (!v.containsKey(k)) {
                throw new IllegalStateException("built-in profile compat does not set " + k);
            }
        }
        try {
            return new Profile(name, integer("interrupts", v.get("interrupts")),
                    integer("eth_queues", v.get("eth_queues")), integer("rdma_eqs", v.get("rdma_eqs")),
                    integer("link_speed_mbps", v.get("link_speed_mbps")), Transceiver.parse(v.get("transceiver")),
                    integer("max_mtu", v.get("max_mtu")), v.get("firmware_version"),
                    integer("stats_interval_ms", v.get("stats_interval_ms")));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("NIC profile " + name + ": " + e.getMessage(), e);
        }
    }

    private static IllegalArgumentException error(String origin, int line, String message) {
        return new IllegalArgumentException("NIC profile " + origin + ", line " + line + ": " + message);
    }
}
