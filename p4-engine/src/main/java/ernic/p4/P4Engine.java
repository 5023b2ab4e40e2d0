package ernic.p4;

import java.util.function.Consumer;
import ernic.counters.Counters;

import java.util.List;
import java.util.StringJoiner;

/**
 * A loaded program running v1model (simple_switch) semantics on frames, one at a time, on the caller's
 * thread. The port model: the TAP side (the wire) is port {@value #PORT_TAP}, the guest is port
 * {@value #PORT_GUEST}. A frame from the guest enters with ingress_port 1, one from the TAP with 0; an
 * egress_spec of 0 sends it toward the TAP, 1 toward the guest (so egress_spec = ingress_port sends it back),
 * 511 drops it; any other port does not exist and the frame is dropped and counted.
 *
 * <p>One frame: standard_metadata reset (ingress_port, packet_length set); parser (an error goes to
 * standard_metadata.parser_error, the frame goes on); checksum verification (a mismatch sets
 * checksum_error); ingress; mcast_grp set: one copy per port of the group ({@link #copies()}), the frame itself goes
 * no further; else drop if egress_spec is 511; egress_port = egress_spec; egress; drop if egress_spec is then 511;
 * checksum update; deparser.
 */
public final class P4Engine {
    public static final int PORT_TAP = 0;
    public static final int PORT_GUEST = 1;
    /**
     * The port a send WQE enters on ({@link #processWqe}): the RDMA data path. It is never an egress port: a WQE
     * either goes on (any egress_spec but 511) or is dropped.
     */
    public static final int PORT_WQE = 2;
    /** The verdict of {@link #processWqe} for a WQE that goes on. */
    public static final int PASS = 0;
    /** Verdicts of {@link #process} that are not a port. */
    public static final int DROPPED = -1;
    public static final int DROPPED_NO_SUCH_PORT = -2;
    public static final int DROPPED_MULTICAST = -3;
    public static final int DROPPED_ASSERT = -4;
    public static final int DROPPED_TOO_BIG = -5;
    /** Dropped because it was resubmitted or recirculated more than {@value Replication#MAX_PASSES} times. */
    public static final int DROPPED_LOOP = -6;
    /**
     * The frame went to a multicast group (mcast_grp): it has no output of its own; its copies, one per port of the
     * group's nodes, are {@link #copies()}. (A group that does not exist or has no port: {@link #DROPPED_MULTICAST}.)
     */
    public static final int REPLICATED = -7;
    private static final byte[] NO_BYTES = new byte[0];
    /** The bits of a mirror session id (as simple_switch keeps them). */
    static final int MIRROR_SESSION_MASK = 0x7fff;

    /**
     * A copy the last frame made (a clone, ingress or egress, or a multicast copy): its verdict (a port or a DROPPED
     * value), its bytes as they left (empty when dropped), its instance_type (1 ingress clone, 2 egress clone,
     * 5 multicast copy) and its egress_rid (the multicast node's replication id; 0 for a clone to a port).
     */
    public record Copy(int verdict, byte[] frame, int instanceType, int egressRid) {
    }

    /** A digest (generate_digest): the learn list's name, its fields' names and their values when it was made. */
    public record Digest(String name, List<String> fields, List<java.math.BigInteger> values) {
    }

    final Program program;
    private final Packet pkt;
    /** The packet's output array as a segment (a segment-to-segment copy costs less than an array's). */
    private final java.lang.foreign.MemorySegment outSegment;
    private final Parser.Run run = new Parser.Run();
    private final Table[] tables;
    /** The program's checksums as an array: a loop over the list allocated an iterator per frame. */
    private final Program.Checksum[] checksums;
    private final long[] hits;
    private final long[] misses;
    private final Replication replication;
    private final java.util.ArrayDeque<Replication.Job> jobs = new java.util.ArrayDeque<>();
    private final List<Copy> copies = new java.util.ArrayList<>();
    /**
     * The clock meters read, in nanoseconds, and its value at the time origin: the caller's ({@link #clock}); until
     * it gives one, time stands at 0 (the engine reads no clock of its own: the device gives its loop's).
     */
    private java.util.function.LongSupplier clock = () -> 0;
    private long origin;
    /** The multicast group the last frame went to (mcast_grp), or 0. */
    private int lastGroup;
    private final boolean timed;
    /** The standard_metadata fields every frame's path reads and writes. */
    private final StdMeta.Slot ingressPort, packetLength, parserError, mcastGrp, egressSpec, instanceType, egressPort;

    P4Engine(Program program) {
        this.program = program;
        this.pkt = new Packet(program.layout, program.externs);
        this.outSegment = java.lang.foreign.MemorySegment.ofArray(pkt.out);
        this.tables = program.tables.toArray(Table[]::new);
        this.checksums = program.checksums.toArray(Program.Checksum[]::new);
        this.hits = new long[tables.length];
        this.misses = new long[tables.length];
        this.replication = new Replication(program);
        boolean anyDirect = program.tables.stream().anyMatch(t -> t.directMeter != null);
        this.timed = anyDirect || program.externs.meters.length > 0;
        StdMeta sm = program.std;
        this.ingressPort = new StdMeta.Slot(sm.ingressPort());
        this.packetLength = new StdMeta.Slot(sm.packetLength());
        this.parserError = new StdMeta.Slot(sm.parserError());
        this.mcastGrp = new StdMeta.Slot(sm.mcastGrp());
        this.egressSpec = new StdMeta.Slot(sm.egressSpec());
        this.instanceType = new StdMeta.Slot(sm.instanceType());
        this.egressPort = new StdMeta.Slot(sm.egressPort());
    }

    /**
     * The clock meters read (nanoseconds; the device's clock, a test's, or the pcap's time stamps in {@code p4 run}).
     * Its current value becomes the time origin.
     */
    public void clock(java.util.function.LongSupplier nanos) {
        this.clock = nanos;
        this.origin = nanos.getAsLong();
    }

    /** Runs one frame that entered on {@code inPort}. Returns the egress port, or a DROPPED verdict. */
    public int process(byte[] frame, int off, int len, int inPort) {
        return run(frame, off, len, inPort, false);
    }

    /**
     * Runs one send WQE header (the hook's documented layout) entering on {@link #PORT_WQE}. Returns {@link #PASS}
     * when it goes on (whatever egress_spec says, but 511), or a DROPPED verdict; {@link #output()} holds the
     * header as the program deparsed it.
     */
    public int processWqe(byte[] header, int off, int len) {
        int v = run(header, off, len, PORT_WQE, true);
        return v >= 0 ? PASS : v;
    }

    /**
     * {@link #process(byte[], int, int, int)} of a frame in a memory segment (the device's gather buffer). Its bytes
     * are copied into the engine as the program reads them, and its payload by {@link #output()} and
     * {@link #writeOutput}: the segment must stay as it is until the caller has the output (the next call at the
     * latest).
     */
    public int process(java.lang.foreign.MemorySegment frame, int inPort) {
        long len = frame.byteSize();
        if (len > Packet.MAX_FRAME) {
            return run(null, 0, Packet.MAX_FRAME + 1, inPort, false);
        }
        pkt.start(frame);
        return run(null, 0, (int) len, inPort, false);
    }

    /** One frame or WQE header; {@code frame} null when it is in the packet's input already. */
    private int run(byte[] frame, int off, int len, int inPort, boolean anyPort) {
        Counters<P4Counter> c = program.externs.counters;
        c.inc(P4Counter.FRAMES_IN);
        if (!copies.isEmpty()) {
            copies.clear();
        }
        lastGroup = 0;
        if (len > Packet.MAX_FRAME) {
            c.inc(P4Counter.DROPS_TOO_BIG);
            return DROPPED_TOO_BIG;
        }
        Packet p = pkt;
        if (frame != null) {
            p.start(frame, off, len);
        }
        p.inIsInput = true;
        if (timed) {
            p.micros = (clock.getAsLong() - origin) / 1000;
        }
        ingressPort.set(p, inPort);
        packetLength.set(p, len);
        int v = passes(p, -1, anyPort);
        return jobs.isEmpty() ? v : runCopies(p, v, anyPort);
    }

    /**
     * The copies the frame made on its way (clones, multicast), each through egress; the frame's own output, verdict
     * {@code v}, is kept aside meanwhile. (Apart from {@link #run}, which then stays small enough to be inlined.)
     */
    private int runCopies(Packet p, int v, boolean anyPort) {
        Counters<P4Counter> c = program.externs.counters;
        p.completeOutput();
        byte[] own = java.util.Arrays.copyOf(p.out, p.outLen);
        int made = 0;
        while (!jobs.isEmpty()) {
            Replication.Job j = jobs.poll();
            if (++made > Replication.MAX_COPIES) {
                c.inc(P4Counter.DROPS_LOOP);
                continue;
            }
            int cv = passes(p, j.restore(p, program), anyPort);
            p.completeOutput();
            copies.add(new Copy(cv, cv >= 0 ? java.util.Arrays.copyOf(p.out, p.outLen) : NO_BYTES, j.instanceType(),
                    Math.max(j.rid(), 0)));
        }
        jobs.clear();
        // The frame's own output back where output() is: the hooks wrap that one array once.
        System.arraycopy(own, 0, p.out, 0, own.length);
        p.outLen = own.length;
        p.headLen = own.length;
        p.payloadOut = true;
        p.inIsInput = false; // p.in holds the last clone's bytes
        return v;
    }

    /**
     * Runs the ingress or egress control; an exit ends that control only. False: an assert failed, and the frame is
     * dropped (counted).
     */
    private boolean control(Node first, Packet p) {
        if (first != null) { // most programs' egress is empty: no call
            Node.runPipeline(first, p);
        }
        p.exit = false;
        if (p.assertFailed) {
            program.externs.counters.inc(P4Counter.DROPS_ASSERT);
            return false;
        }
        return true;
    }

    /**
     * One frame's way through the switch, from ingress (or, for a clone, from egress on {@code toPort}) through
     * every resubmission and recirculation, as simple_switch takes it: after ingress the ingress clone, the digest,
     * resubmit, multicast and drop; after egress the egress clone, drop, the deparser, recirculate.
     */
    private int passes(Packet p, int toPort, boolean anyPort) {
        Counters<P4Counter> c = program.externs.counters;
        int loops = 0;
        while (true) {
            long port = toPort;
            if (toPort < 0) {
                int ingressLen = p.inLen;
                int err = program.parser.parse(p, run);
                if (err != program.errors.noError()) {
                    c.inc(P4Counter.PARSER_ERRORS);
                }
                // Always, as simple_switch does: a program whose errors number NoError 1 must read 1, not 0.
                parserError.set(p, err);
                checksums(p, true);
                if (!control(program.ingress, p)) {
                    return DROPPED_ASSERT;
                }
                if (p.cloneSession >= 0) {
                    replication.ingressClone(p, jobs);
                }
                if (p.learnList != 0) {
                    replication.digest(p);
                }
                if (p.resubmitList != 0) {
                    if (++loops > Replication.MAX_PASSES) {
                        c.inc(P4Counter.DROPS_LOOP);
                        return DROPPED_LOOP;
                    }
                    replication.again(p, p.resubmitList, Replication.RESUBMIT, ingressLen);
                    continue;
                }
                long mgid = mcastGrp.get(p);
                if (mgid != 0) {
                    // The frame itself is discarded; its copies (the PHV with them) go through egress as jobs.
                    lastGroup = (int) mgid;
                    instanceType.set(p, Replication.REPLICATION);
                    if (replication.multicast(p, (int) mgid, jobs) == 0) {
                        c.inc(P4Counter.DROPS_MULTICAST);
                        return DROPPED_MULTICAST;
                    }
                    return REPLICATED;
                }
                port = egressSpec.get(p);
                if (port == StdMeta.DROP_PORT) {
                    c.inc(P4Counter.DROPS);
                    return DROPPED;
                }
                instanceType.set(p, Replication.NORMAL);
            }
            toPort = -1;
            egressPort.set(p, port);
            packetLength.set(p, p.lengthRegister);
            // simple_switch starts egress with egress_spec one past the drop port (in 9 bits: 0), so only an egress
            // that drops leaves 511 there.
            egressSpec.set(p, StdMeta.DROP_PORT + 1);
            if (!control(program.egress, p)) {
                return DROPPED_ASSERT;
            }
            if (p.cloneSession >= 0) {
                replication.egressClone(p, jobs);
            }
            if (egressSpec.get(p) == StdMeta.DROP_PORT) {
                c.inc(P4Counter.DROPS);
                return DROPPED;
            }
            checksums(p, false);
            if (!program.deparser.deparse(p)) {
                c.inc(P4Counter.DROPS_TOO_BIG);
                return DROPPED_TOO_BIG;
            }
            if (p.truncateTo >= 0 && p.truncateTo < p.outLen) {
                p.outLen = p.truncateTo;
            }
            if (p.recirculateList != 0) {
                if (++loops > Replication.MAX_PASSES) {
                    c.inc(P4Counter.DROPS_LOOP);
                    return DROPPED_LOOP;
                }
                replication.recirculate(p);
                continue;
            }
            if (!anyPort && port != PORT_TAP && port != PORT_GUEST) {
                c.inc(P4Counter.DROPS_NO_SUCH_PORT);
                return DROPPED_NO_SUCH_PORT;
            }
            c.inc(P4Counter.FRAMES_OUT);
            return (int) port;
        }
    }

    private void checksums(Packet p, boolean verify) {
        for (Program.Checksum ck : checksums) {
            if (verify ? !ck.verify() : !ck.update()) {
                continue;
            }
            if (!p.phv.valid[ck.target().header.ref(p)] || (ck.ifCond() != null && !ck.ifCond().test(p))) {
                continue;
            }
            long v = Bits.truncate(ck.calc().compute(p), ck.target().width);
            if (verify) {
                if (Bits.truncate(ck.target().num(p), ck.target().width) != v) {
                    program.externs.counters.inc(P4Counter.CHECKSUM_ERRORS);
                    StdMeta.set(program.std.checksumError(), p, 1);
                }
            } else {
                ck.target().set(p, v);
            }
        }
    }

    /** The packet state of the last frame, for tests of this package. */
    Packet packet() {
        return pkt;
    }

    /** The frame the last {@link #process} sent: valid until the next call; one array for the engine's life. */
    public byte[] output() {
        pkt.completeOutput();
        return pkt.out;
    }

    /**
     * True when the frame the last {@link #process} sent is, byte for byte, the frame that came in (the program
     * changed none of the headers it parsed, and cut nothing): the caller may send its own input on and skip
     * {@link #output()}'s copy. False after a clone or a recirculation.
     */
    public boolean outputIsInput() {
        return pkt.outputIsInput();
    }

    /**
     * Writes the frame the last {@link #process} sent into {@code dst} at 0 ({@link #outputLength()} bytes, which
     * {@code dst} must have room for): the headers as emitted and the payload from the input, one copy of it.
     */
    public void writeOutput(java.lang.foreign.MemorySegment dst) {
        Packet p = pkt;
        if (p.payloadOut) {
            java.lang.foreign.MemorySegment.copy(outSegment, 0, dst, 0, p.outLen);
            return;
        }
        int head = Math.min(p.headLen, p.outLen);
        java.lang.foreign.MemorySegment.copy(outSegment, 0, dst, 0, head);
        java.lang.foreign.MemorySegment payload = p.source != null ? p.source : p.inSegment; // the input, one copy
        java.lang.foreign.MemorySegment.copy(payload, p.payloadAt, dst, head, p.outLen - head);
    }

    /** The copies (clones) the last {@link #process} made, in the order they were made; valid until the next call. */
    public List<Copy> copies() {
        return List.copyOf(copies);
    }

    /** How many copies the last {@link #process} made (without the list {@link #copies()} builds). */
    public int copyCount() {
        return copies.size();
    }

    /** Copy {@code i}'s verdict (a port or a DROPPED value), without the list {@link #copies()} builds. */
    public int copyVerdict(int i) {
        return copies.get(i).verdict;
    }

    /** Copy {@code i}'s length in bytes (0 when dropped). */
    public int copyLength(int i) {
        return copies.get(i).frame.length;
    }

    /** Writes copy {@code i}'s bytes into {@code dst} at 0 ({@link #copyLength} bytes). */
    public void writeCopy(int i, java.lang.foreign.MemorySegment dst) {
        byte[] f = copies.get(i).frame;
        java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofArray(f), 0, dst, 0, f.length);
    }

    /** The multicast group the last frame went to (its mcast_grp at the end of ingress), or 0. */
    public int lastMulticastGroup() {
        return lastGroup;
    }

    /** Where digests go (generate_digest): called on the caller's thread, after the ingress that made them. */
    public void onDigest(Consumer<Digest> listener) {
        replication.digestListener = listener;
    }

    /**
     * Where log_msg texts go, formatted as bmv2 formats them (called on the caller's thread while the frame runs);
     * without a listener log_msg is only counted.
     */
    public void onLogMsg(Consumer<String> listener) {
        program.externs.logListener = listener;
    }

    public int outputLength() {
        return pkt.outLen;
    }

    /** A human-readable name for a verdict of {@link #process}. */
    public static String describe(int verdict) {
        return switch (verdict) {
            case PORT_TAP -> "port 0 (TAP)";
            case PORT_GUEST -> "port 1 (guest)";
            case DROPPED -> "dropped (egress_spec 511)";
            case DROPPED_NO_SUCH_PORT -> "dropped (egress port does not exist)";
            case DROPPED_MULTICAST -> "dropped (mcast_grp: no such multicast group, or no port in it)";
            case REPLICATED -> "multicast";
            case DROPPED_ASSERT -> "dropped (assert/assume failed)";
            case DROPPED_TOO_BIG -> "dropped (frame too big)";
            case DROPPED_LOOP -> "dropped (resubmitted or recirculated too many times)";
            default -> "port " + verdict;
        };
    }

    /** The egress_spec the last frame asked for when it was dropped for want of a port (for reports). */
    public long lastEgressSpec() {
        return egressSpec.get(pkt);
    }

    public Counters<P4Counter> counters() {
        return program.externs.counters;
    }

    /** Table names, in the order of {@link #tableHits()} and {@link #tableMisses()}. */
    public List<String> tableNames() {
        return program.tables.stream().map(t -> t.name).toList();
    }

    /** Hits per table (a snapshot, in {@link #tableNames()} order). */
    public long[] tableHits() {
        for (int i = 0; i < tables.length; i++) {
            hits[i] = tables[i].hits;
        }
        return hits.clone();
    }

    public long[] tableMisses() {
        for (int i = 0; i < tables.length; i++) {
            misses[i] = tables[i].misses;
        }
        return misses.clone();
    }

    /**
     * Applies runtime entries in simple_switch_CLI syntax; see {@link RuntimeCommands}. Returns what the read
     * commands among them print (counter_read, register_read, meter_get_rates, table_dump), a line each.
     */
    public List<String> applyEntries(String text, String source) {
        return applyEntries(text, source, false);
    }

    /**
     * Applies runtime entries, limited to the table commands when {@code tablesOnly} (table_add,
     * table_set_default, table_delete, table_modify, table_clear and the action-profile forms): registers,
     * counters and parse value sets are then refused as a {@link P4EntryError}.
     */
    public List<String> applyEntries(String text, String source, boolean tablesOnly) {
        RuntimeCommands r = new RuntimeCommands(program, tablesOnly);
        r.apply(text, source);
        return r.output;
    }

    /** The program's {@code config_options}, name to value (empty when it has none). */
    public java.util.Map<String, String> configOptions() {
        return java.util.Collections.unmodifiableMap(program.configOptions);
    }

    /** The program's name ({@code program} in the JSON). */
    public String name() {
        return program.name;
    }

    /** True when the program declares a header type of this name (the WQE hook looks for {@code ernic_wqe_t}). */
    public boolean hasHeaderType(String name) {
        for (HeaderType t : program.layout.typeOf) {
            if (t != null && t.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Cell {@code index} of a register array named in full or by a unique dotted suffix. An unknown name or an
     * index out of bounds is an IllegalArgumentException.
     */
    public long readRegister(String name, int index) {
        String[] names = program.externs.registerNames;
        int found = -1;
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name) || names[i].endsWith("." + name)) {
                if (found >= 0 && !names[found].equals(name)) {
                    throw new IllegalArgumentException("register name '" + name + "' is ambiguous");
                }
                if (found < 0 || names[i].equals(name)) {
                    found = i;
                }
            }
        }
        if (found < 0) {
            throw new IllegalArgumentException("no register '" + name + "'");
        }
        long[] cells = program.externs.registers[found];
        if (index < 0 || index >= cells.length) {
            throw new IllegalArgumentException("register " + names[found] + " has " + cells.length + " cells");
        }
        return cells[index];
    }

    /** Zeroes every table's hit and miss count (power-on). */
    public void resetTableCounts() {
        for (Table t : tables) {
            t.hits = 0;
            t.misses = 0;
        }
    }

    /** Register and counter arrays, tables and actions: what devcmd 70's program information reports. */
    public int registerCount() {
        return program.externs.registerNames.length;
    }

    public int counterArrayCount() {
        return program.externs.counterNames.length;
    }

    public int actionCount() {
        return program.actions.size();
    }

    /** One line per part of the program: what {@code ernic p4 check} prints. */
    public String summary() {
        Program p = program;
        StringJoiner j = new StringJoiner("\n");
        j.add("program " + p.name + (p.compiler != null ? " (compiled by " + p.compiler + ")" : ""));
        if (!p.configOptions.isEmpty()) {
            j.add("  config options " + p.configOptions);
        }
        int unionStackParts = p.layout.unionStacks.values().stream().mapToInt(java.util.Map::size).sum();
        j.add("  header types " + p.headerTypes + ", headers " + (p.layout.headers() - p.layout.stackNames.length)
                + ", header stacks " + (p.layout.stackNames.length - unionStackParts) + ", header unions "
                + p.layout.unionNames.length + ", header union stacks " + p.layout.unionStacks.size());
        j.add("  parser " + p.parser.name + ": " + p.parseStates + " states, " + p.vsets.size() + " parse value sets");
        j.add("  deparser " + p.deparser.name + ": " + p.deparser.order.length + " headers");
        j.add("  actions " + p.actions.size() + ", conditionals " + p.conditionals + ", checksums "
                + p.checksums.size() + ", calculations " + p.calcs.size());
        j.add("  registers " + p.externs.registerNames.length + ", counters " + p.externs.counterNames.length
                + ", action profiles " + p.profiles.size() + " (" + p.profiles.values().stream()
                .filter(x -> x.selector != null).count() + " with a selector), field lists " + p.fieldLists.size()
                + ", learn lists " + p.learnLists.size());
        j.add("  meters " + p.externs.meterSpecs.length + " indirect, "
                + p.tables.stream().filter(t -> t.directMeter != null).count() + " direct");
        for (Table t : p.tables) {
            StringJoiner k = new StringJoiner(", ");
            for (Table.Key key : t.keys) {
                k.add(key.name() + ":" + key.kind().name().toLowerCase());
            }
            j.add("  table " + t.name + " (" + t.matchKind.name().toLowerCase() + ", " + t.keys.length + " keys ["
                    + k + "], " + t.actions.length + " actions, max " + t.maxSize + (t.immutable ? ", const entries "
                    + t.size() : "") + ")");
        }
        return j.toString();
    }
}
