package ernic.mesh;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Which node owns which GID, as this node knows it (both roles keep one): each node's owned set as the manager
 * decided it ({@link GidClaims}), so the sets are disjoint once every record is in. Exact match. A record applied
 * before the one that gives a GID up (the records of one update come in id order) overlaps it for a moment: the
 * GID then belongs to the set applied last, and giving it up later removes only its own ownership. Plain Java,
 * owned by the node's event loop.
 */
final class GidTable {
    /** Told of every change of one node's set (an empty set when the node left). */
    interface Changed {
        void changed(int node, Set<Gid> gids);
    }

    private final Map<Integer, Set<Gid>> byNode = new HashMap<>();
    private final Map<Gid, Integer> owners = new HashMap<>();
    private final Changed changed;

    GidTable(Changed changed) {
        this.changed = changed;
    }

    /** Replaces {@code node}'s set; true (and the listener told) when it changed. */
    boolean apply(int node, Set<Gid> gids) {
        Set<Gid> old = byNode.getOrDefault(node, Set.of());
        if (old.equals(gids)) {
            return false;
        }
        for (Gid g : old) {
            owners.remove(g, node);
        }
        if (gids.isEmpty()) {
            byNode.remove(node);
        } else {
            byNode.put(node, Collections.unmodifiableSet(new LinkedHashSet<>(gids)));
        }
        for (Gid g : gids) {
            owners.put(g, node);
        }
        changed.changed(node, of(node));
        return true;
    }

    /** {@code node}'s set (empty when it has none). */
    Set<Gid> of(int node) {
        return byNode.getOrDefault(node, Set.of());
    }

    OptionalInt owner(Gid gid) {
        Integer o = owners.get(gid);
        return o == null ? OptionalInt.empty() : OptionalInt.of(o);
    }

    Map<Gid, Integer> snapshot() {
        return Map.copyOf(owners);
    }
}
