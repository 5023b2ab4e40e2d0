package ernic.counters;

import java.util.Locale;

/**
 * One counter of an enum-described set: its name after the set's prefix ("sq.wqes" in "rdma.sq.wqes"). By default
 * the key is the constant's name in lower case ({@code TX_SENT} is {@code tx_sent}); {@link Grouped} sets put a dot
 * after the group, {@link CamelCase} sets write it in camel case; a set whose names follow none of these spells each
 * key out.
 */
public interface Counter {
    /** The constant's name (every set is an enum). */
    String name();

    /** The name after the set's prefix: by default the constant's name in lower case. */
    default String key() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True for a value that goes up and down (objects in use, bytes queued): a gauge, not a counter. */
    default boolean gauge() {
        return false;
    }

    /**
     * A counter whose key is its constant's name in lower case with the first underscore a dot: the group, then the
     * name within it ({@code MW_BIND_ERRORS} is {@code mw.bind_errors}, {@code BYTES} is {@code bytes}).
     */
    interface Grouped extends Counter {
        @Override
        default String key() {
            String k = Counter.super.key();
            int group = k.indexOf('_');
            return group < 0 ? k : k.substring(0, group) + '.' + k.substring(group + 1);
        }
    }

    /** A counter whose key is its constant's name in camel case ({@code REQUESTS_SENT} is {@code requestsSent}). */
    interface CamelCase extends Counter {
        @Override
        default String key() {
            String name = name();
            StringBuilder k = new StringBuilder(name.length());
            boolean upper = false;
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c == '_') {
                    upper = true;
                } else {
                    k.append(upper ? Character.toUpperCase(c) : Character.toLowerCase(c));
                    upper = false;
                }
            }
            return k.toString();
        }
    }
}
