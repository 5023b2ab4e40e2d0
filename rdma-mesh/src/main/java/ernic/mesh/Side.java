package ernic.mesh;

import ernic.counters.OncePerCause;

import ernic.counters.Counters;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.Ticker;

import java.util.List;
import java.util.Set;

/**
 * What a manager and a worker do differently: which handshakes they take, which control frames, what they do
 * with DATA, how they react to a connection that comes or goes, and who they hold alive. {@link MeshNode} does
 * the rest (sockets, health checks, sending, counters) alike for both. Everything runs on the node's loop.
 *
 * <p>A side is handed what it works with ({@link SideParts}), not the node: this node as a {@link ThisNode}, the
 * connections' common actions, the routes, GID ownership, the counters, the listeners, the configuration, the clock
 * and the once-per-cause warnings.
 */
abstract sealed class Side permits ManagerSide, WorkerSide {
    final ThisNode self;
    final Links links;
    final Router router;
    final GidTable gids;
    final PeerCounters peers;
    final Listeners listeners;
    final Counters<MeshCounter> counters;
    final MeshConfig config;
    final Ticker ticker;
    final OncePerCause warnings;
    /** The kind of the connections this node accepts. */
    final MeshLink.Kind accepts;

    Side(SideParts parts, MeshLink.Kind accepts) {
        this.accepts = accepts;
        this.self = parts.self();
        this.links = parts.links();
        this.router = parts.router();
        this.gids = parts.gids();
        this.peers = parts.peers();
        this.listeners = parts.listeners();
        this.counters = parts.counters();
        this.config = parts.config();
        this.ticker = parts.ticker();
        this.warnings = parts.warnings();
    }

    /** The listening socket is up. */
    abstract void started();

    /** This node's send time-out, from the configured (the workers') one. */
    abstract long sendTimeoutNanos(long configured);

    /** A connection this node dialed is up: send its opening frame. */
    abstract void linkActive(MeshLink link);

    /** A frame on a connection whose handshake is not done. */
    abstract void handshake(MeshLink link, Wire.Frame frame);

    /** A TOPOLOGY, GIDS or GID_UPDATE on an open connection. */
    abstract void control(MeshLink link, Wire.Frame frame);

    /**
     * A DATA frame from {@code src} for {@code dst}: {@code frame} is read up to the payload, and starts (its type
     * byte) at {@code start}.
     */
    abstract void data(MeshLink link, int src, int dst, ByteBuf frame, int start);

    /** An open connection became writable again. */
    abstract void linkWritable(MeshLink link);

    /** A connection closed (the node is not closing). */
    abstract void linkClosed(MeshLink link, long now);

    /** What this node claims changed: {@code declared} and {@code learned} GIDs (it has an id). */
    abstract void advertised(Set<Gid> declared, Set<Gid> learned);

    /** The health tick, after the connections' checks. */
    abstract void tick(long now);

    abstract boolean isAlive(int node);

    /** The topology as this node knows it, by node id. */
    abstract List<NodeInfo> topology();
}
