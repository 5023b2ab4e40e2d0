package ernic.common;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The grammar of a {@code WORD[:key=value,...]} option ({@code --backend nvmeof:size=1G,bs=4096}), written once:
 * its keys and the shape of each value. {@link #usage()} is what messages and {@code --help} print, and
 * {@link #split} refuses what the keys do not allow (no '=', a key twice, an unknown key) before the owner reads
 * the values.
 */
public final class OptionList {
    /** One key and the shape of its value as the usage shows it ({@code SIZE}, {@code 512|4096}). */
    public record Key(String name, String shape) {
    }

    private final String word;
    private final List<Key> keys;

    public OptionList(String word, List<Key> keys) {
        this.word = word;
        this.keys = List.copyOf(keys);
    }

    public static Key key(String name, String shape) {
        return new Key(name, shape);
    }

    public String word() {
        return word;
    }

    public List<Key> keys() {
        return keys;
    }

    /** {@code word[:k=SHAPE,...]}. */
    public String usage() {
        return word + keys.stream().map(k -> k.name + "=" + k.shape).collect(Collectors.joining(",", "[:", "]"));
    }

    /**
     * The values of {@code spec} ({@code word}, {@code word:k=v,...}, or {@code k=v,...} alone) by key, in the order
     * given; a malformed item is {@code bad}'s exception, whose message says what was wrong.
     */
    public Map<String, String> split(String spec, Function<String, IllegalArgumentException> bad) {
        String s = spec == null || spec.equals(word) ? "" : spec.startsWith(word + ":")
                ? spec.substring(word.length() + 1) : spec;
        Map<String, String> out = new LinkedHashMap<>();
        if (s.isEmpty()) {
            return out;
        }
        for (String item : s.split(",", -1)) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw bad.apply("bad option '" + item + "' (key=value)");
            }
            String key = item.substring(0, eq);
            if (keys.stream().noneMatch(k -> k.name.equals(key))) {
                throw bad.apply("unknown option '" + key + "' (" + keys.stream().map(Key::name)
                        .collect(Collectors.joining(", ")) + ")");
            }
            if (out.put(key, item.substring(eq + 1)) != null) {
                throw bad.apply(key + " given twice");
            }
        }
        return out;
    }
}
