package ernic.mesh;

import io.netty.buffer.ByteBuf;

import java.util.List;
import java.util.Set;

/**
 * What a manager and a worker do differently: which handshakes they take, which control frames, what they do
 * with DATA, how they react to a connection that comes or goes, and who they hold alive. {@link MeshNode} does
 * the rest (sockets, health checks, sending, counters) alike for both. Everything runs on the node's loop.
 */
sealed interface Side permits ManagerSide, WorkerSide {
    /** The kind of the connections this node accepts. */
    MeshLink.Kind accepts();

    /** The listening socket is up. */
    void started();

    /** This node's send time-out, from the configured (the workers') one. */
    long sendTimeoutNanos(long configured);

    /** A connection this node dialed is up: send its opening frame. */
    void linkActive(MeshLink link);

    /** A frame on a connection whose handshake is not done. */
    void handshake(MeshLink link, Wire.Frame frame);

    /** A TOPOLOGY, GIDS or GID_UPDATE on an open connection. */
    void control(MeshLink link, Wire.Frame frame);

    /**
     * A DATA frame from {@code src} for {@code dst}: {@code frame} is read up to the payload, and starts (its type
     * byte) at {@code start}.
     */
    void data(MeshLink link, int src, int dst, ByteBuf frame, int start);

    /** An open connection became writable again. */
    void linkWritable(MeshLink link);

    /** A connection closed (the node is not closing). */
    void linkClosed(MeshLink link, long now);

    /** What this node claims changed: {@code declared} and {@code learned} GIDs (it has an id). */
    void advertised(Set<Gid> declared, Set<Gid> learned);

    /** The health tick, after the connections' checks. */
    void tick(long now);

    boolean isAlive(int node);

    /** The topology as this node knows it, by node id. */
    List<NodeInfo> topology();
}
