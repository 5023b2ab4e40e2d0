package ernic.mesh;

import ernic.counters.Counters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The GIDs a node learned from its guest: source addresses the device saw the guest send as itself (its own
 * transmitted frames, its own header templates). At most {@link Wire#MAX_LEARNED_GIDS}; one more is refused and
 * counted ({@code gidsLearnRefused}). A learned GID ages out {@link #AGE_NANOS} after the guest last used it, as the
 * source of a frame or as the source GID of a live QP or AH (the device answers that, {@link #inUse}); the ageing
 * runs once a second on the node's health tick. Declared GIDs are never learned (nor aged).
 *
 * <p>{@link #seen} is on the device's transmit path: it allocates nothing and reads no clock when the GID is
 * known, it only marks it used; the sweep turns the mark into a time. Plain Java on the node's loop.
 */
final class LearnedGids {
    private static final Logger log = LoggerFactory.getLogger(LearnedGids.class);

    static final int MAX = Wire.MAX_LEARNED_GIDS;
    static final long AGE_NANOS = TimeUnit.MINUTES.toNanos(5);
    static final long SWEEP_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final int NONE = -2, DECLARED = -1;

    private final long[] hi = new long[MAX], lo = new long[MAX], lastUsed = new long[MAX];
    private final boolean[] used = new boolean[MAX];
    private int count;
    private long[] declaredHi = new long[0], declaredLo = new long[0];
    /** The GID {@link #seen} last found, and where: a learned index, {@link #DECLARED} or {@link #NONE}. */
    private long lastHi, lastLo;
    private int lastIndex = NONE;
    private long lastSweep;
    private boolean sweptOnce;
    private boolean refusalLogged;
    private Predicate<Gid> inUse = g -> false;

    private final Counters<MeshCounter> counters;
    private final LongSupplier clock;
    private final Runnable changed;

    /** {@code clock}: the node's ticker; {@code changed} runs when the learned set changed (to advertise it). */
    LearnedGids(Counters<MeshCounter> counters, LongSupplier clock, Runnable changed) {
        this.counters = counters;
        this.clock = clock;
        this.changed = changed;
    }

    /** Who says whether a GID is the source GID of a live QP or AH (then it does not age). */
    void inUse(Predicate<Gid> p) {
        inUse = p == null ? g -> false : p;
    }

    /** The declared GIDs: never learned; a learned one that is declared now leaves the learned set. */
    void declared(Set<Gid> gids) {
        long[] h = new long[gids.size()], l = new long[gids.size()];
        int i = 0;
        for (Gid g : gids) {
            h[i] = g.hi();
            l[i++] = g.lo();
        }
        declaredHi = h;
        declaredLo = l;
        lastIndex = NONE;
        boolean removed = false;
        for (int k = count - 1; k >= 0; k--) {
            if (declaredIndex(hi[k], lo[k]) >= 0) {
                removeAt(k);
                removed = true;
            }
        }
        if (removed) {
            changed.run();
        }
    }

    /**
     * The guest used {@code hi:lo} as its source. Returns whether it is this node's (declared or
     * learned) now: false for an address that is not {@link Gid#learnable}, or when the table is full.
     */
    boolean seen(long h, long l) {
        if (lastIndex != NONE && h == lastHi && l == lastLo) {
            if (lastIndex >= 0) {
                used[lastIndex] = true;
            }
            return true;
        }
        int i = find(h, l);
        if (i == NONE && declaredIndex(h, l) >= 0) {
            i = DECLARED;
        }
        if (i == NONE) {
            if (!Gid.learnable(h, l)) {
                return false;
            }
            if (count == MAX) {
                counters.inc(MeshCounter.GIDS_LEARN_REFUSED);
                if (!refusalLogged) {
                    refusalLogged = true;
                    log.warn("mesh: the guest uses a {}th source address ({}); at most {} are learned, the rest "
                            + "are refused (counted as gidsLearnRefused; declare them in ERNIC_TCP_GUEST_GIDS)",
                            MAX + 1, Gid.of(h, l), MAX);
                }
                return false;
            }
            i = count++;
            hi[i] = h;
            lo[i] = l;
            lastUsed[i] = clock.getAsLong();
            used[i] = false;
            counters.inc(MeshCounter.GIDS_LEARNED);
            log.info("mesh: learned GID {} from the guest", Gid.of(h, l));
            changed.run();
        } else if (i >= 0) {
            used[i] = true;
        }
        lastHi = h;
        lastLo = l;
        lastIndex = i;
        return true;
    }

    /** The health tick: at most once a second, ages out what the guest has not used for {@link #AGE_NANOS}. */
    void tick(long now) {
        if (sweptOnce && now - lastSweep < SWEEP_NANOS) {
            return;
        }
        sweptOnce = true;
        lastSweep = now;
        boolean removed = false;
        for (int i = count - 1; i >= 0; i--) {
            if (used[i]) {
                used[i] = false;
                lastUsed[i] = now;
            } else if (now - lastUsed[i] >= AGE_NANOS) {
                Gid g = Gid.of(hi[i], lo[i]);
                if (inUse.test(g)) {
                    lastUsed[i] = now;
                } else {
                    removeAt(i);
                    removed = true;
                    counters.inc(MeshCounter.GIDS_AGED);
                    log.info("mesh: GID {} aged out: the guest has not used it for {} s", g,
                            TimeUnit.NANOSECONDS.toSeconds(AGE_NANOS));
                }
            }
        }
        if (removed) {
            changed.run();
        }
    }

    /** The learned GIDs now. */
    Set<Gid> set() {
        Set<Gid> s = new LinkedHashSet<>(count * 2);
        for (int i = 0; i < count; i++) {
            s.add(Gid.of(hi[i], lo[i]));
        }
        return s;
    }

    int size() {
        return count;
    }

    private int find(long h, long l) {
        for (int i = 0; i < count; i++) {
            if (hi[i] == h && lo[i] == l) {
                return i;
            }
        }
        return NONE;
    }

    private int declaredIndex(long h, long l) {
        for (int i = 0; i < declaredHi.length; i++) {
            if (declaredHi[i] == h && declaredLo[i] == l) {
                return i;
            }
        }
        return -1;
    }

    /** Removes entry {@code i} (the last one takes its place, so a backward loop may go on). */
    private void removeAt(int i) {
        int last = --count;
        hi[i] = hi[last];
        lo[i] = lo[last];
        lastUsed[i] = lastUsed[last];
        used[i] = used[last];
        lastIndex = NONE;
    }
}
