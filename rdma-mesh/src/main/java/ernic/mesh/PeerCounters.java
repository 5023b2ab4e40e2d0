package ernic.mesh;

import ernic.counters.Counters;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** One {@link PeerCounter} set per peer this node has dealt with; the node's event loop only. */
final class PeerCounters {
    private final Map<Integer, Counters<PeerCounter>> sets = new TreeMap<>();
    /** Peers connected at least once: the next connection is a reconnect. */
    private final Set<Integer> connected = new HashSet<>();

    Counters<PeerCounter> of(int peer) {
        return sets.computeIfAbsent(peer, k -> new Counters<>(PeerCounter.class));
    }

    void connected(int peer) {
        Counters<PeerCounter> c = of(peer);
        if (!connected.add(peer)) {
            c.inc(PeerCounter.RECONNECTS);
        }
    }

    /** A peer evicted from the table: its id is never given out again. */
    void forget(int peer) {
        sets.remove(peer);
        connected.remove(peer);
    }

    /** Every set by peer id as a string, each queue depth set from the peer's connection in {@code router} now. */
    Map<String, Counters<PeerCounter>> sets(Router router) {
        Map<String, Counters<PeerCounter>> m = new LinkedHashMap<>();
        for (Map.Entry<Integer, Counters<PeerCounter>> e : sets.entrySet()) {
            MeshLink l = router.connectionTo(e.getKey());
            e.getValue().set(PeerCounter.QUEUE_DEPTH, l == null ? 0 : l.queuedBytes());
            m.put(Integer.toString(e.getKey()), e.getValue());
        }
        return m;
    }

    /** One set as the stats file shows it: key to value, in declaration order. */
    static Map<String, Long> view(Counters<PeerCounter> c) {
        Map<String, Long> m = new LinkedHashMap<>();
        c.forEach(m::put);
        return m;
    }
}
