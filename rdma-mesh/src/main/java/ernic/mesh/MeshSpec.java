package ernic.mesh;

import java.nio.file.Path;
import java.util.Locale;

/**
 * The mesh part of a {@code --backend} option: {@code tcp:manager:listen:PORT} or {@code tcp:worker:HOST:PORT}
 * (an IPv6 host in brackets, {@code tcp:worker:[fe80::1%eth0]:5000}), optionally followed by options, each once:
 * <ul>
 * <li>{@code ,secret=FILE}: the file holding the mesh's shared secret ({@link MeshSecret}), with which every
 * connection authenticates;
 * <li>{@code ,queue=BYTES}: the requests each connection queues for its peer before a send answers
 * {@link SendResult#BUSY} (its high write watermark; the low one is half of it), from {@link #QUEUE_MIN} to
 * {@link #QUEUE_MAX}, in bytes or with a K, M or G suffix (powers of 1024).
 * </ul>
 *
 * @param role       which node this server is
 * @param port       for a manager, the port it listens on
 * @param manager    for a worker, where the manager is
 * @param secretFile the shared secret's file, or null for an unauthenticated mesh
 * @param queueBytes the high write watermark of each connection, or 0 for the default
 *                   ({@link MeshConfig#defaults()})
 */
public record MeshSpec(MeshNode.Role role, int port, MeshAddress manager, Path secretFile, int queueBytes) {
    /**
     * The smallest {@code queue=}, 64 KiB (what MeshFaultTest runs with): a smaller budget would only stop and start
     * the SQs more often, since a request larger than the budget goes anyway when the connection is under it.
     */
    public static final int QUEUE_MIN = 64 << 10;
    /** The largest {@code queue=}. */
    public static final int QUEUE_MAX = 1 << 30;

    public MeshSpec(MeshNode.Role role, int port, MeshAddress manager) {
        this(role, port, manager, null, 0);
    }

    public MeshSpec(MeshNode.Role role, int port, MeshAddress manager, Path secretFile) {
        this(role, port, manager, secretFile, 0);
    }

    public MeshSpec {
        if (queueBytes != 0 && (queueBytes < QUEUE_MIN || queueBytes > QUEUE_MAX)) {
            throw new IllegalArgumentException("queueBytes out of range: " + queueBytes);
        }
    }

    public static MeshSpec parse(String text) {
        int comma = text.indexOf(',');
        String node = comma < 0 ? text : text.substring(0, comma);
        Options o = comma < 0 ? new Options() : options(text, text.substring(comma + 1));
        if (node.startsWith("tcp:manager:listen:")) {
            String p = node.substring("tcp:manager:listen:".length());
            int port;
            try {
                port = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in " + text, e);
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range in " + text);
            }
            return new MeshSpec(MeshNode.Role.MANAGER, port, null, o.secret, o.queue);
        }
        if (node.startsWith("tcp:worker:")) {
            MeshAddress a = MeshAddress.parse(node.substring("tcp:worker:".length()));
            return new MeshSpec(MeshNode.Role.WORKER, 0, a, o.secret, o.queue);
        }
        throw new IllegalArgumentException("expected tcp:manager:listen:PORT or tcp:worker:HOST:PORT"
                + " (then ,secret=FILE or ,queue=BYTES), got " + text);
    }

    private static final class Options {
        Path secret;
        int queue;
    }

    /** The options after the node part: {@code secret=FILE} and {@code queue=BYTES}, each at most once. */
    private static Options options(String text, String options) {
        Options r = new Options();
        for (String o : options.split(",", -1)) {
            int eq = o.indexOf('=');
            String key = eq < 0 ? o : o.substring(0, eq);
            String value = eq < 0 ? "" : o.substring(eq + 1);
            switch (key) {
                case "secret" -> {
                    if (value.isEmpty()) {
                        throw new IllegalArgumentException("secret= needs a file in " + text);
                    }
                    if (r.secret != null) {
                        throw new IllegalArgumentException("secret= given twice in " + text);
                    }
                    r.secret = Path.of(value);
                }
                case "queue" -> {
                    if (r.queue != 0) {
                        throw new IllegalArgumentException("queue= given twice in " + text);
                    }
                    r.queue = queueSize(text, value);
                }
                default -> throw new IllegalArgumentException("unknown mesh option '" + key + "' in " + text
                        + " (the options are secret=FILE and queue=BYTES)");
            }
        }
        return r;
    }

    /** {@code queue=}'s value: digits with an optional K, M or G (powers of 1024), 64K to 1G. */
    static int queueSize(String text, String value) {
        String v = value.toUpperCase(Locale.ROOT);
        int shift = v.endsWith("K") ? 10 : v.endsWith("M") ? 20 : v.endsWith("G") ? 30 : 0;
        String digits = shift == 0 ? v : v.substring(0, v.length() - 1);
        long n = -1;
        if (!digits.isEmpty() && digits.length() <= 10 && digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            n = Long.parseLong(digits);
            n = n > QUEUE_MAX >> shift ? -1 : n << shift;
        }
        if (n < QUEUE_MIN || n > QUEUE_MAX) {
            throw new IllegalArgumentException("queue=" + value + " in " + text + ": expected a size from 64K to 1G"
                    + " (bytes, or with a K, M or G suffix)");
        }
        return (int) n;
    }

    /**
     * {@code base} with this spec's secret read from its file (unless {@code base} has one already) and its
     * {@code queue=} as the write watermarks (high, and half of it low). A secret file that is missing, too short
     * or readable by others is an IllegalArgumentException naming the file.
     */
    public MeshConfig config(MeshConfig base) {
        MeshConfig c = queueBytes == 0 ? base : base.withWriteBufferWaterMarks(queueBytes / 2, queueBytes);
        return secretFile == null || c.secret() != null ? c : c.withSecret(MeshSecret.load(secretFile));
    }

    /** Creates the node this spec describes on {@code loop}, with its secret (see {@link #config}). */
    public MeshNode create(io.netty.channel.EventLoopGroup loop, MeshConfig config) {
        MeshConfig c = config(config);
        return role == MeshNode.Role.MANAGER ? MeshNode.manager(loop, port, c) : MeshNode.worker(loop, manager, c);
    }
}
