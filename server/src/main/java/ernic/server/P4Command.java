package ernic.server;

import ernic.p4.Loader;
import ernic.p4.P4Engine;
import ernic.p4.P4EntryError;
import ernic.p4.P4Refusal;
import ernic.p4.Pcap;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code ernic p4}: the P4 engine offline, for P4 developers. {@code check} loads a bmv2 JSON program and
 * prints what it has; {@code run} runs it over the frames of a pcap file. A program or an entry the
 * engine refuses is one line on stderr and exit status 2.
 */
@Command(name = "p4", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
        description = "Run the P4 engine offline on bmv2 JSON programs (see docs/p4.md).",
        subcommands = {P4Command.Check.class, P4Command.Run.class})
public final class P4Command implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The program and its runtime entries, as both subcommands take them. */
    static final class ProgramFiles {
        @Parameters(paramLabel = "PROGRAM.json", description = "A bmv2 JSON program (p4c-bm2-ss output).")
        Path program;

        @Option(names = "--entries", paramLabel = "FILE", description = "Runtime entries in simple_switch_CLI syntax.")
        Path entries;

        /**
         * Loads the program (and entries, printing what their read commands print): the engine, or null after printing
         * the one-line refusal.
         */
        P4Engine load(PrintWriter err, PrintWriter out) {
            try {
                P4Engine e = Loader.load(Files.readString(program));
                if (entries != null) {
                    apply(e, entries, out);
                }
                return e;
            } catch (P4Refusal r) {
                err.println("ernic p4: " + program + ": " + r.getMessage());
            } catch (P4EntryError x) {
                err.println("ernic p4: " + x.getMessage());
            } catch (IOException x) {
                err.println("ernic p4: cannot read " + x.getMessage());
            }
            err.flush();
            return null;
        }
    }

    /** Applies a file of runtime commands; prints what its reads print (counter_read, table_dump...). */
    static void apply(P4Engine e, Path file, PrintWriter out) throws IOException {
        for (String line : e.applyEntries(Files.readString(file), file.toString())) {
            out.println(line);
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
            description = "Load PROGRAM.json and print a summary (exit 0), or the refusal (exit 2).")
    static final class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ProgramFiles files;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            P4Engine e = files.load(spec.commandLine().getErr(), out);
            if (e == null) {
                return 2;
            }
            out.println(e.summary());
            out.flush();
            return 0;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
            description = "Run PROGRAM.json over the frames of a classic pcap file; every frame that leaves, toward"
                    + " the guest or the TAP, goes to the output pcap. Prints each frame's egress port, its clones and multicast copies,"
                    + " digests and log_msg texts, and the hits and misses of every table.")
    static final class Run implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ProgramFiles files;

        @Option(names = "--in-port", paramLabel = "N", defaultValue = "0",
                description = "ingress_port of every frame: 0 from the TAP, 1 from the guest (default: ${DEFAULT-VALUE}).")
        int inPort;

        @Option(names = "--in", paramLabel = "in.pcap", required = true, description = "Frames to run.")
        Path in;

        @Option(names = "--out", paramLabel = "out.pcap", required = true, description = "Frames that leave.")
        Path out;

        @Option(names = "--after", paramLabel = "FILE", description = "Runtime commands to run after the last frame,"
                + " such as counter_read, register_read, meter_get_rates and table_dump; what they print comes last.")
        Path after;

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            PrintWriter o = spec.commandLine().getOut();
            if (inPort != P4Engine.PORT_TAP && inPort != P4Engine.PORT_GUEST) {
                err.println("ernic p4: --in-port " + inPort + ": the ports are 0 (TAP) and 1 (guest)");
                err.flush();
                return 2;
            }
            P4Engine e = files.load(err, o);
            if (e == null) {
                return 2;
            }
            List<Pcap.Frame> frames;
            long fractionNanos;
            try {
                frames = Pcap.read(in);
                fractionNanos = Pcap.nanosecond(in) ? 1 : 1000;
            } catch (IOException x) {
                err.println("ernic p4: " + x.getMessage());
                err.flush();
                return 2;
            }
            List<Pcap.Frame> sent = new ArrayList<>();
            int n = 0;
            int copies = 0;
            int clonesOut = 0;
            int multicastFrames = 0;
            int replicas = 0;
            int replicasOut = 0;
            // Meters read the capture's time stamps: the frame being run is "now".
            long[] now = {frames.isEmpty() ? 0 : time(frames.getFirst(), fractionNanos)};
            e.clock(() -> now[0]);
            int[] frameNo = {0};
            e.onDigest(d -> o.println("frame " + frameNo[0] + ": digest " + d.name() + " " + digestText(d)));
            e.onLogMsg(m -> o.println("frame " + frameNo[0] + ": log_msg " + m));
            for (Pcap.Frame f : frames) {
                frameNo[0] = ++n;
                now[0] = time(f, fractionNanos);
                long resubmits = e.counters().get(ernic.p4.P4Counter.RESUBMITS);
                long recirculations = e.counters().get(ernic.p4.P4Counter.RECIRCULATIONS);
                int v = e.process(f.data(), 0, f.data().length, inPort);
                String where = switch (v) {
                    case P4Engine.DROPPED_NO_SUCH_PORT -> "dropped (egress port " + e.lastEgressSpec() + " does not exist)";
                    case P4Engine.REPLICATED -> "multicast group " + e.lastMulticastGroup() + ", " + e.copyCount()
                            + " copies";
                    case P4Engine.DROPPED_MULTICAST -> "dropped (multicast group " + e.lastMulticastGroup()
                            + " does not exist or has no port)";
                    default -> P4Engine.describe(v);
                };
                if (v == P4Engine.REPLICATED) {
                    multicastFrames++;
                }
                long rs = e.counters().get(ernic.p4.P4Counter.RESUBMITS) - resubmits;
                long rc = e.counters().get(ernic.p4.P4Counter.RECIRCULATIONS) - recirculations;
                String again = (rs > 0 ? ", resubmitted " + rs + "x" : "") + (rc > 0 ? ", recirculated " + rc + "x" : "");
                if (v >= 0) {
                    byte[] d = java.util.Arrays.copyOf(e.output(), e.outputLength());
                    sent.add(new Pcap.Frame(f.seconds(), f.fraction(), d));
                    o.println("frame " + n + ": " + f.data().length + " bytes in on port " + inPort + again + " -> "
                            + where + ", " + d.length + " bytes");
                } else {
                    o.println("frame " + n + ": " + f.data().length + " bytes in on port " + inPort + again + " -> "
                            + where);
                }
                for (P4Engine.Copy c : e.copies()) {
                    boolean replica = c.instanceType() == 5;
                    if (replica) {
                        replicas++;
                    } else {
                        copies++;
                    }
                    String kind = (replica ? "multicast copy" : c.instanceType() == 1 ? "ingress clone" : "egress clone")
                            + (replica || c.egressRid() != 0 ? " rid " + c.egressRid() : "");
                    if (c.verdict() >= 0) {
                        sent.add(new Pcap.Frame(f.seconds(), f.fraction(), c.frame()));
                        if (replica) {
                            replicasOut++;
                        } else {
                            clonesOut++;
                        }
                        o.println("frame " + n + ": " + kind + " -> " + P4Engine.describe(c.verdict()) + ", "
                                + c.frame().length + " bytes");
                    } else {
                        o.println("frame " + n + ": " + kind + " -> " + P4Engine.describe(c.verdict()));
                    }
                }
            }
            List<String> names = e.tableNames();
            long[] hits = e.tableHits();
            long[] misses = e.tableMisses();
            for (int i = 0; i < names.size(); i++) {
                o.println("table " + names.get(i) + ": " + hits[i] + " hits, " + misses[i] + " misses");
            }
            int own = sent.size() - clonesOut - replicasOut;
            o.println("frames: " + n + " in, " + own + " out, " + (n - own - multicastFrames) + " dropped"
                    + (multicastFrames > 0 ? ", " + multicastFrames + " multicast" : "")
                    + (copies > 0 ? "; clones: " + copies + " made, " + clonesOut + " out" : "")
                    + (replicas > 0 ? "; multicast copies: " + replicas + " made, " + replicasOut + " out" : ""));
            if (after != null) {
                try {
                    apply(e, after, o);
                } catch (P4EntryError x) {
                    o.flush();
                    err.println("ernic p4: " + x.getMessage());
                    err.flush();
                    return 2;
                } catch (IOException x) {
                    err.println("ernic p4: cannot read " + x.getMessage());
                    err.flush();
                    return 2;
                }
            }
            o.flush();
            try {
                Pcap.write(out, sent);
            } catch (IOException x) {
                err.println("ernic p4: cannot write " + out + ": " + x.getMessage());
                err.flush();
                return 2;
            }
            return 0;
        }

        private static long time(Pcap.Frame f, long fractionNanos) {
            return f.seconds() * 1_000_000_000L + f.fraction() * fractionNanos;
        }

        private static String digestText(P4Engine.Digest d) {
            java.util.StringJoiner j = new java.util.StringJoiner(", ", "{", "}");
            for (int i = 0; i < d.fields().size(); i++) {
                j.add(d.fields().get(i) + "=0x" + d.values().get(i).toString(16));
            }
            return j.toString();
        }
    }
}
