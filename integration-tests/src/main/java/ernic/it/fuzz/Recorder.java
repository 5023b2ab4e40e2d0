package ernic.it.fuzz;

import java.util.ArrayDeque;
import java.util.HexFormat;

/**
 * The last inputs a target sent, each with its index, a one-line description (command, fds attached) and its raw
 * bytes: what a reproducer file holds besides the seed and the index.
 */
final class Recorder {
    /** How many inputs a reproducer keeps. */
    static final int KEEP = 64;
    /** Bytes of one input kept (the rest is regenerated from the seed). */
    static final int MAX_BYTES = 4096;

    record Entry(long index, String what, byte[] bytes, int length) {}

    private final ArrayDeque<Entry> last = new ArrayDeque<>();

    /** Records input {@code index}: {@code length} bytes of {@code bytes} (the first {@link #MAX_BYTES} are kept). */
    void add(long index, String what, byte[] bytes, int length) {
        if (last.size() == KEEP) {
            last.removeFirst();
        }
        int keep = Math.min(length, MAX_BYTES);
        byte[] copy = new byte[keep];
        System.arraycopy(bytes, 0, copy, 0, keep);
        last.addLast(new Entry(index, what, copy, length));
    }

    void clear() {
        last.clear();
    }

    /** The entries as text: one header line each, then the bytes in hex, 32 a line. */
    String dump() {
        StringBuilder b = new StringBuilder();
        HexFormat hex = HexFormat.of();
        for (Entry e : last) {
            b.append("# input ").append(e.index()).append(": ").append(e.what()).append(" (").append(e.length())
                    .append(" bytes").append(e.length() > e.bytes().length ? ", first " + e.bytes().length + " kept" : "")
                    .append(")\n");
            for (int at = 0; at < e.bytes().length; at += 32) {
                b.append(hex.formatHex(e.bytes(), at, Math.min(at + 32, e.bytes().length))).append('\n');
            }
        }
        return b.toString();
    }
}
