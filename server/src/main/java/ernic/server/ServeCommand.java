package ernic.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ernic.ionic.profile.ProfileLoader;
import ernic.server.ErnicServer.DeviceKind;
import ernic.server.metrics.MetricsEndpoint;
import ernic.vfiouser.server.VfioUserServer;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import ernic.ionic.trace.PcapTrace;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** {@code ernic serve}: serves one device on one vfio-user socket until interrupted. */
@Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = ErnicVersion.class,
        description = "Serve the emulated device to one QEMU vfio-user client at a time.",
        modelTransformer = ServeCommand.BackendForms.class)
public final class ServeCommand implements Callable<Integer> {
    /** Gives {@code --backend} the text of {@link Backends#help()}, which comes from each form's own grammar. */
    static final class BackendForms implements CommandLine.IModelTransformer {
        @Override
        public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
            CommandLine.Model.OptionSpec o = spec.findOption("--backend");
            spec.remove(o);
            spec.addOption(CommandLine.Model.OptionSpec.builder(o).description(Backends.help()).build());
            return spec;
        }
    }

    @Option(names = "--socket", defaultValue = "/run/ernic/ernic.sock",
            description = "UNIX socket path QEMU connects to (default: ${DEFAULT-VALUE}).")
    String socket;

    @Option(names = "--socket-group-access",
            description = "Make the socket file group read-write (0660) instead of owner-only (0600).")
    boolean groupAccess;

    @Option(names = "--device", defaultValue = "ionic",
            description = "Device to serve: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    DeviceKind device;

    @Option(names = "--nic-profile", defaultValue = ProfileLoader.DEFAULT,
            description = "ionic: built-in profiles (compat, minimal, max, 25g, 400g) and ini files, comma-separated,"
                    + " layered left to right over compat (default: ${DEFAULT-VALUE}).")
    String nicProfile;

    @Option(names = "--inject", description = "ionic: a fault pattern, KIND:PATTERN (repeatable); see docs/ionic.md.")
    List<String> inject = new ArrayList<>();

    @Option(names = "--tap", description = "ionic: host TAP interface for the Ethernet side (created if missing).")
    String tap;

    @Option(names = "--mac", description = "ionic: the station MAC, xx:xx:xx:xx:xx:xx (default: a locally"
            + " administered address derived from the socket path).")
    String mac;

    @Option(names = "--stats-file", paramLabel = "PATH",
            description = "Write a JSON snapshot of the counters to PATH about once a second and at exit"
                    + " (atomically: a temporary file renamed over PATH); see docs/monitoring.md.")
    String statsFile;

    /** Its description is {@link Backends#help()}, put in by {@link BackendForms}: the forms are written once. */
    @Option(names = "--backend", paramLabel = "SPEC", description = "(see Backends)")
    String backend;

    @Option(names = "--p4", description = "ionic: run the P4 engine on the frames between the guest and the TAP,"
            + " with the built-in pass-through program unless --p4-program names one; see docs/p4.md.")
    boolean p4;

    @Option(names = "--p4-program", paramLabel = "FILE.json",
            description = "ionic: the P4 program (bmv2 JSON, p4c-bm2-ss output) for the engine; implies --p4.")
    String p4Program;

    @Option(names = "--p4-entries", paramLabel = "FILE",
            description = "ionic: runtime entries for the program, in simple_switch_CLI syntax (table_add, ...).")
    String p4Entries;

    @Option(names = "--p4-guest-scope", paramLabel = "SCOPE",
            description = "ionic: what the guest may do with the engine through device commands 70-72: none (the"
                    + " default), read, tables or all; implies --p4.")
    String p4Scope;

    @Option(names = "--metrics", paramLabel = "[HOST:]PORT",
            description = "Serve the counters in the Prometheus text format at http://HOST:PORT/metrics"
                    + " (HOST defaults to localhost); see docs/monitoring.md.")
    String metrics;

    @Option(names = "--roce",
            description = "ionic: speak RoCEv2 on the Ethernet port (needs --tap): RC QPs whose destination is neither"
                    + " this guest, a mesh node nor an in-process target send and take RoCEv2 packets, so the guest"
                    + " reaches Soft-RoCE and RoCE NICs; see docs/roce.md.")
    boolean roce;

    @Option(names = "--trace-rdma", paramLabel = "FILE.pcap",
            description = "ionic: write each RDMA operation the device carries out to FILE.pcap as synthetic RoCEv2"
                    + " frames (classic pcap, for Wireshark or tshark; payload cut at 256 bytes); see"
                    + " docs/monitoring.md.")
    Path traceRdma;

    @Option(names = "--log-level", defaultValue = "INFO",
            description = "Log level: ERROR, WARN, INFO, DEBUG or TRACE (default: ${DEFAULT-VALUE}).")
    String logLevel;

    @Option(names = "--max-data-xfer", defaultValue = "1048576",
            description = "Largest data transfer in one vfio-user message, in bytes (default: ${DEFAULT-VALUE}).")
    int maxDataXfer;

    @Option(names = "--busy-poll-us", defaultValue = "0", paramLabel = "MICROS",
            description = "Keep the device thread polling for MICROS (0 to 1000) after its last work before it sleeps:"
                    + " doorbells and mesh frames arriving meanwhile skip a thread wake-up, for a CPU kept busy while"
                    + " traffic flows (default: ${DEFAULT-VALUE}, sleep at once; docs/performance.md).")
    int busyPollMicros;

    @Option(names = "--exit-with", paramLabel = "PID",
            description = "Stop, as on SIGTERM, when process PID ends: a harness that starts servers for a run"
                    + " passes its own PID, so no server outlives its run.")
    Long exitWith;

    /** Opens the trace file; a path that cannot be written is one line: the path and the reason. */
    static PcapTrace openTrace(Path file) throws IOException {
        try {
            return PcapTrace.open(file);
        } catch (IOException e) {
            String why = e instanceof java.nio.file.NoSuchFileException ? "no such directory"
                    : e instanceof java.nio.file.AccessDeniedException ? "permission denied"
                    : e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null ? fs.getReason()
                    : e.toString();
            throw new IOException("--trace-rdma " + file + ": cannot write (" + why + ")", e);
        }
    }

    @Override
    public Integer call() throws Exception {
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.toLevel(logLevel, Level.INFO));
        ErnicServer server;
        MetricsEndpoint endpoint = null;
        PcapTrace trace = null;
        try {
            ErnicServer.Settings settings = new ErnicServer.Settings(device,
                    VfioUserServer.Options.defaults(socket).withSocketMode(groupAccess ? 0660 : 0600)
                            .withMaxDataXferSize(maxDataXfer).withBusyPollMicros(busyPollMicros),
                    nicProfile, inject, tap, mac, statsFile, backend, System.getenv("ERNIC_TCP_GUEST_GIDS"),
                    P4Options.of(p4, p4Program, p4Entries, p4Scope), roce);
            MetricsEndpoint.Address metricsAt = metrics == null ? null : MetricsEndpoint.Address.parse(metrics);
            if (traceRdma != null) {
                if (device != DeviceKind.ionic) {
                    throw new IllegalArgumentException("--trace-rdma needs --device ionic");
                }
                trace = openTrace(traceRdma);
            }
            try {
                server = ErnicServer.start(settings);
            } catch (IllegalArgumentException | IOException e) {
                if (trace != null) {
                    trace.close();
                }
                throw e;
            }
            if (trace != null) {
                server.traceRdma(trace);
            }
            if (metricsAt != null) {
                try {
                    endpoint = server.startMetrics(metricsAt);
                } catch (IOException e) {
                    server.close();
                    throw e;
                }
            }
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("ernic serve: " + e.getMessage());
            return 2;
        }
        if (trace != null) {
            System.err.println("ernic: tracing RDMA operations to " + traceRdma);
        }
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        // SIGTERM / SIGINT: let the main thread close the socket and the device before the JVM exits.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            try {
                closed.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "ernic-shutdown"));
        if (exitWith != null) {
            // A process that is already gone (or never was) stops the server at once.
            ProcessHandle.of(exitWith).ifPresentOrElse(h -> h.onExit().thenRun(stop::countDown), stop::countDown);
        }
        System.err.println("ernic: serving " + device + " on " + socket + (tap != null ? " with TAP " + tap : ""));
        try {
            stop.await();
        } finally {
            if (endpoint != null) {
                endpoint.close();
            }
            server.close();
            closed.countDown();
        }
        return 0;
    }
}
