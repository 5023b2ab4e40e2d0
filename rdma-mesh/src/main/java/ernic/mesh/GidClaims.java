package ernic.mesh;

import ernic.counters.Counters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The manager's record of which node claims which GID, and who owns each: the one place ownership is decided, so
 * every node's {@link GidTable} ends up the same. A node claims GIDs it was told (declared, ERNIC_TCP_GUEST_GIDS)
 * and GIDs it learned from its guest. A GID several nodes claim is a conflict, counted ({@code gidConflicts}) and
 * logged; it goes to the first of its claimers in this order: a live node before a dead one, a declared claim
 * before a learned one, then the earliest claim. So the first owner keeps it, a declared claim takes it from a
 * learned one, a restarted server (a new id) takes over what its dead predecessor had, and when the owner lets go
 * the next claimer has it. Plain Java on the manager's loop.
 */
final class GidClaims {
    private static final Logger log = LoggerFactory.getLogger(GidClaims.class);

    private record Claim(int node, boolean declared, long order) {
    }

    /** Per GID its claims, oldest first. */
    private final Map<Gid, List<Claim>> claims = new HashMap<>();
    /** Per node what it claims: GID → declared. */
    private final Map<Integer, Map<Gid, Boolean>> byNode = new HashMap<>();
    private final Set<Integer> dead = new HashSet<>();
    private final Map<Gid, Integer> owner = new HashMap<>();
    private final Map<Integer, Set<Gid>> owned = new HashMap<>();
    private final Counters<MeshCounter> counters;
    private long order;

    GidClaims(Counters<MeshCounter> counters) {
        this.counters = counters;
    }

    /**
     * Replaces what {@code node} claims ({@code declared} wins where a GID is in both sets); returns the nodes whose
     * owned set changed.
     */
    Set<Integer> claim(int node, Set<Gid> declared, Set<Gid> learned) {
        Map<Gid, Boolean> next = new LinkedHashMap<>();
        learned.forEach(g -> next.put(g, false));
        declared.forEach(g -> next.put(g, true));
        Map<Gid, Boolean> old = byNode.getOrDefault(node, Map.of());
        Set<Gid> touched = new LinkedHashSet<>();
        for (Gid g : old.keySet()) {
            if (!next.containsKey(g)) {
                drop(g, node);
                touched.add(g);
            }
        }
        for (Map.Entry<Gid, Boolean> e : next.entrySet()) {
            Gid g = e.getKey();
            boolean d = e.getValue();
            Boolean was = old.get(g);
            if (was == null) {
                List<Claim> list = claims.computeIfAbsent(g, k -> new ArrayList<>(1));
                list.add(new Claim(node, d, order++));
                touched.add(g);
                if (list.size() > 1) {
                    conflict(g, node, d, list);
                }
            } else if (was != d) {
                List<Claim> list = claims.get(g);
                for (int i = 0; i < list.size(); i++) {
                    if (list.get(i).node() == node) {
                        list.set(i, new Claim(node, d, list.get(i).order()));
                    }
                }
                touched.add(g);
            }
        }
        if (next.isEmpty()) {
            byNode.remove(node);
        } else {
            byNode.put(node, next);
        }
        return resolve(touched);
    }

    /** {@code node} became alive or dead: its claims rank accordingly. */
    Set<Integer> alive(int node, boolean alive) {
        if (alive ? !dead.remove(node) : !dead.add(node)) {
            return Set.of();
        }
        return resolve(byNode.getOrDefault(node, Map.of()).keySet());
    }

    /** {@code node} left the table (evicted): its claims go. */
    Set<Integer> remove(int node) {
        Set<Integer> changed = claim(node, Set.of(), Set.of());
        dead.remove(node);
        owned.remove(node);
        return changed;
    }

    /** What {@code node} owns now. */
    Set<Gid> owned(int node) {
        Set<Gid> s = owned.get(node);
        return s == null ? Set.of() : Collections.unmodifiableSet(s);
    }

    /** The declared (true) and learned (false) claims of {@code node}, for tests and logs. */
    Map<Gid, Boolean> claimsOf(int node) {
        return Map.copyOf(byNode.getOrDefault(node, Map.of()));
    }

    private void drop(Gid g, int node) {
        List<Claim> list = claims.get(g);
        list.removeIf(c -> c.node() == node);
        if (list.isEmpty()) {
            claims.remove(g);
        }
    }

    private void conflict(Gid g, int node, boolean declared, List<Claim> list) {
        counters.inc(MeshCounter.GID_CONFLICTS);
        Claim first = best(list);
        Claim other = null;
        for (Claim c : list) {
            if (c.node() != node) {
                other = c;
                break;
            }
        }
        log.warn("mesh manager: GID {} claimed by node {} ({}) is claimed by node {} ({}) already; node {} owns it",
                g, node, kind(declared), other.node(), kind(other.declared()), first.node());
    }

    private static String kind(boolean declared) {
        return declared ? "declared" : "learned";
    }

    /** Decides the owner of each of {@code gids} again; returns the nodes whose owned set changed. */
    private Set<Integer> resolve(Set<Gid> gids) {
        Set<Integer> changed = new TreeSet<>();
        for (Gid g : gids) {
            List<Claim> list = claims.get(g);
            Integer now = list == null ? null : best(list).node();
            Integer before = now == null ? owner.remove(g) : owner.put(g, now);
            if (java.util.Objects.equals(before, now)) {
                continue;
            }
            if (before != null) {
                Set<Gid> s = owned.get(before);
                s.remove(g);
                if (s.isEmpty()) {
                    owned.remove(before);
                }
                changed.add(before);
            }
            if (now != null) {
                owned.computeIfAbsent(now, k -> new LinkedHashSet<>()).add(g);
                changed.add(now);
                if (before != null) {
                    log.info("mesh manager: GID {} moves from node {} to node {}", g, before, now);
                }
            }
        }
        return changed;
    }

    private Claim best(List<Claim> list) {
        Claim best = null;
        for (Claim c : list) {
            if (best == null || ranksBefore(c, best)) {
                best = c;
            }
        }
        return best;
    }

    private boolean ranksBefore(Claim a, Claim b) {
        boolean aliveA = !dead.contains(a.node()), aliveB = !dead.contains(b.node());
        if (aliveA != aliveB) {
            return aliveA;
        }
        if (a.declared() != b.declared()) {
            return a.declared();
        }
        return a.order() < b.order();
    }
}
