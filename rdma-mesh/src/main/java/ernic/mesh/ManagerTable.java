package ernic.mesh;

import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The manager's node table: who is registered under which id, who is alive, who is evicted, and what changed
 * since the last broadcast. Plain Java on the manager's event loop: it answers with the frames to send (to the
 * newcomer, to every node) and leaves the sending to its caller, so membership is tested without sockets.
 *
 * <p>Ids go out in arrival order and never twice. An instance is known by its nonce: the same instance coming
 * back keeps its id. A worker that had an id from an earlier manager (this one restarted) asks for it and gets
 * it if this manager has not given it out, so workers keep their ids, and their direct connections, across a
 * manager restart. A table of {@code capacity} nodes that is full evicts the node dead longest, or refuses the
 * newcomer when none is dead.
 */
final class ManagerTable {
    private static final Logger log = LoggerFactory.getLogger(ManagerTable.class);

    private static final class Node {
        final int id;
        final long nonce;
        InetSocketAddress address;
        boolean alive;
        long deadSinceNanos;

        Node(int id, long nonce) {
            this.id = id;
            this.nonce = nonce;
        }
    }

    /** What became of a registration. */
    sealed interface Admission {
    }

    /**
     * Registered as {@code id}. {@code revived}: it was not alive before (a new node, or a dead one back).
     * {@code evicted}: the node evicted to make room, -1 for none. {@code welcome}: what the newcomer is sent
     * (its id, the topology, every node's GIDs).
     */
    record Admitted(int id, boolean revived, int evicted, List<Wire.Frame> welcome) implements Admission {
    }

    /** The table is full and nobody in it is dead. */
    record Refused(Wire.Refuse refusal) implements Admission {
    }

    private final TreeMap<Integer, Node> nodes = new TreeMap<>();
    private final int capacity;
    private final Ticker ticker;
    private final GidTable gids;
    private final GidClaims claims;
    private int nextId = 1;
    /** Every id this manager has given out (never again, evicted or not). */
    private final BitSet issued = new BitSet();
    /** Above this a requested id is not granted (a hostile REGISTER must not make the set huge). */
    static final int MAX_REQUESTED_ID = 1 << 20;
    private boolean topologyChanged;
    private final Set<Integer> gidsChanged = new TreeSet<>();

    /** A table holding the manager itself, node 0, alive. */
    ManagerTable(int capacity, long managerNonce, Ticker ticker, GidTable gids, GidClaims claims) {
        this.capacity = capacity;
        this.ticker = ticker;
        this.gids = gids;
        this.claims = claims;
        Node self = new Node(0, managerNonce);
        self.alive = true;
        nodes.put(0, self);
    }

    /**
     * Registers the instance {@code nonce}, which accepts direct connections at {@code address} and asks for
     * {@code requestedId} (0 for none: a new instance).
     */
    Admission register(long nonce, InetSocketAddress address, int requestedId) {
        Node n = null;
        for (Node x : nodes.values()) {
            if (x.id != 0 && x.nonce == nonce) {
                n = x;
                break;
            }
        }
        int evicted = -1;
        if (n == null) {
            if (nodes.size() >= capacity) {
                Node victim = longestDead();
                if (victim == null) {
                    return new Refused(new Wire.Refuse(Wire.REFUSE_FULL,
                            "node table full (" + capacity + " nodes, none dead)"));
                }
                evict(victim);
                evicted = victim.id;
            }
            n = new Node(newId(requestedId), nonce);
            nodes.put(n.id, n);
        }
        n.address = address;
        boolean revived = !n.alive;
        n.alive = true;
        topologyChanged = true;
        if (revived) {
            gidsChanged.add(n.id);
            ownersChanged(claims.alive(n.id, true));
        }
        List<Wire.GidRecord> all = new ArrayList<>();
        for (Node x : nodes.values()) {
            all.add(record(x.id));
        }
        List<Wire.Frame> welcome = List.of(new Wire.RegisterAck(n.id), new Wire.Topology(topology()),
                new Wire.GidUpdate(List.copyOf(all)));
        return new Admitted(n.id, revived, evicted, welcome);
    }

    private Node longestDead() {
        Node victim = null;
        for (Node x : nodes.values()) {
            if (x.id != 0 && !x.alive && (victim == null || x.deadSinceNanos - victim.deadSinceNanos < 0)) {
                victim = x;
            }
        }
        return victim;
    }

    /** The id asked for when this manager never gave it out, else the next one it has not. */
    private int newId(int requested) {
        int id = requested > 0 && requested <= MAX_REQUESTED_ID && !issued.get(requested) ? requested : -1;
        if (id < 0) {
            while (issued.get(nextId)) {
                nextId++;
            }
            id = nextId++;
        }
        issued.set(id);
        return id;
    }

    private void evict(Node victim) {
        nodes.remove(victim.id);
        log.info("mesh manager: evicted node {}, dead for {} ms, to make room", victim.id,
                TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - victim.deadSinceNanos));
        ownersChanged(claims.remove(victim.id));
        gids.apply(victim.id, Set.of());
        gidsChanged.add(victim.id);
        topologyChanged = true;
    }

    /** {@code id} lost its connection; false when it was not alive (or is not in the table). */
    boolean markDead(int id) {
        Node n = nodes.get(id);
        if (n == null || !n.alive || id == 0) {
            return false;
        }
        n.alive = false;
        n.deadSinceNanos = ticker.nanoTime();
        topologyChanged = true;
        gidsChanged.add(id);
        ownersChanged(claims.alive(id, false));
        return true;
    }

    /**
     * {@code id} claims {@code declared} and {@code learned} now; the owned sets that changed go into the
     * {@link GidTable} and out with the next broadcast. False when no owned set changed.
     */
    boolean claim(int id, Set<Gid> declared, Set<Gid> learned) {
        Set<Integer> changed = claims.claim(id, declared, learned);
        ownersChanged(changed);
        return !changed.isEmpty();
    }

    private void ownersChanged(Set<Integer> ids) {
        for (int id : ids) {
            if (id == 0 || nodes.containsKey(id)) {
                gids.apply(id, claims.owned(id));
                gidsChanged.add(id);
            }
        }
    }

    /**
     * What every registered node is sent now: the topology if it changed, and the GID records of the nodes whose
     * sets or liveness changed (a removed record for one evicted). Clears the changes.
     */
    List<Wire.Frame> broadcast() {
        List<Wire.Frame> out = new ArrayList<>(2);
        if (topologyChanged) {
            out.add(new Wire.Topology(topology()));
            topologyChanged = false;
        }
        if (!gidsChanged.isEmpty()) {
            List<Wire.GidRecord> records = new ArrayList<>();
            for (int id : gidsChanged) {
                records.add(record(id));
            }
            gidsChanged.clear();
            out.add(new Wire.GidUpdate(List.copyOf(records)));
        }
        return out;
    }

    private Wire.GidRecord record(int id) {
        Node n = nodes.get(id);
        if (n == null) {
            return new Wire.GidRecord(id, false, true, Set.of());
        }
        return new Wire.GidRecord(id, n.alive, false, gids.of(id));
    }

    /** Every node in the table, by id. */
    List<NodeInfo> topology() {
        List<NodeInfo> out = new ArrayList<>(nodes.size());
        for (Node n : nodes.values()) {
            out.add(new NodeInfo(n.id, n.alive, n.address));
        }
        return List.copyOf(out);
    }

    boolean isAlive(int id) {
        Node n = nodes.get(id);
        return n != null && n.alive;
    }
}
