package ernic.mesh;

import java.nio.file.Path;

/**
 * The mesh part of a {@code --backend} option: {@code tcp:manager:listen:PORT} or {@code tcp:worker:HOST:PORT}
 * (an IPv6 host in brackets, {@code tcp:worker:[fe80::1%eth0]:5000}), optionally followed by
 * {@code ,secret=FILE}: the file holding the mesh's shared secret ({@link MeshSecret}), with which every connection
 * authenticates.
 *
 * @param role       which node this server is
 * @param port       for a manager, the port it listens on
 * @param manager    for a worker, where the manager is
 * @param secretFile the shared secret's file, or null for an unauthenticated mesh
 */
public record MeshSpec(MeshNode.Role role, int port, MeshAddress manager, Path secretFile) {

    public MeshSpec(MeshNode.Role role, int port, MeshAddress manager) {
        this(role, port, manager, null);
    }

    public static MeshSpec parse(String text) {
        int comma = text.indexOf(',');
        String node = comma < 0 ? text : text.substring(0, comma);
        Path secret = comma < 0 ? null : options(text, text.substring(comma + 1));
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
            return new MeshSpec(MeshNode.Role.MANAGER, port, null, secret);
        }
        if (node.startsWith("tcp:worker:")) {
            MeshAddress a = MeshAddress.parse(node.substring("tcp:worker:".length()));
            return new MeshSpec(MeshNode.Role.WORKER, 0, a, secret);
        }
        throw new IllegalArgumentException("expected tcp:manager:listen:PORT or tcp:worker:HOST:PORT"
                + " (then ,secret=FILE), got " + text);
    }

    /** The options after the node part: only {@code secret=FILE}, once. */
    private static Path options(String text, String options) {
        Path secret = null;
        for (String o : options.split(",", -1)) {
            int eq = o.indexOf('=');
            String key = eq < 0 ? o : o.substring(0, eq);
            if (!key.equals("secret")) {
                throw new IllegalArgumentException("unknown mesh option '" + key + "' in " + text
                        + " (the one option is secret=FILE)");
            }
            if (eq < 0 || eq == o.length() - 1) {
                throw new IllegalArgumentException("secret= needs a file in " + text);
            }
            if (secret != null) {
                throw new IllegalArgumentException("secret= given twice in " + text);
            }
            secret = Path.of(o.substring(eq + 1));
        }
        return secret;
    }

    /**
     * {@code base} with this spec's secret read from its file (unless {@code base} has one already). A secret file
     * that is missing, too short or readable by others is an IllegalArgumentException naming the file.
     */
    public MeshConfig config(MeshConfig base) {
        return secretFile == null || base.secret() != null ? base : base.withSecret(MeshSecret.load(secretFile));
    }

    /** Creates the node this spec describes on {@code loop}, with its secret (see {@link #config}). */
    public MeshNode create(io.netty.channel.EventLoopGroup loop, MeshConfig config) {
        MeshConfig c = config(config);
        return role == MeshNode.Role.MANAGER ? MeshNode.manager(loop, port, c) : MeshNode.worker(loop, manager, c);
    }
}
