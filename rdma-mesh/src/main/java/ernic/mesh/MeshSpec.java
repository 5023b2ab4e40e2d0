package ernic.mesh;

/**
 * The mesh part of a {@code --backend} option: {@code tcp:manager:listen:PORT} or {@code tcp:worker:HOST:PORT}
 * (an IPv6 host in brackets, {@code tcp:worker:[fe80::1%eth0]:5000}).
 *
 * @param role    which node this server is
 * @param port    for a manager, the port it listens on
 * @param manager for a worker, where the manager is
 */
public record MeshSpec(MeshNode.Role role, int port, MeshAddress manager) {

    public static MeshSpec parse(String text) {
        if (text.startsWith("tcp:manager:listen:")) {
            String p = text.substring("tcp:manager:listen:".length());
            int port;
            try {
                port = Integer.parseInt(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in " + text, e);
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port out of range in " + text);
            }
            return new MeshSpec(MeshNode.Role.MANAGER, port, null);
        }
        if (text.startsWith("tcp:worker:")) {
            MeshAddress a = MeshAddress.parse(text.substring("tcp:worker:".length()));
            return new MeshSpec(MeshNode.Role.WORKER, 0, a);
        }
        throw new IllegalArgumentException("expected tcp:manager:listen:PORT or tcp:worker:HOST:PORT, got " + text);
    }

    /** Creates the node this spec describes on {@code loop}. */
    public MeshNode create(io.netty.channel.EventLoopGroup loop, MeshConfig config) {
        return role == MeshNode.Role.MANAGER ? MeshNode.manager(loop, port, config)
                : MeshNode.worker(loop, manager, config);
    }
}
