package ernic.mesh;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * Which connection carries a message to a node. A node has its peers' own connections (on the manager, each
 * worker's; on a worker, its direct connections to other workers) and, on a worker, the connection to the
 * manager, which carries what has no direct connection. One rule for both roles: the peer's own connection if it
 * is up, else the manager's if the peer is alive.
 */
final class Router {
    static final int MANAGER = 0;

    private final Map<Integer, MeshLink> peers = new HashMap<>();
    private final IntPredicate alive;
    private MeshLink uplink;

    /** {@code alive}: whether a node is alive in the topology this node knows. */
    Router(IntPredicate alive) {
        this.alive = alive;
    }

    /** The connection a send to {@code dst} goes on now; null when there is none. */
    MeshLink route(int dst) {
        if (dst == MANAGER) {
            return usable(uplink);
        }
        if (!alive.test(dst)) {
            return null;
        }
        MeshLink own = usable(peers.get(dst));
        return own != null ? own : usable(uplink);
    }

    /** {@code peer}'s own connection (not a relay path), handshake done; null when there is none. */
    MeshLink connectionTo(int peer) {
        MeshLink l = peer == MANAGER ? uplink : peers.get(peer);
        return l != null && l.isOpen() ? l : null;
    }

    /** Whether {@code dst} is reached on its own connection, not by way of the manager. */
    boolean isDirect(int dst) {
        return dst != MANAGER && usable(peers.get(dst)) != null;
    }

    private static MeshLink usable(MeshLink l) {
        return l != null && l.isOpen() && l.isActive() ? l : null;
    }

    MeshLink uplink() {
        return uplink;
    }

    void setUplink(MeshLink l) {
        uplink = l;
    }

    boolean hasPeer(int peer) {
        return peers.containsKey(peer);
    }

    /** Makes {@code l} {@code peer}'s own connection; returns the one it replaces (or null). */
    MeshLink putPeer(int peer, MeshLink l) {
        return peers.put(peer, l);
    }

    /** Forgets {@code l} as {@code peer}'s connection; false when it was not. */
    boolean removePeer(int peer, MeshLink l) {
        return peers.remove(peer, l);
    }

    Collection<MeshLink> peerLinks() {
        return peers.values();
    }
}
