package ernic.it.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import ernic.counters.CounterRegistry;
import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestFleet;
import ernic.it.harness.GuestImage;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.it.harness.NetNamespace;
import ernic.it.harness.ServerArgs;
import ernic.server.ErnicServer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A benchmark script in the real guest, with its reference in the same VM: boots one guest against an
 * in-process server, runs the script, and writes the JSON document the script prints (between the
 * lines {@code BENCH-JSON-BEGIN} and {@code BENCH-JSON-END}), with the run's timings and the server's
 * counters added. Two benches:
 * <ul>
 *   <li>{@code perftest}: {@code guest/bench/perftest-vs-rxe.sh}, perftest on the emulated ionic NIC
 *       beside Soft-RoCE (rdma_rxe), to {@code target/bench/guest-perftest.json};</li>
 *   <li>{@code nvmeof}: {@code guest/bench/nvmeof-vs-nvmet.sh}, fio on the in-process NVMe-oF target
 *       beside the guest kernel's nvmet-rdma over Soft-RoCE, to {@code target/bench/guest-nvmeof.json};</li>
 *   <li>{@code s3}: {@code guest/bench/s3-vs-tap.sh}, curl and a C token client against the in-process S3
 *       store beside iperf3 to the host over the server's TAP, to {@code target/bench/guest-s3.json};</li>
 *   <li>{@code two-guests}: the perftest script across two guests, as {@code ./ernic guest run --vms 2} starts
 *       them (a server each, in a mesh; their TAPs on one bridge): ionic across the mesh beside Soft-RoCE
 *       over the bridge, to {@code target/bench/guest-two-perftest.json};</li>
 *   <li>{@code two-guests-wire-rxe} and {@code two-guests-wire}: the same two guests without a mesh, RoCEv2 on
 *       the wire ({@code --roce}): guest 1's ionic_0 against rxe0 in guest 0, and ionic_0 against ionic_0, to
 *       {@code guest-two-wire-rxe.json} and {@code guest-two-wire.json}.</li>
 * </ul>
 *
 * <pre>
 *   java -cp ... ernic.it.bench.GuestBench perftest|nvmeof|s3|two-guests [--out FILE] [--script FILE] [--sizes "64 4096"] [--quick]
 * </pre>
 *
 * Exit status: 0 when every run passed, the script's status otherwise (the JSON is written whenever
 * the guest printed it), 2 when docker or the guest image is missing, 1 when the guest printed no
 * JSON. Paths are relative to the working directory (the repository root under ./ernic).
 */
public final class GuestBench {
    /** The script's exit status when it printed its JSON but some runs gave no figure ("ok": false). */
    static final int SOME_RUNS_FAILED = 4;
    static final String BEGIN = "BENCH-JSON-BEGIN", END = "BENCH-JSON-END";

    /**
     * One bench: its script, where its JSON goes, the server's {@code --backend} (null: loopback), the
     * prefixes of the server counters kept in the document as proof of whose work the numbers are, whether the
     * server gets a TAP with an iperf3 server at its host end, the shell lines --quick puts before the
     * script, and the guests (2: {@link #runTwo}, the script learns it from PERF_TWO_GUESTS); with two guests,
     * the servers' {@code --server-args-vm} values and whether they form a mesh, and shell lines that go before
     * the script always.
     */
    record Bench(String name, String script, String outFile, String backend, List<String> counters, boolean tap,
                 String quick, int vms, List<String> vmArgs, boolean mesh, String prelude) {
        Bench(String name, String script, String outFile, String backend, List<String> counters, boolean tap,
              String quick) {
            this(name, script, outFile, backend, counters, tap, quick, 1, List.of(), true, "");
        }

        Path out() {
            return Path.of("target", "bench", outFile);
        }
    }

    static final Bench PERFTEST = new Bench("perftest", "guest/bench/perftest-vs-rxe.sh", "guest-perftest.json", null,
            List.of("rdma.sq.wqes", "rdma.sq.errors", "rdma.admin.errors", "rdma.admin.commands", "refused.rdma", "intr."), false,
            sizes("64 65536"));
    static final Bench NVMEOF = new Bench("nvmeof", "guest/bench/nvmeof-vs-nvmet.sh", "guest-nvmeof.json",
            "nvmeof:size=256M", List.of("nvmeof.bytes", "nvmeof.err.", "nvmeof.transfers_refused",
                    "nvmeof.controller_fatal", "nvmeof.in_capsule_writes", "nvmeof.send_inv", "rdma.sq.errors",
                    "refused.rdma"), false, "export NVME_BENCH_RUNTIME=4\n");
    static final Bench S3 = new Bench("s3", "guest/bench/s3-vs-tap.sh", "guest-s3.json", "s3:size=512M",
            List.of("s3.", "rdma.sq.errors", "refused.rdma"), true, "export S3_BENCH_REPS_1M=5 S3_BENCH_REPS_64M=1\n");
    static final Bench TWO_GUESTS = new Bench("two-guests", "guest/bench/perftest-vs-rxe.sh",
            "guest-two-perftest.json", null, List.of(), false, sizes("64 65536") + "export PINGPONG_ROUNDS=1\n", 2,
            List.of(), true, "");
    /**
     * RoCEv2 on the wire ({@code --roce}, no mesh): guest 1's ionic_0 against Soft-RoCE in guest 0 (whose server
     * passes RoCEv2 to it as Ethernet), to compare with {@link #TWO_GUESTS}' rxe0 to rxe0 over the same bridge.
     */
    static final Bench WIRE_RXE = new Bench("two-guests-wire-rxe", "guest/bench/perftest-vs-rxe.sh",
            "guest-two-wire-rxe.json", null, List.of(), false, TWO_GUESTS.quick(), 2, List.of("1=--roce"), false,
            "export PERF_DEVICES=ionic_0 PERF_SERVER_DEV=rxe0"
                    + " PERF_IONIC_KIND=', on the wire (--roce) against rxe0 in guest 0'\n");
    /** Both servers {@code --roce}, no mesh: ionic_0 to ionic_0 on the wire, against {@link #TWO_GUESTS}' mesh. */
    static final Bench WIRE = new Bench("two-guests-wire", "guest/bench/perftest-vs-rxe.sh",
            "guest-two-wire.json", null, List.of(), false, TWO_GUESTS.quick(), 2, List.of("0=--roce", "1=--roce"),
            false, "export PERF_DEVICES=ionic_0 PERF_IONIC_KIND=', to ionic_0 on the wire (--roce, no mesh)'\n");
    /**
     * With a TAP: its host end, in a network namespace of ours, where an iperf3 server listens, and an HTTP
     * server that keeps what is PUT (the S3 bench's like-for-like reference for curl) on port 9000.
     */
    static final String TAP_HOST_IP = "192.168.200.3", HOST_HTTP = "guest/bench/host-http.py";
    static final int HOST_HTTP_PORT = 9000;

    private GuestBench() {}

    public static void main(String[] args) throws Exception {
        Bench bench = args.length == 0 ? null : switch (args[0]) {
            case "perftest" -> PERFTEST;
            case "nvmeof" -> NVMEOF;
            case "s3" -> S3;
            case "two-guests" -> TWO_GUESTS;
            case "two-guests-wire-rxe" -> WIRE_RXE;
            case "two-guests-wire" -> WIRE;
            default -> null;
        };
        if (bench == null) {
            usage();
            return;
        }
        Path out = bench.out();
        Path script = Path.of(bench.script());
        String prelude = "";
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--script" -> script = Path.of(args[++i]);
                case "--sizes" -> prelude += sizes(args[++i]);
                case "--quick" -> prelude += bench.quick();
                default -> usage();
            }
        }
        System.exit(run(bench, out, script, prelude));
    }

    private static void usage() {
        System.err.println("usage: GuestBench perftest|nvmeof|s3|two-guests|two-guests-wire-rxe|two-guests-wire [--out FILE] [--script FILE] [--sizes \"64 4096 ...\"] [--quick]");
        System.exit(2);
    }

    /** The perftest script's message sizes. */
    static String sizes(String sizes) {
        return "export PERF_SIZES='" + sizes.replaceAll("[^0-9 ]", "") + "'\n";
    }

    /** Runs {@code script} (with {@code prelude}, shell lines, before it) in a guest and writes its JSON to {@code out}. */
    static int run(Bench bench, Path out, Path script, String prelude) throws IOException {
        String missing = GuestImage.missing();
        if (missing != null) {
            System.err.println("guest " + bench.name() + ": " + missing);
            return 2;
        }
        if (!Files.isRegularFile(script)) {
            System.err.println("guest " + bench.name() + ": no script " + script.toAbsolutePath() + " (run from the repository root)");
            return 2;
        }
        String body = bench.prelude() + prelude + Files.readString(script);
        Path work = Files.createDirectories(Path.of("target", "bench", "guest-" + bench.name())).toAbsolutePath();
        if (bench.vms() == 2) {
            return runTwo(bench, out, "export PERF_TWO_GUESTS=1\n" + body, work);
        }
        Path socket = Files.createDirectories(work.resolve("server")).resolve("ernic.sock");
        Instant started = Instant.now();
        GuestResult r;
        Map<String, Long> counters = new TreeMap<>();
        ErnicServer.Settings settings = ErnicServer.Settings.ionic(socket.toString());
        if (bench.backend() != null) {
            settings = settings.withMesh(bench.backend(), null);
        }
        String tap = bench.tap() ? "erbt" + ProcessHandle.current().pid() % 100000 : null;
        if (tap != null) {
            settings = settings.withTap(tap);
        }
        Map<String, Object> cpu = new java.util.LinkedHashMap<>();
        try (ErnicServer server = ErnicServer.start(settings);
             NetNamespace ns = tap == null ? null : NetNamespace.create("ernic-bench-" + ProcessHandle.current().pid())) {
            long device = server.vfioUser().eventLoop().submit(() -> Thread.currentThread().threadId()).get();
            long self = ProcessHandle.current().pid();
            long dev0 = CpuCost.threadNanos(device), proc0 = CpuCost.processNanos(self), wall0 = System.nanoTime();
            List<Process> hostEnd = new ArrayList<>();
            if (ns != null) {
                ns.adopt(tap);
                ns.exec("ip", "addr", "add", TAP_HOST_IP + "/24", "dev", tap);
                ns.exec("ip", "link", "set", tap, "up");
                hostEnd.add(ns.start("iperf3", "-s", "-B", TAP_HOST_IP));
                hostEnd.add(ns.start("python3", Path.of(HOST_HTTP).toAbsolutePath().toString(), TAP_HOST_IP,
                        Integer.toString(HOST_HTTP_PORT)));
            }
            try {
                r = new GuestVm(0, work.resolve("vm0"), socket, System.out).withTimeout(Duration.ofMinutes(20)).run(body);
            } finally {
                for (Process p : hostEnd) {
                    p.destroy();
                    p.waitFor(5, TimeUnit.SECONDS);
                }
            }
            // The server's CPU over the guest's whole run (boot included): its device thread, and this JVM, which
            // holds the server (the harness beside it only reads the console).
            cpu.put("deviceCpuNs", CpuCost.threadNanos(device) - dev0);
            cpu.put("benchProcessCpuNs", CpuCost.processNanos(self) - proc0);
            cpu.put("wallNs", System.nanoTime() - wall0);
            // What the server saw: proof that the numbers are its work, and that it failed nothing. The
            // device's counters went back to zero when the guest powered off; the session's were kept.
            // Families (per QP, per peer) left out; each refusal cause as refused.CAUSE.
            Map<String, Long> seen = new TreeMap<>(CounterRegistry.flat(server.vfioUser().eventLoop()
                    .submit(() -> server.counterRegistry().snapshot()).get()));
            seen.putAll(((IonicDevice) server.device()).lastSessionCounters());
            seen.forEach((k, v) -> {
                if (bench.counters().stream().anyMatch(k::startsWith)) {
                    counters.put(k, v);
                }
            });
            cpuPerOperation(bench, cpu, seen);
            System.out.println("guest " + bench.name() + ": server CPU " + cpu); // also when the guest prints no JSON
        } catch (InterruptedException | ExecutionException e) {
            throw new IOException("reading the server's counters", e);
        }
        return report(bench, out, r, started, counters, cpu);
    }

    /**
     * What a guest operation of {@code bench} is, as the server counts it: the counters summed (perftest: WQEs
     * executed; NVMe-oF: read and write commands; S3: none of its own, its requests are not counted).
     */
    static List<String> operationCounters(Bench bench) {
        return switch (bench.name()) {
            case "perftest" -> List.of("rdma.sq.wqes");
            case "nvmeof" -> List.of("nvmeof.cmd.read", "nvmeof.cmd.write");
            default -> List.of();
        };
    }

    /**
     * The server's CPU per guest operation and per guest MMIO write (each a vfio-user REGION_WRITE: doorbells
     * mostly), and the device thread's share of the run's wall-clock time, into {@code cpu}.
     */
    private static void cpuPerOperation(Bench bench, Map<String, Object> cpu, Map<String, Long> seen) {
        long device = (Long) cpu.get("deviceCpuNs"), wall = (Long) cpu.get("wallNs");
        long ops = operationCounters(bench).stream().mapToLong(k -> seen.getOrDefault(k, 0L)).sum();
        long writes = seen.getOrDefault("vfio.region_writes", 0L);
        cpu.put("operationCounters", operationCounters(bench));
        cpu.put("operations", ops);
        cpu.put("cpuNsPerOp", CpuCost.finite(ops == 0 ? Double.NaN : device / (double) ops));
        cpu.put("regionWrites", writes);
        cpu.put("cpuNsPerRegionWrite", CpuCost.finite(writes == 0 ? Double.NaN : device / (double) writes));
        cpu.put("deviceShareOfWall", device / (double) wall);
    }

    /**
     * Two guests as {@code ./ernic guest run --vms 2} starts them: a server each (forked, in a mesh), their TAPs
     * on one bridge; the script in both, guest 1's JSON is the result. The servers are other processes: no
     * counters of theirs in the document.
     */
    private static int runTwo(Bench bench, Path out, String body, Path work) throws IOException {
        Instant started = Instant.now();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Map<String, Object> cpu = new java.util.LinkedHashMap<>();
        try (GuestFleet fleet = GuestFleet.start(new GuestFleet.Plan(2, ServerArgs.parse("", bench.vmArgs(), 2), true,
                true, bench.mesh(), true), "bench", System.out, i -> List.of())) {
            // Both servers' CPU over the two guests' run: their processes and device threads.
            CpuCost.Meter meter = null;
            try {
                meter = CpuCost.forked(fleet.servers().get(0).process().pid())
                        .and(CpuCost.forked(fleet.servers().get(1).process().pid()));
            } catch (IOException e) {
                cpu.put("notMeasured", e.getMessage());
            }
            CpuCost.Sample before = meter == null ? null : meter.read();
            long wall0 = System.nanoTime();
            List<Future<GuestResult>> runs = fleet.run(2, pool, work, body, System.out, Duration.ofMinutes(30));
            GuestResult server = runs.get(0).get(), client = runs.get(1).get();
            if (meter != null) {
                CpuCost.Sample after = meter.read();
                long wall = System.nanoTime() - wall0;
                cpu.put("deviceCpuNs", after.deviceNanos() - before.deviceNanos());
                cpu.put("processCpuNs", after.processNanos() - before.processNanos());
                cpu.put("wallNs", wall);
                cpu.put("deviceShareOfWall", (after.deviceNanos() - before.deviceNanos()) / (double) wall);
                cpu.put("processShareOfWall", (after.processNanos() - before.processNanos()) / (double) wall);
                cpu.put("perOperation", "not counted: the servers are other processes, their counters not read");
            }
            System.out.println(server);
            int rc = report(bench, out, client, started, Map.of(), cpu);
            return rc != 0 ? rc : server.exitStatus();
        } catch (InterruptedException | ExecutionException e) {
            throw new IOException("running the two guests", e);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Writes the JSON guest {@code r} printed to {@code out}, with the run's timings and {@code counters}. */
    private static int report(Bench bench, Path out, GuestResult r, Instant started, Map<String, Long> counters,
                              Map<String, Object> cpu) throws IOException {
        System.out.println(r);
        String output = r.output();
        int b = output.indexOf(BEGIN), e = output.indexOf(END);
        if (b < 0 || e < b) {
            System.err.println("guest " + bench.name() + ": the guest printed no JSON (exit " + r.exitStatus()
                    + "); console tail:\n" + r.consoleTail(40));
            return 1;
        }
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode doc = (ObjectNode) json.readTree(output.substring(b + BEGIN.length(), e));
        ObjectNode run = doc.putObject("run");
        run.put("started", started.toString());
        run.put("image", GuestImage.NAME);
        run.put("exit_status", r.exitStatus());
        run.put("boot_to_script_ms", r.bootToScriptMillis());
        run.put("total_ms", r.totalMillis());
        run.put("console_log", r.consoleLog().toString());
        run.set("server_counters", json.valueToTree(counters));
        run.set("server_cpu", json.valueToTree(cpu));
        Files.createDirectories(out.toAbsolutePath().getParent());
        json.writeValue(out.toFile(), doc);
        System.out.println("guest " + bench.name() + ": wrote " + out.toAbsolutePath());
        doc.withArray("ratios").forEach(x -> System.out.println("  " + x));
        return r.exitStatus();
    }
}
