package ernic.p4;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A match-action table. The lookup key is the byte-padded key fields concatenated (each masked by its
 * static mask); an entry holds, per key byte, a value and a mask (exact: all ones; lpm: the prefix; ternary:
 * its mask), plus bounds for range fields. Entries are kept sorted by precedence, so the first match wins:
 * lpm by prefix length, ternary and range by priority (a lower number wins, as in bmv2), ties by age.
 */
final class Table extends Node {
    enum MatchKind { EXACT, LPM, TERNARY, RANGE, VALID, OPTIONAL }

    record Key(String name, MatchKind kind, Expr source, int offset, int bytes, int bits, byte[] staticMask) {
    }

    /**
     * An action profile: members (an action with its data) by handle, and, with a selector, groups of members and
     * the calculation whose hash picks a group's member for a frame. A deleted member or group leaves a null.
     */
    static final class Profile {
        final String name;
        final int maxSize;
        final Calc selector;
        final List<ActionData> members = new ArrayList<>();
        final List<Group> groups = new ArrayList<>();

        Profile(String name, int maxSize, Calc selector) {
            this.name = name;
            this.maxSize = maxSize;
            this.selector = selector;
        }

        ActionData member(int h) {
            if (h < 0 || h >= members.size() || members.get(h) == null) {
                throw new IllegalArgumentException("action profile " + name + " has no member " + h);
            }
            return members.get(h);
        }

        Group group(int h) {
            if (selector == null) {
                throw new IllegalArgumentException("action profile " + name + " has no selector: no groups");
            }
            if (h < 0 || h >= groups.size() || groups.get(h) == null) {
                throw new IllegalArgumentException("action profile " + name + " has no group " + h);
            }
            return groups.get(h);
        }
    }

    /**
     * A group of an action selector: member handles in ascending order; a frame's selector hash modulo the group's
     * size picks one (simple_switch's rule), so every frame of one flow takes the same member.
     */
    static final class Group {
        final Profile profile;
        final int handle;
        int[] members = new int[0];

        Group(Profile profile, int handle) {
            this.profile = profile;
            this.handle = handle;
        }

        /** The member for this frame, or null for an empty group (the entry then does nothing, as in bmv2). */
        ActionData choose(Packet p) {
            if (members.length == 0) {
                return null;
            }
            long h = profile.selector.compute(p);
            return profile.members.get(members[(int) Long.remainderUnsigned(h, members.length)]);
        }
    }

    static final class Entry {
        final int handle;
        final byte[] value;
        final byte[] mask;
        final byte[] lo;
        final byte[] hi;
        final int prefix;
        final int priority;
        final long age;
        ActionData data;
        long packets;
        long bytes;
        /** The entry's cell of the table's direct meter, or null. */
        Meter meter;

        Entry(int handle, byte[] value, byte[] mask, byte[] lo, byte[] hi, int prefix, int priority, long age,
              ActionData data) {
            this.handle = handle;
            this.value = value;
            this.mask = mask;
            this.lo = lo;
            this.hi = hi;
            this.prefix = prefix;
            this.priority = priority;
            this.age = age;
            this.data = data;
        }
    }

    final MatchKind matchKind;
    final Key[] keys;
    final int keyBytes;
    final Action[] actions;
    final int maxSize;
    final boolean withCounters;
    final Profile profile;
    /** The table's direct meter (its spec) and the field its colour goes to on a hit, or null. */
    Meter.Spec directMeter;
    Expr.Field directMeterTarget;
    /** Entries from the JSON make the table immutable (the default entry aside). */
    boolean immutable;
    boolean defaultActionConst;
    boolean defaultEntryConst;
    ActionData defaultEntry;
    /** The default entry the program gave (table_reset_default goes back to it). */
    ActionData programDefault;
    Node[] nextByAction;
    /** The actions next_tables names (possibly with a null next); the others go to base_default_next. */
    boolean[] explicitNext;
    Node baseDefaultNext;
    boolean hitMiss;
    Node nextHit;
    Node nextMiss;
    long hits;
    long misses;

    private final byte[] keyBuf;
    private Entry[] sorted = new Entry[0];
    /** The hash index of an exact table (open addressing), or null. */
    private Entry[] index;
    /**
     * An exact table whose key fits a long (a MAC address, a port) is looked up by that long: no key bytes are built
     * per frame. Then each index slot's entry value, as a long, is in {@link #indexKeys}.
     */
    private final boolean longKeys;
    /**
     * For a long key, each key field's slot when it is a narrow unsigned field named directly (read from the PHV
     * without a call), else -1.
     */
    private final int[] keySlots;
    private long[] indexKeys;
    private final List<Entry> live = new ArrayList<>();
    private int nextHandle;
    private long ages;

    Table(String name, MatchKind matchKind, Key[] keys, Action[] actions, int maxSize, boolean withCounters,
          Profile profile) {
        super(name);
        this.matchKind = matchKind;
        this.keys = keys;
        int n = 0;
        for (Key k : keys) {
            n += k.bytes;
        }
        this.keyBytes = n;
        this.keyBuf = new byte[n];
        this.actions = actions;
        this.maxSize = maxSize;
        this.withCounters = withCounters;
        this.profile = profile;
        this.nextByAction = new Node[actions.length];
        this.explicitNext = new boolean[actions.length];
        boolean narrow = n <= 8;
        for (Key k : keys) {
            narrow &= k.source.kind != Expr.Kind.WIDE;
        }
        this.longKeys = narrow && exactOnly();
        this.keySlots = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            keySlots[i] = keys[i].source instanceof Expr.Field f && !f.signed ? f.fixedSlot() : -1;
        }
    }

    int actionIndex(Action a) {
        for (int i = 0; i < actions.length; i++) {
            if (actions[i] == a) {
                return i;
            }
        }
        return -1;
    }

    @Override
    Node run(Packet p) {
        Entry e = longKeys ? lookupLong(p) : lookup(p);
        ActionData d;
        if (e != null) {
            hits++;
            p.externs.counters.inc(P4Counter.TABLE_HITS);
            if (withCounters) {
                e.packets++;
                e.bytes += p.inLen;
            }
            if (e.meter != null) {
                directMeterTarget.set(p, e.meter.execute(p.micros, directMeter.bytes() ? p.inLen : 1));
            }
            d = e.data;
        } else {
            misses++;
            p.externs.counters.inc(P4Counter.TABLE_MISSES);
            d = defaultEntry;
        }
        if (d != null && d.hasGroup()) {
            d = d.group().choose(p);
        }
        if (d != null) {
            d.run(p);
        }
        if (hitMiss) {
            return e != null ? nextHit : nextMiss;
        }
        return d == null ? baseDefaultNext : nextAfter(d.action());
    }

    /** The node after action {@code a}; the last answer is kept, as a table's frames mostly run the same action. */
    private Node nextAfter(Action a) {
        if (a != lastAction || a == null) {
            int i = actionIndex(a);
            lastNext = i >= 0 && explicitNext[i] ? nextByAction[i] : baseDefaultNext;
            lastAction = a;
        }
        return lastNext;
    }

    private Action lastAction;
    private Node lastNext;

    private void buildKey(Packet p) {
        for (Key k : keys) {
            if (k.source.kind == Expr.Kind.WIDE) {
                byte[] w = k.source.wide(p);
                System.arraycopy(w, w.length - k.bytes, keyBuf, k.offset, k.bytes);
            } else {
                Bits.longToBytes(k.source.num(p), keyBuf, k.offset, k.bytes);
            }
            if (k.staticMask != null) {
                for (int i = 0; i < k.bytes; i++) {
                    keyBuf[k.offset + i] &= k.staticMask[i];
                }
            }
        }
    }

    private Entry lookup(Packet p) {
        buildKey(p);
        Entry[] idx = index;
        if (idx != null) {
            int m = idx.length - 1;
            for (int i = hash(keyBuf) & m; idx[i] != null; i = (i + 1) & m) {
                if (sameKey(idx[i].value, keyBuf)) {
                    return idx[i];
                }
            }
            return null;
        }
        for (Entry e : sorted) {
            if (matches(e)) {
                return e;
            }
        }
        return null;
    }

    /** The key as a long: the key fields' byte-padded values, masked, concatenated (what the key bytes say). */
    private long longKey(Packet p) {
        long key = 0;
        for (int i = 0; i < keys.length; i++) {
            Key k = keys[i];
            int slot = keySlots[i];
            long v = Bits.truncate(slot >= 0 ? p.phv.val[slot] : k.source.num(p), k.bytes * 8);
            if (k.staticMask != null) {
                v &= Bits.bytesToLong(k.staticMask, 0, k.bytes);
            }
            key = k.bytes == 8 ? v : (key << (8 * k.bytes)) | v; // eight bytes: the only key field
        }
        return key;
    }

    private Entry lookupLong(Packet p) {
        Entry[] idx = index;
        if (idx == null) {
            return null;
        }
        long key = longKey(p);
        int m = idx.length - 1;
        for (int i = hash(key) & m; idx[i] != null; i = (i + 1) & m) {
            if (indexKeys[i] == key) {
                return idx[i];
            }
        }
        return null;
    }

    private boolean matches(Entry e) {
        for (Key k : keys) {
            int o = k.offset;
            if (k.kind == MatchKind.RANGE) {
                if (Arrays.compareUnsigned(keyBuf, o, o + k.bytes, e.lo, o, o + k.bytes) < 0
                        || Arrays.compareUnsigned(keyBuf, o, o + k.bytes, e.hi, o, o + k.bytes) > 0) {
                    return false;
                }
                continue;
            }
            for (int i = o; i < o + k.bytes; i++) {
                if (((keyBuf[i] ^ e.value[i]) & e.mask[i]) != 0) {
                    return false;
                }
            }
        }
        return true;
    }

    // ---- control plane ----

    int size() {
        return live.size();
    }

    /** Adds an entry; returns its handle. The value is masked here, so lookups compare masked bytes. */
    int add(byte[] value, byte[] mask, byte[] lo, byte[] hi, int prefix, int priority, ActionData data) {
        if (immutable) {
            throw new IllegalArgumentException("table " + name + " has const entries and cannot be changed");
        }
        return addEntry(value, mask, lo, hi, prefix, priority, data);
    }

    int addEntry(byte[] value, byte[] mask, byte[] lo, byte[] hi, int prefix, int priority, ActionData data) {
        if (live.size() >= maxSize) {
            throw new IllegalArgumentException("table " + name + " is full (" + maxSize + " entries)");
        }
        checkAction(data);
        for (int i = 0; i < value.length; i++) {
            value[i] &= mask[i];
        }
        for (Entry e : live) {
            if (Arrays.equals(e.value, value) && Arrays.equals(e.mask, mask) && Arrays.equals(e.lo, lo)
                    && Arrays.equals(e.hi, hi) && (usesPriority() ? e.priority == priority : true)) {
                throw new IllegalArgumentException("duplicate entry in table " + name + " (handle " + e.handle + ")");
            }
        }
        Entry e = new Entry(nextHandle++, value, mask, lo, hi, prefix, priority, ages++, data);
        if (directMeter != null) {
            e.meter = new Meter(directMeter.rateCount());
        }
        live.add(e);
        resort();
        return e.handle;
    }

    boolean usesPriority() {
        return matchKind == MatchKind.TERNARY || matchKind == MatchKind.RANGE;
    }

    void delete(int handle) {
        if (immutable) {
            throw new IllegalArgumentException("table " + name + " has const entries and cannot be changed");
        }
        if (!live.removeIf(e -> e.handle == handle)) {
            throw new IllegalArgumentException("table " + name + " has no entry with handle " + handle);
        }
        resort();
    }

    void modify(int handle, ActionData data) {
        if (immutable) {
            throw new IllegalArgumentException("table " + name + " has const entries and cannot be changed");
        }
        checkAction(data);
        for (Entry e : live) {
            if (e.handle == handle) {
                e.data = data;
                return;
            }
        }
        throw new IllegalArgumentException("table " + name + " has no entry with handle " + handle);
    }

    void clear() {
        if (immutable) {
            throw new IllegalArgumentException("table " + name + " has const entries and cannot be changed");
        }
        live.clear();
        resort();
    }

    void setDefault(ActionData data) {
        if (defaultActionConst && (defaultEntry == null || data.action() != defaultEntry.action())) {
            throw new IllegalArgumentException("table " + name + " has a const default action");
        }
        if (defaultEntryConst) {
            throw new IllegalArgumentException("table " + name + " has a const default entry");
        }
        checkAction(data);
        defaultEntry = data;
    }

    /** Every entry (and the default) that holds {@code old} holds {@code now} instead (a modified profile member). */
    void replaceData(ActionData old, ActionData now) {
        for (Entry e : live) {
            if (e.data == old) {
                e.data = now;
            }
        }
        if (defaultEntry == old) {
            defaultEntry = now;
        }
    }

    /** The live entry with this handle. */
    Entry entry(int handle) {
        for (Entry e : live) {
            if (e.handle == handle) {
                return e;
            }
        }
        throw new IllegalArgumentException("table " + name + " has no entry with handle " + handle);
    }

    List<Entry> entries() {
        return List.copyOf(live);
    }

    private void checkAction(ActionData d) {
        if (d.group() != null) {
            if (d.group().profile != profile) {
                throw new IllegalArgumentException("group " + d.group().handle + " is not of table " + name + "'s profile");
            }
            if (d.group().members.length == 0) {
                throw new IllegalArgumentException("group " + d.group().handle + " is empty");
            }
            return;
        }
        Action a = d.action();
        if (actionIndex(a) < 0) {
            throw new IllegalArgumentException("action " + a.name + " is not an action of table " + name);
        }
    }

    private void resort() {
        Entry[] s = live.toArray(Entry[]::new);
        Comparator<Entry> order = switch (matchKind) {
            case LPM -> Comparator.comparingInt((Entry e) -> -e.prefix);
            case TERNARY, RANGE -> Comparator.comparingInt((Entry e) -> e.priority);
            default -> Comparator.comparingInt((Entry e) -> 0);
        };
        Arrays.sort(s, order.thenComparingLong(e -> e.age));
        sorted = s;
        index = exactOnly() ? buildIndex(s) : null;
        if (longKeys) {
            indexKeys = new long[index.length];
            for (int i = 0; i < index.length; i++) {
                indexKeys[i] = index[i] == null ? 0 : Bits.bytesToLong(index[i].value, 0, keyBytes);
            }
        }
    }

    /** An exact table with only exact (and validity) key fields is looked up in a hash index, not scanned. */
    private boolean exactOnly() {
        if (matchKind != MatchKind.EXACT) {
            return false;
        }
        for (Key k : keys) {
            if (k.kind != MatchKind.EXACT && k.kind != MatchKind.VALID) {
                return false;
            }
        }
        return true;
    }

    private Entry[] buildIndex(Entry[] entries) {
        Entry[] idx = new Entry[Integer.highestOneBit(Math.max(4, entries.length * 2)) * 2];
        int m = idx.length - 1;
        for (Entry e : entries) {
            int i = (longKeys ? hash(Bits.bytesToLong(e.value, 0, keyBytes)) : hash(e.value)) & m;
            while (idx[i] != null) {
                i = (i + 1) & m;
            }
            idx[i] = e;
        }
        return idx;
    }

    // hash and sameKey are loops, not Arrays.hashCode and Arrays.equals: a key is a few bytes, too few for their
    // vectorised forms to pay for their set-up (measured: a third of an exact lookup on a MAC address).
    private static int hash(byte[] key) {
        int h = 1;
        for (byte b : key) {
            h = 31 * h + b;
        }
        return h ^ (h >>> 16);
    }

    private static int hash(long key) {
        long h = key * 0x9e37_79b9_7f4a_7c15L; // Fibonacci hashing: the high bits mix every key bit
        return (int) (h >>> 32);
    }

    private static boolean sameKey(byte[] a, byte[] b) {
        if (a.length != b.length) {
            return false;
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != b[i]) {
                return false;
            }
        }
        return true;
    }
}
