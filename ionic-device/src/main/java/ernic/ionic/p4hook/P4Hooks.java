package ernic.ionic.p4hook;

import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.eth.FrameFilter;
import ernic.p4.Loader;
import ernic.p4.P4Engine;
import ernic.p4.P4EntryError;
import ernic.p4.P4Refusal;
import ernic.ionic.rdma.WqeFilter;
import ernic.ionic.rdma.WqeHeader;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One loaded program and its hooks on the device (docs/p4.md): every frame between the guest and the TAP
 * ({@link #ethernet()}), every send WQE when the program declares the header type {@code ernic_wqe_t}
 * ({@link #wqe()}), and device commands 70-72 as far as the guest's {@link P4Scope} allows ({@link #commands()}).
 * Device thread only; nothing is allocated per frame or per WQE.
 */
public final class P4Hooks {
    /** The largest frame the engine takes (its own buffers' size). */
    static final int MAX_FRAME = 16 * 1024;

    final P4Engine engine;
    final P4Scope scope;
    private final boolean forWqes;
    final Counters<P4HookCounter> counters = new Counters<>(P4HookCounter.class);
    private final Map<String, Counters<P4TableCounter>> tableSets = new LinkedHashMap<>();
    private final Ethernet ethernet;
    private final Wqe wqe = new Wqe();
    private final P4DeviceCommands commands;
    /** The data path's WQE hook counters ({@code p4.wqe.}), once the hooks are on a device. */
    private Counters<?> wqeCounters;

    P4Hooks(P4Engine engine, P4Scope scope) {
        this.engine = engine;
        this.scope = scope;
        this.forWqes = engine.hasHeaderType(WqeHeader.TYPE_NAME);
        this.ethernet = new Ethernet();
        this.commands = new P4DeviceCommands(this);
        for (String t : engine.tableNames()) {
            tableSets.put(t, new Counters<>(P4TableCounter.class));
        }
        // Digests (generate_digest) go to the log and wait for the guest (devcmd 71 what 1); the engine counts them.
        engine.onDigest(d -> {
            LOG.debug("p4 digest {} {}={}", d.name(), d.fields(), d.values());
            if (digests.size() == DIGEST_QUEUE) {
                digests.poll();
                counters.inc(P4HookCounter.DIGESTS_LOST);
            }
            digests.add(d);
        });
    }

    /** Digests that may wait for the guest; beyond it the oldest is dropped and counted. */
    static final int DIGEST_QUEUE = 256;
    /** Digests the guest has not taken yet, oldest first. */
    final java.util.ArrayDeque<P4Engine.Digest> digests = new java.util.ArrayDeque<>();

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(P4Hooks.class);

    /**
     * Loads a program ({@code json}, or the built-in pass-through when null) and its runtime entries (or none).
     * A program or an entry the engine refuses is an IllegalArgumentException with one line: the file, what and
     * where.
     */
    public static P4Hooks load(String json, String jsonSource, String entries, String entriesSource, P4Scope scope) {
        P4Engine e;
        try {
            e = json == null ? Loader.passThrough() : Loader.load(json);
        } catch (P4Refusal r) {
            throw new IllegalArgumentException("--p4-program " + jsonSource + ": " + r.getMessage(), r);
        }
        if (entries != null) {
            try {
                e.applyEntries(entries, entriesSource);
            } catch (P4EntryError x) {
                throw new IllegalArgumentException("--p4-entries " + x.getMessage(), x);
            }
        }
        return new P4Hooks(e, scope);
    }

    public P4Engine engine() {
        return engine;
    }

    public P4Scope scope() {
        return scope;
    }

    /** True when the program is written for WQEs too (declares {@code ernic_wqe_t}). */
    public boolean forWqes() {
        return forWqes;
    }

    public FrameFilter ethernet() {
        return ethernet;
    }

    /**
     * The clock meters read: the device loop's ticker (a mock one in tests). Its current time becomes the meters'
     * time origin.
     */
    public void clock(io.netty.util.concurrent.Ticker ticker) {
        engine.clock(ticker::nanoTime);
    }

    public WqeFilter wqe() {
        return wqe;
    }

    /** Device commands 70-72, or null when the guest's scope is none (the opcodes then do not exist). */
    public ernic.ionic.base.P4CommandHandler commands() {
        return scope == P4Scope.NONE ? null : commands;
    }

    /** Where refused device commands are counted and logged (once per cause); the device's. */
    Refusals refusals = new Refusals(org.slf4j.LoggerFactory.getLogger(P4Hooks.class));

    /**
     * Puts the hooks on a device: its refusals, and the data path's WQE hook counters (registered with the
     * others from now on).
     */
    public void attach(Refusals deviceRefusals, Counters<?> wqeHookCounters) {
        this.refusals = deviceRefusals;
        this.wqeCounters = wqeHookCounters;
    }

    /**
     * The engine's counters and the hooks' under {@code p4.} ({@code p4.wqe.} for the WQE hook's, when the
     * program runs on WQEs); per-table hits and misses as the family {@code p4.table.}.
     */
    public void registerCounters(CounterRegistry r) {
        r.register("p4.", engine.counters());
        r.register("p4.", counters);
        if (forWqes && wqeCounters != null) {
            r.register("p4.wqe.", wqeCounters);
        }
        r.registerFamily("p4.table.", "table", this::tableCounters);
    }

    /** The family's sets, refreshed from the engine's per-table counts. */
    Map<String, Counters<P4TableCounter>> tableCounters() {
        List<String> names = engine.tableNames();
        long[] hits = engine.tableHits();
        long[] misses = engine.tableMisses();
        for (int i = 0; i < names.size(); i++) {
            Counters<P4TableCounter> c = tableSets.get(names.get(i));
            c.set(P4TableCounter.HITS, hits[i]);
            c.set(P4TableCounter.MISSES, misses[i]);
        }
        return tableSets;
    }

    /** Power-on: the per-table counts start again (the registered sets are zeroed by the registry). */
    public void powerOn() {
        engine.resetTableCounts();
        digests.clear();
    }

    /** Every counter of the engine and the hooks back to zero (devcmd 72, reset counters). */
    void resetCounters() {
        engine.counters().reset();
        counters.reset();
        if (wqeCounters != null) {
            wqeCounters.reset();
        }
        engine.resetTableCounts();
    }

    /**
     * Every output of a frame, in order: its own (the fast path: one output, and when it left unchanged the device's
     * own buffer goes on), then its clones and multicast copies, each written into the one native buffer in turn.
     */
    private final class Ethernet implements FrameFilter {
        private final MemorySegment out = Arena.ofAuto().allocate(MAX_FRAME + 1024, 64);
        private MemorySegment sent = out;
        /** {@link #out} cut to each length a frame has had: made once per length, not once per frame. */
        private final MemorySegment[] slices = new MemorySegment[MAX_FRAME + 1024 + 1];
        /** The last frame's copies not handed on yet: from {@link #nextCopy} to {@link #copies}. */
        private int nextCopy, copies;
        private boolean tx;

        @Override
        public int filter(MemorySegment frame, int from) {
            tx = from == GUEST;
            counters.inc(tx ? P4HookCounter.ETH_TX_FRAMES : P4HookCounter.ETH_RX_FRAMES);
            long len = frame.byteSize();
            int v = P4Engine.DROPPED_TOO_BIG;
            nextCopy = copies = 0;
            if (len <= MAX_FRAME) {
                v = engine.process(frame, from); // copied once, into the engine's packet
                copies = engine.copyCount();
            }
            if (v >= 0 && engine.outputLength() < 14) {
                counters.inc(P4HookCounter.ETH_RUNTS);
                v = P4Engine.DROPPED;
            }
            if (v < 0) {
                // No output of its own (dropped, or sent to a multicast group): its copies, if any.
                int to = copies == 0 ? DROP : next();
                if (to == DROP) {
                    counters.inc(tx ? P4HookCounter.ETH_TX_DROPPED : P4HookCounter.ETH_RX_DROPPED);
                }
                return to;
            }
            if (engine.outputIsInput() && frame.isNative()) {
                sent = frame; // unchanged: the device's own buffer goes on, no copy
            } else {
                int n = engine.outputLength();
                engine.writeOutput(out);
                sent = slice(n);
            }
            sentTo(v);
            return v;
        }

        @Override
        public int next() {
            while (nextCopy < copies) {
                int i = nextCopy++;
                int v = engine.copyVerdict(i);
                if (v < 0) {
                    continue; // dropped by the program: counted by the engine
                }
                int n = engine.copyLength(i);
                if (n < 14) {
                    counters.inc(P4HookCounter.ETH_RUNTS);
                    continue;
                }
                engine.writeCopy(i, out);
                sent = slice(n);
                counters.inc(P4HookCounter.ETH_COPIES_SENT);
                sentTo(v);
                return v;
            }
            return DROP;
        }

        private MemorySegment slice(int n) {
            MemorySegment slice = slices[n];
            if (slice == null) {
                slice = slices[n] = out.asSlice(0, n);
            }
            return slice;
        }

        private void sentTo(int port) {
            if (port == TAP) {
                counters.inc(tx ? P4HookCounter.ETH_TX_TO_TAP : P4HookCounter.ETH_RX_TO_TAP);
            } else {
                counters.inc(tx ? P4HookCounter.ETH_TX_TO_GUEST : P4HookCounter.ETH_RX_TO_GUEST);
            }
        }

        @Override
        public MemorySegment output() {
            return sent;
        }
    }

    private final class Wqe implements WqeFilter {
        @Override
        public boolean run(byte[] header, int length) {
            if (engine.processWqe(header, 0, length) < 0) {
                return false;
            }
            int n = Math.min(engine.outputLength(), length);
            System.arraycopy(engine.output(), 0, header, 0, n);
            java.util.Arrays.fill(header, n, length, (byte) 0);
            return true;
        }
    }
}
