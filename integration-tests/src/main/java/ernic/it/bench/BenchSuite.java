package ernic.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.util.ListStatistics;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code ./ernic bench}: the benchmark suite. Runs each section, then writes {@code report.md},
 * {@code report.json} and {@code datapath.png} into the output directory (default {@code target/bench}). Every
 * figure is a ratio against a reference measured in the same run; absolute numbers are printed beside it
 * because they explain the ratio, not because they travel between machines.
 *
 * <pre>
 *   BenchSuite [--out DIR] [--only 1,2,5,8] [--quick]
 * </pre>
 */
public final class BenchSuite {
    private final Path out;
    private final Set<Integer> only;
    private final boolean quick;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final StringBuilder md = new StringBuilder();

    private BenchSuite(Path out, Set<Integer> only, boolean quick) {
        this.out = out;
        this.only = only;
        this.quick = quick;
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of("target", "bench");
        Set<Integer> only = new LinkedHashSet<>(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
        boolean quick = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--only" -> {
                    only.clear();
                    for (String s : args[++i].split(",")) {
                        only.add(Integer.parseInt(s.trim()));
                    }
                }
                case "--quick" -> quick = true;
                default -> {
                    System.err.println("usage: BenchSuite [--out DIR] [--only 1,2,3,4,5,6,7,8,9,10] [--quick]");
                    System.exit(2);
                }
            }
        }
        Files.createDirectories(out);
        new BenchSuite(out, only, quick).run();
        System.exit(0); // JMH and Netty leave non-daemon threads behind
    }

    private static void log(String s) {
        System.out.println(s);
        System.out.flush();
    }

    private void run() throws Exception {
        long t0 = System.nanoTime();
        json.put("generated", Instant.now().toString());
        json.put("host", host());
        json.put("loadAverageAtStart", loadAverage());
        md.append("# ernic benchmark report\n\n");
        md.append("Generated ").append(json.get("generated")).append(" on ").append(host()).append(".\n");
        md.append("Every figure is a ratio against a reference measured in the same run; absolute values are given ")
                .append("beside it to explain the ratio. See docs/performance.md for what each figure means.\n\n");
        section(1, "Doorbell path", this::doorbell);
        section(2, "Data path (driver model, one server)", this::dataPath);
        section(3, "Mesh (cross-server WRITE, READ and SEND vs raw TCP, on loopback; WRITE over a veth pair)", this::mesh);
        section(4, "Guest perftest vs Soft-RoCE", this::guestPerftest);
        section(5, "Server memory", this::memory);
        section(6, "NVMe-oF target vs the kernel's nvmet-rdma over Soft-RoCE", this::guestNvmeof);
        section(7, "S3 store: HTTP body vs iperf3 over the TAP, token path vs HTTP body", this::guestS3);
        section(8, "P4 engine: Ethernet frames and fp8 WRITEs with the engine on and off", this::p4);
        section(9, "Two guests: perftest across the mesh vs Soft-RoCE over the TAP bridge", this::guestTwo);
        section(10, "RoCEv2 on the wire: ionic to Soft-RoCE vs Soft-RoCE to Soft-RoCE, ionic to ionic vs the mesh",
                this::guestWire);
        double secs = (System.nanoTime() - t0) / 1e9;
        json.put("elapsedSeconds", Math.round(secs));
        json.put("loadAverageAtEnd", loadAverage());
        md.append("\nSuite time: ").append(Math.round(secs)).append(" s. Load average (1/5/15 min) at start ")
                .append(json.get("loadAverageAtStart")).append(", at end ").append(loadAverage())
                .append(" on ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs: a loaded machine moves the figures, the ratios less than the absolutes.\n");
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        mapper.writeValue(out.resolve("report.json").toFile(), json);
        Files.writeString(out.resolve("report.md"), md);
        log("\nwrote " + out.resolve("report.md") + ", " + out.resolve("report.json")
                + (Files.exists(out.resolve("datapath.png")) ? ", " + out.resolve("datapath.png") : ""));
    }

    interface Body {
        void run(Map<String, Object> j) throws Exception;
    }

    private void section(int n, String title, Body body) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("title", title);
        json.put("section" + n, j);
        md.append("## ").append(n).append(". ").append(title).append("\n\n");
        if (!only.contains(n)) {
            j.put("status", "skipped");
            md.append("Skipped (--only).\n\n");
            return;
        }
        log("== " + n + ". " + title);
        long t = System.nanoTime();
        try {
            body.run(j);
            j.putIfAbsent("status", "ran");
        } catch (Exception e) {
            j.put("status", "failed");
            j.put("error", e.toString());
            md.append("**Failed:** `").append(e).append("`\n\n");
            log("  failed: " + e);
            e.printStackTrace();
        }
        j.put("seconds", Math.round((System.nanoTime() - t) / 1e9));
    }

    // ---- 1 -----------------------------------------------------------------------------------------------------

    private void doorbell(Map<String, Object> j) throws Exception {
        // Rounds of both benchmarks, each round one fork of each, one right after the other: the ratio is taken
        // within a round (the two saw the same machine) and reported as the median of the rounds with their
        // spread. One long run of each, minutes apart, moved the ratio by ±0.7 on a shared machine. Each
        // benchmark's error is JMH's own (99.9% confidence of the mean) over the iterations of all rounds, as
        // JMH gives it for one run with that many forks: one round's 5 iterations gave ±40-70%, ten iterations
        // in each of three forks ±3-6%.
        int rounds = quick ? 1 : 5;
        Options opt = new OptionsBuilder()
                .include(DoorbellBenchmark.class.getName() + "\\.")
                .warmupIterations(quick ? 1 : 5).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 2 : 10).measurementTime(TimeValue.seconds(1))
                .param("busyPollMicros", "0", String.valueOf(BUSY_POLL_MICROS))
                .forks(1).verbosity(VerboseMode.SILENT)
                .build();
        double[] ratios = new double[rounds], vfio = new double[rounds], raw = new double[rounds];
        double[] busy = new double[rounds];
        ListStatistics vfioIterations = new ListStatistics(), rawIterations = new ListStatistics();
        ListStatistics busyIterations = new ListStatistics();
        for (int round = 0; round < rounds; round++) {
            Collection<RunResult> results = runJmh(opt);
            for (RunResult r : results) {
                String name = r.getParams().getBenchmark();
                double score = r.getPrimaryResult().getScore();
                ListStatistics iterations;
                if (name.endsWith("regionWriteRoundTrip") && !"0".equals(r.getParams().getParam("busyPollMicros"))) {
                    busy[round] = score;
                    iterations = busyIterations;
                } else if (name.endsWith("regionWriteRoundTrip")) {
                    vfio[round] = score;
                    iterations = vfioIterations;
                } else if (name.endsWith("rawUnixSocketEcho")) {
                    raw[round] = score;
                    iterations = rawIterations;
                } else {
                    continue;
                }
                for (BenchmarkResult b : r.getBenchmarkResults()) {
                    for (IterationResult i : b.getIterationResults()) {
                        iterations.addValue(i.getPrimaryResult().getScore());
                    }
                }
            }
            if (vfio[round] == 0 || raw[round] == 0 || busy[round] == 0) {
                throw new IOException("JMH returned no result for one of the two benchmarks");
            }
            ratios[round] = vfio[round] / raw[round];
            log(String.format(Locale.ROOT, "  round %d: REGION_WRITE %.0f ops/s, raw echo %.0f ops/s: ratio %.3f;"
                    + " with --busy-poll-us %d %.0f ops/s", round + 1, vfio[round], raw[round], ratios[round],
                    BUSY_POLL_MICROS, busy[round]));
        }
        double vfioErr = relative(vfioIterations.getMeanErrorAt(0.999), vfioIterations.getMean());
        double rawErr = relative(rawIterations.getMeanErrorAt(0.999), rawIterations.getMean());
        double[] r = DataPathBench.Spread.minMedianMax(ratios);
        double vfioMedian = DataPathBench.Spread.minMedianMax(vfio)[1];
        double rawMedian = DataPathBench.Spread.minMedianMax(raw)[1];
        double busyMedian = DataPathBench.Spread.minMedianMax(busy)[1];
        double busyErr = relative(busyIterations.getMeanErrorAt(0.999), busyIterations.getMean());
        // The error of the ratio: half the spread of the rounds, relative to the median.
        double ratioError = (r[2] - r[0]) / 2 / r[1];
        j.put("regionWriteOpsPerSecond", vfioMedian);
        j.put("regionWriteError99Relative", vfioErr);
        j.put("rawEchoOpsPerSecond", rawMedian);
        j.put("rawEchoError99Relative", rawErr);
        j.put("iterations", vfioIterations.getN());
        j.put("busyPollMicros", BUSY_POLL_MICROS);
        j.put("busyPollRegionWriteOpsPerSecond", busyMedian);
        j.put("busyPollRegionWriteError99Relative", busyErr);
        j.put("ratio", r[1]);
        j.put("ratioLowest", r[0]);
        j.put("ratioHighest", r[2]);
        j.put("ratioErrorRelative", ratioError);
        j.put("ratioRounds", ratios);
        log(String.format(Locale.ROOT, "  ratio %.3f (median of %d rounds; lowest %.3f, highest %.3f: ±%.1f%%);"
                        + " JMH error over %d iterations: REGION_WRITE ±%.1f%%, raw echo ±%.1f%%",
                r[1], rounds, r[0], r[2], 100 * ratioError, vfioIterations.getN(), 100 * vfioErr, 100 * rawErr));
        md.append("A REGION_WRITE of 8 bytes and its reply (the path of every doorbell QEMU forwards), client to ")
                .append("server over the vfio-user socket, against a raw UNIX-socket echo of the same sizes (40 ")
                .append("bytes out, 32 back). JMH, one thread, throughput; ").append(rounds)
                .append(" rounds, each one fork of both, one right after the other; medians of the rounds. The JMH ")
                .append("error is JMH's 99.9% confidence interval of the mean over the ")
                .append(vfioIterations.getN()).append(" iterations of all rounds.\n\n")
                .append("| | round trips/s | µs each | ratio to raw echo |\n|---|---:|---:|---:|\n")
                .append(String.format(Locale.ROOT, "| vfio-user REGION_WRITE | %,.0f (JMH error ±%.1f%%) | %.2f | "
                        + "**%s** (rounds %s to %s, ±%.1f%%) |%n", vfioMedian, 100 * vfioErr, 1e6 / vfioMedian,
                        ratio(r[1]), ratio(r[0]), ratio(r[2]), 100 * ratioError))
                .append(String.format(Locale.ROOT, "| raw UNIX-socket echo (reference) | %,.0f (JMH error ±%.1f%%)"
                        + " | %.2f | 1 |%n", rawMedian, 100 * rawErr, 1e6 / rawMedian))
                .append(String.format(Locale.ROOT, "| REGION_WRITE, server with `--busy-poll-us %d` | %,.0f (JMH error"
                        + " ±%.1f%%) | %.2f | %s (not the figure: the echo sleeps) |%n%n", BUSY_POLL_MICROS, busyMedian,
                        100 * busyErr, 1e6 / busyMedian, ratio(busyMedian / rawMedian)));
    }

    /** The busy poll section 1 also measures: longer than a round trip here (about 40 µs), so the server never sleeps. */
    static final int BUSY_POLL_MICROS = 200;

    private static double relative(double err, double score) {
        return Double.isNaN(err) || score == 0 ? 0 : err / score;
    }

    /** Runs JMH; it allows one run per machine (/tmp/jmh.lock), so waits for someone else's to end. */
    private static Collection<RunResult> runJmh(Options opt) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return new Runner(opt).run();
            } catch (org.openjdk.jmh.runner.RunnerException e) {
                if (attempt == 24 || !String.valueOf(e.getMessage()).contains("JMH lock")) {
                    throw e;
                }
                log("  another JMH run holds /tmp/jmh.lock; waiting");
                Thread.sleep(5000);
            }
        }
    }

    // ---- 2 -----------------------------------------------------------------------------------------------------

    private void dataPath(Map<String, Object> j) throws Exception {
        DataPathBench bench = new DataPathBench(quick ? 100 : 300, quick ? 150 : 300, quick ? 1 : 3,
                BenchSuite::log);
        List<DataPathBench.Row> rows = bench.run();
        Map<Long, DataPathBench.Row> memcpy = new LinkedHashMap<>();
        for (DataPathBench.Row r : rows) {
            if (r.op().equals("memcpy")) {
                memcpy.put(r.size(), r);
            }
        }
        List<Map<String, Object>> jr = new ArrayList<>();
        md.append("Two RC QPs of one device connected to each other; QP A WRITEs into, READs from or SENDs to B's ")
                .append("4 MiB MR (page table of 4 KiB pages) through the driver model and the real vfio-user socket ")
                .append("(posted doorbells, CQ polled in guest memory). Bandwidth keeps ").append(DataPathBench.WINDOW)
                .append(" WQEs in flight; latency one. Reference: single-thread `MemorySegment.copy` of the same ")
                .append("size between the same two guest-RAM buffers, interleaved with the operations in rounds (each ")
                .append("figure is the best of its rounds). Ratios: bandwidth / memcpy bandwidth, and ")
                .append("latency / memcpy time per copy.\n\n")
                .append("| op | size | GB/s | × memcpy bw | µs per op | × memcpy time |\n")
                .append("|---|---:|---:|---:|---:|---:|\n");
        for (long size : DataPathBench.SIZES) {
            DataPathBench.Row ref = memcpy.get(size);
            for (DataPathBench.Row r : rows) {
                if (r.size() != size) {
                    continue;
                }
                boolean isRef = r.op().equals("memcpy");
                double bwRatio = r.bytesPerSecond() / ref.bytesPerSecond();
                double latRatio = r.latencyNanos() / ref.latencyNanos();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("op", r.op());
                m.put("size", size);
                m.put("bytesPerSecond", r.bytesPerSecond());
                m.put("latencyNanos", r.latencyNanos());
                m.put("operations", r.operations());
                m.put("bandwidthRatioToMemcpy", bwRatio);
                m.put("latencyRatioToMemcpy", latRatio);
                jr.add(m);
                md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %s | %.1f | %s |%n",
                        isRef ? "memcpy (reference)" : r.op(), human(size), r.bytesPerSecond() / 1e9,
                        isRef ? "1.00" : "**" + ratio(bwRatio) + "**", r.latencyNanos() / 1e3,
                        isRef ? "1.00" : "**" + ratio(latRatio) + "**"));
            }
        }
        double perOp = bench.deviceBytesPerOperation();
        log(String.format(Locale.ROOT, "  device thread: %.1f bytes allocated per operation in the measured slices", perOp));
        md.append(String.format(Locale.ROOT, "%nThe device thread allocated %.1f bytes per operation in the measured "
                + "bandwidth slices (all sizes and operations; its `ThreadMXBean` counter).%n%n", perOp));
        j.put("window", DataPathBench.WINDOW);
        j.put("deviceBytesPerOperation", perOp);
        j.put("rows", jr);
        Path png = out.resolve("datapath.png");
        Chart.write(png, "ernic data path (driver model, one server) vs memcpy, " + json.get("generated"), rows);
        j.put("chart", png.getFileName().toString());
        md.append("\n![bandwidth and latency by message size](datapath.png)\n\n");
    }

    /** Three significant digits, without exponents. */
    /** Lowest, median and highest of the rounds' ratios. */
    static String spread(double[] minMedianMax) {
        return ratio(minMedianMax[0]) + " / " + ratio(minMedianMax[1]) + " / " + ratio(minMedianMax[2]);
    }

    static String ratio(double r) {
        return new java.math.BigDecimal(r).round(new java.math.MathContext(3)).stripTrailingZeros().toPlainString();
    }

    static String human(long size) {
        return size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
    }

    // ---- 3 -----------------------------------------------------------------------------------------------------

    /** Whether {@code ernic serve} has a {@code --backend} option yet (the mesh transport another change adds). */
    static boolean serveHasBackend() {
        try {
            Class<?> serve = Class.forName("ernic.server.ServeCommand");
            for (Field f : serve.getDeclaredFields()) {
                picocli.CommandLine.Option o = f.getAnnotation(picocli.CommandLine.Option.class);
                if (o != null && List.of(o.names()).contains("--backend")) {
                    return true;
                }
            }
        } catch (ClassNotFoundException e) {
            return false;
        }
        return false;
    }

    private void mesh(Map<String, Object> j) throws Exception {
        if (!serveHasBackend()) {
            j.put("status", "not run");
            j.put("reason", "needs --backend: ernic serve has no --backend tcp:manager:listen:PORT / tcp:worker:HOST:PORT yet");
            md.append("**Not run: needs --backend.** `ernic serve` has no `--backend tcp:manager:listen:PORT` / ")
                    .append("`--backend tcp:worker:HOST:PORT` yet. When it has, this section starts a manager and a ")
                    .append("worker server (GIDs given with `ERNIC_TCP_GUEST_GIDS`), connects a QP on each whose RTR ")
                    .append("destination GID is owned by the other server, and compares cross-server WRITE bandwidth ")
                    .append("with a raw TCP loopback stream of the same sizes.\n\n");
            log("  not run: needs --backend");
            return;
        }
        int rounds = quick ? 1 : 5;
        MeshBench.Result r = new MeshBench(quick ? 100 : 300, quick ? 150 : 300, rounds, BenchSuite::log)
                .ops("WRITE", "READ", "SEND").run();
        if (!r.dataChecked()) {
            throw new IOException("the WRITEs did not land in the other server's guest memory");
        }
        md.append("Two forked `ernic serve` processes in a mesh (`--backend tcp:manager:listen:PORT` and ")
                .append("`--backend tcp:worker:127.0.0.1:PORT`, guest GIDs ").append(MeshBench.GID_A).append(" and ")
                .append(MeshBench.GID_B).append(" given with `ERNIC_TCP_GUEST_GIDS`), one driver model on each. QP A's ")
                .append("RTR destination GID is owned by the other server, so every WRITE, READ and SEND (into a ")
                .append("receive posted on QP B) crosses the mesh; the first 4 KiB WRITE was checked in the other ")
                .append("guest's memory afterwards.").append(MeshBench.PINNED ? " Pinned (`-Dernic.meshPin=true`): the "
                        + "manager and the client on CPU 0, the worker on CPU 1; TCP's writer on 0, its reader on 1." : "")
                .append(" Bandwidth with ")
                .append(DataPathBench.WINDOW).append(" operations in flight, latency with one. Reference: a raw TCP ")
                .append("loopback stream of the same message sizes (latency: message out, one byte back), measured ")
                .append("in each of ").append(rounds).append(" rounds right before the operations; figures are the best ")
                .append("of the rounds, and the round columns give each round's own ratio (lowest, median, highest) ")
                .append("to show how much it moves.\n\n")
                .append("| size | op | GB/s | TCP GB/s | × TCP bw | rounds: × TCP bw | µs | TCP µs | × TCP time ")
                .append("| rounds: × TCP time |\n")
                .append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        List<Map<String, Object>> jr = meshRows(r, "");
        List<DataPathBench.Row> chartRows = new ArrayList<>();
        for (DataPathBench.Row w : r.rdma()) {
            chartRows.add(new DataPathBench.Row(w.op() + " across the mesh", w.size(), w.bytesPerSecond(),
                    w.latencyNanos(), w.operations()));
        }
        for (DataPathBench.Row t : r.tcp()) {
            chartRows.add(new DataPathBench.Row("TCP loopback", t.size(), t.bytesPerSecond(), t.latencyNanos(),
                    t.operations()));
        }
        j.put("rows", jr);
        Path png = out.resolve("mesh.png");
        Chart.write(png, "ernic mesh (two servers) WRITE, READ, SEND vs raw TCP loopback, " + json.get("generated"), chartRows);
        j.put("chart", png.getFileName().toString());
        md.append("\n![mesh bandwidth and latency by message size](mesh.png)\n\n");
        Map<String, Object> loopback = new LinkedHashMap<>();
        loopback.put("status", "ran");
        loopback.put("rounds", rounds);
        loopback.put("rows", jr);
        j.put("loopback", loopback);
        meshOnVeth(j);
    }

    /** The WRITE across the mesh on two hosts of a {@link ernic.it.harness.MeshLan}, without and with delay. */
    private void meshOnVeth(Map<String, Object> j) throws Exception {
        String[] keys = {"veth", "veth+100us", "veth+1ms"};
        long[] delayMicros = {0, 100, 1000};
        int rounds = quick ? 1 : 3;
        md.append("### Between two network namespaces over a veth pair\n\n")
                .append("The same WRITEs with the manager and the worker on two hosts made of network namespaces, ")
                .append("joined by veth pairs on a bridge (the driver models stay in the suite's namespace: the ")
                .append("vfio-user sockets are files). `veth`: the worker connects straight to the manager. ")
                .append("`veth+100us`, `veth+1ms`: it connects through a TCP relay of the suite's (in the suite's own ")
                .append("namespace, on the same bridge) that holds every chunk that long in each direction; with two ")
                .append("servers every mesh message travels on that one connection. Reference: a raw TCP stream from ")
                .append("the worker's host to the manager's host over the same path (through a relay with the same ")
                .append("delay for the delayed rows), measured in each of ").append(rounds)
                .append(" rounds right before the WRITEs; best of the rounds, and each round's own ratio.\n\n");
        boolean ip = Stream.of("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip")
                .anyMatch(f -> Files.isExecutable(Path.of(f)));
        String notRun = null;
        if (!"root".equals(System.getProperty("user.name")) || !ip) {
            notRun = "needs root and ip netns";
        }
        ernic.it.harness.MeshLan lan = null;
        if (notRun == null) {
            try {
                lan = ernic.it.harness.MeshLan.create(2);
            } catch (IOException e) {
                notRun = "needs root and ip netns (" + e.getMessage().lines().findFirst().orElse("") + ")";
            }
        }
        if (notRun != null) {
            for (String k : keys) {
                j.put(k, new LinkedHashMap<>(Map.of("status", "not run", "reason", notRun)));
            }
            md.append("**Not run: ").append(notRun).append(".**\n\n");
            log("  veth rows not run: " + notRun);
            return;
        }
        md.append("| path | size | op | GB/s | TCP GB/s | × TCP bw | rounds: × TCP bw | µs | TCP µs ")
                .append("| × TCP time | rounds: × TCP time |\n")
                .append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        try (ernic.it.harness.MeshLan hosts = lan) {
            for (int v = 0; v < keys.length; v++) {
                log("  " + keys[v]);
                Map<String, Object> jv = new LinkedHashMap<>();
                jv.put("delayEachWayMicros", delayMicros[v]);
                jv.put("rounds", rounds);
                j.put(keys[v], jv);
                try {
                    MeshBench.Result r = new MeshBench(quick ? 100 : 300, quick ? 150 : 300, rounds, BenchSuite::log)
                            .runOnLan(hosts, java.time.Duration.ofNanos(delayMicros[v] * 1000));
                    if (!r.dataChecked()) {
                        throw new IOException("the WRITEs did not land in the other server's guest memory");
                    }
                    jv.put("status", "ran");
                    jv.put("rows", meshRows(r, "| " + keys[v] + " "));
                } catch (IOException | RuntimeException e) {
                    // One path failing leaves the others' rows.
                    String why = String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString());
                    jv.put("status", "failed");
                    jv.put("reason", why);
                    md.append("| ").append(keys[v]).append(" | failed: ").append(why.replace('|', '/'))
                            .append(" | | | | | | | | | |\n");
                    log("  " + keys[v] + " failed: " + e);
                }
            }
        }
        md.append("\n");
    }

    /** Section 3's table rows (after {@code lead}, the cells before the size) in md; their JSON objects. */
    private List<Map<String, Object>> meshRows(MeshBench.Result r, String lead) {
        List<Map<String, Object>> jr = new ArrayList<>();
        for (int i = 0; i < r.rdma().size(); i++) {
            DataPathBench.Row w = r.rdma().get(i), t = r.tcp(w.size());
            double bwRatio = w.bytesPerSecond() / t.bytesPerSecond(), latRatio = w.latencyNanos() / t.latencyNanos();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("size", w.size());
            m.put("op", w.op());
            m.put("bytesPerSecond", w.bytesPerSecond());
            m.put("tcpBytesPerSecond", t.bytesPerSecond());
            m.put("bandwidthRatioToTcp", bwRatio);
            m.put("latencyNanos", w.latencyNanos());
            m.put("tcpLatencyNanos", t.latencyNanos());
            m.put("latencyRatioToTcp", latRatio);
            DataPathBench.Spread sp = r.spreads().get(i);
            m.put("bandwidthRatioRounds", sp.bandwidthRatios());
            m.put("latencyRatioRounds", sp.latencyRatios());
            jr.add(m);
            md.append(lead).append(String.format(Locale.ROOT,
                    "| %s | %s | %.2f | %.2f | **%s** | %s | %.1f | %.1f | **%s** | %s |%n",
                    human(w.size()), w.op(), w.bytesPerSecond() / 1e9, t.bytesPerSecond() / 1e9, ratio(bwRatio),
                    spread(sp.bandwidth()), w.latencyNanos() / 1e3, t.latencyNanos() / 1e3, ratio(latRatio),
                    spread(sp.latency())));
        }
        return jr;
    }

    // ---- 4 -----------------------------------------------------------------------------------------------------

    private void guestPerftest(Map<String, Object> j) throws IOException {
        // One boot: perftest against the emulated ionic and against Soft-RoCE in the same guest.
        guestBench(j, GuestBench.PERFTEST, "perftest on ionic_0 and on rxe0",
                "Ratios, emulated ionic over Soft-RoCE in the same guest");
    }

    private void guestNvmeof(Map<String, Object> j) throws IOException {
        // One boot: the same fio jobs against our target and against nvmet-rdma over Soft-RoCE in the same guest.
        guestBench(j, GuestBench.NVMEOF, "fio on the NVMe-oF target and on nvmet-rdma over rxe0",
                "Ratios, our target over the kernel's in the same guest");
    }

    private void guestS3(Map<String, Object> j) throws IOException {
        // One boot: curl and a token client against the store, iperf3 to the host over the TAP as the reference.
        guestBench(j, GuestBench.S3, "curl, iperf3 and a C token client against the S3 store", "Ratios");
    }

    // ---- 9 -----------------------------------------------------------------------------------------------------

    private void guestTwo(Map<String, Object> j) throws IOException {
        // Two boots, a server each in a mesh: ionic's bytes cross it; rxe's cross the TAPs and their bridge.
        guestBench(j, GuestBench.TWO_GUESTS, "perftest between two guests, ionic across the mesh and rxe over the bridge",
                "Ratios, emulated ionic across the mesh over Soft-RoCE between the same two guests");
    }

    private void guestWire(Map<String, Object> j) throws IOException {
        // The references are section 9's boot (rxe0 to rxe0 over the bridge; ionic_0 across the mesh), run here
        // when section 9 did not; then two boots without a mesh, since the wire end takes the RoCEv2 that rxe
        // would get on its own guest: ionic_0 to rxe0, and ionic_0 to ionic_0.
        Map<String, Object> ref = new LinkedHashMap<>(), rxe = new LinkedHashMap<>(), wire = new LinkedHashMap<>();
        if (!only.contains(9)) {
            guestTwo(ref);
        }
        guestBench(rxe, GuestBench.WIRE_RXE, "ionic_0 on the wire to rxe0", "Ratios within the boot");
        guestBench(wire, GuestBench.WIRE, "ionic_0 to ionic_0 on the wire", "Ratios within the boot");
        j.put("wire_to_rxe", rxe);
        j.put("wire", wire);
        Path[] files = {out.resolve(GuestBench.TWO_GUESTS.outFile()), out.resolve(GuestBench.WIRE_RXE.outFile()),
                out.resolve(GuestBench.WIRE.outFile())};
        if (!Stream.of(files).allMatch(Files::isRegularFile)) {
            j.put("status", "failed");
            md.append("**No ratios:** a boot gave no result.\n\n");
            return;
        }
        ObjectMapper m = new ObjectMapper();
        List<Map<String, Object>> ratios = WireRatios.of(m.readTree(files[0].toFile()), m.readTree(files[1].toFile()),
                m.readTree(files[2].toFile()));
        j.put("ratios", ratios);
        md.append("Speed ratios (above 1: the first is faster), ionic_0 on the wire to rxe0 over rxe0 to rxe0, and ")
                .append("ionic_0 to ionic_0 on the wire over the mesh, between the same two guests:\n\n");
        table(m.valueToTree(ratios));
    }

    /** One guest bench ({@link GuestBench}), shortened by --quick; without a guest image, an earlier result. */
    private void guestBench(Map<String, Object> j, GuestBench.Bench bench, String what, String ratioTitle) throws IOException {
        Path file = out.resolve(bench.outFile());
        String missing = ernic.it.harness.GuestImage.missing();
        if (missing == null && Files.isRegularFile(Path.of(bench.script()))) {
            log("  booting " + (bench.vms() == 2 ? "two guests" : "a guest") + ": " + what + " (several minutes under TCG)");
            Files.deleteIfExists(file);
            int rc = GuestBench.run(bench, file, Path.of(bench.script()), quick ? bench.quick() : "");
            if (rc == GuestBench.SOME_RUNS_FAILED && Files.isRegularFile(file)) {
                // A run that printed no figure (perftest's clock calibration under TCG can give inf/nan) is
                // marked in the file ("ok": false, "anomaly"); the others still stand.
                md.append("Some runs gave no figure; they are marked `ok: false` with the anomaly below.\n\n");
                log("  some runs gave no figure (see their anomaly)");
            } else if (rc != 0 || !Files.isRegularFile(file)) {
                j.put("status", "failed");
                j.put("reason", "the guest " + bench.name() + " exited with " + rc);
                md.append("**Failed:** the guest ").append(bench.name()).append(" exited with ").append(rc).append(".\n\n");
                log("  failed: guest " + bench.name() + " exit " + rc);
                return;
            }
        } else if (missing != null) {
            log("  no guest image (" + missing + "): reading an earlier result if there is one");
        }
        if (!Files.isRegularFile(file)) {
            j.put("status", "not run");
            j.put("reason", "no guest image and no earlier " + file);
            md.append("**Not run:** no guest image (`./ernic guest build`), and no earlier `").append(file)
                    .append("`.\n\n");
            log("  not run: " + file + " not present");
            return;
        }
        JsonNode node = new ObjectMapper().readTree(file.toFile());
        j.put("status", "read");
        j.put("source", file.toString());
        j.put("results", node);
        md.append("From `").append(file).append("` (").append(Files.getLastModifiedTime(file)).append("):\n\n");
        JsonNode ratios = node.path("ratios");
        if (ratios.isArray() && !ratios.isEmpty()) {
            md.append(ratioTitle).append(":\n\n");
            table(ratios);
            md.append("All runs:\n\n");
        }
        JsonNode rows = node.isArray() ? node : node.path("results");
        if (rows.isArray() && !rows.isEmpty() && rows.get(0).isObject()) {
            table(rows);
            if (node.isObject()) {
                Iterator<Map.Entry<String, JsonNode>> it = node.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    if (!e.getKey().equals("results") && !e.getKey().equals("ratios")) {
                        md.append("- ").append(e.getKey()).append(": ").append(e.getValue()).append("\n");
                    }
                }
                md.append("\n");
            }
        } else {
            md.append("```json\n").append(node.toPrettyString()).append("\n```\n\n");
        }
        log("  read " + file);
    }

    /** A markdown table of an array of JSON objects, one column per field seen. */
    private void table(JsonNode rows) {
        Set<String> cols = new LinkedHashSet<>();
        rows.forEach(r -> r.fieldNames().forEachRemaining(cols::add));
        // perftest runs: the columns that carry the result (report.json keeps every field)
        List<String> main = List.of("device", "test", "size", "bw_avg_MiB_s", "msg_rate_Mpps", "t_typical_usec",
                "t_avg_usec", "t_p99_usec", "ok", "anomaly");
        if (cols.contains("device") && cols.contains("test") && cols.size() > 10) {
            cols.retainAll(main);
        }
        md.append("| ").append(String.join(" | ", cols)).append(" |\n|");
        cols.forEach(c -> md.append("---|"));
        md.append("\n");
        for (JsonNode r : rows) {
            md.append("|");
            for (String c : cols) {
                JsonNode v = r.get(c);
                md.append(" ").append(v == null || v.isNull() ? "" : v.isTextual() ? v.asText() : v.toString())
                        .append(" |");
            }
            md.append("\n");
        }
        md.append("\n");
    }

    // ---- 5 -----------------------------------------------------------------------------------------------------

    private void memory(Map<String, Object> j) throws Exception {
        MemoryBench.Result r = new MemoryBench(BenchSuite::log).run();
        List<MemoryBench.Point> p = r.points();
        long idle = p.get(1).rssKib(), qps = p.get(2).rssKib(), mrs = p.get(3).rssKib();
        double perQp = (qps - idle) * 1024.0 / MemoryBench.QPS, perMr = (mrs - qps) * 1024.0 / MemoryBench.MRS;
        List<Map<String, Object>> jp = new ArrayList<>();
        for (MemoryBench.Point pt : p) {
            jp.add(Map.of("state", pt.state(), "vmRssKib", pt.rssKib(), "vmHwmKib", pt.hwmKib(),
                    "ratioToIdle", pt.rssKib() / (double) idle));
        }
        j.put("process", r.command());
        j.put("points", jp);
        j.put("bytesPerQp", perQp);
        j.put("bytesPerMr", perMr);
        j.put("ratioWithAllObjectsToIdle", mrs / (double) idle);
        md.append("VmRSS of a forked `ernic.server.Main serve` process (the launcher's JVM flags) read from ")
                .append("/proc/PID/status, objects created through the driver model (QPs: SQ and RQ of 4 × 64 B, ")
                .append("one shared CQ; MRs: 4 KiB each, direct). Reference: the idle figure of the same process.\n\n")
                .append("| state | VmRSS | ratio to idle |\n|---|---:|---:|\n");
        for (MemoryBench.Point pt : p) {
            md.append(String.format(Locale.ROOT, "| %s | %,d KiB | %.3f |%n", pt.state(), pt.rssKib(),
                    pt.rssKib() / (double) idle));
        }
        md.append(String.format(Locale.ROOT, "%nGrowth per object: **%,.0f bytes per QP**, **%,.0f bytes per MR** "
                + "(RSS difference / count; the JVM heap grows in steps, so these are rough).%n%n", perQp, perMr));
        log(String.format(Locale.ROOT, "  %.0f B per QP, %.0f B per MR", perQp, perMr));
    }

    // ---- 8 -----------------------------------------------------------------------------------------------------

    private void p4(Map<String, Object> j) throws Exception {
        String missing = P4Bench.missing();
        if (missing != null) {
            j.put("status", "not run");
            j.put("reason", missing);
            md.append("**Not run:** ").append(missing).append(".\n\n");
            log("  not run: " + missing);
            return;
        }
        int rounds = quick ? 4 : 10;
        P4Bench.Result r = new P4Bench(quick ? 100 : 300, quick ? 100 : 200, rounds, BenchSuite::log).run();
        md.append("In-process servers and the driver model over their real vfio-user sockets (as section 2), ")
                .append(rounds).append(" rounds that interleave the configurations; each figure is the median of ")
                .append("its rounds. Two rates: per second of wall-clock time, and per second of CPU time of the ")
                .append("server's device thread (what the path costs the device: time the thread waits for a CPU is ")
                .append("not counted, but waking it up is, and on a busy machine the device thread sleeps and wakes ")
                .append("between doorbells far more often). ")
                .append("Programs and entries from `").append(P4Bench.PROGRAMS).append("`.\n\n")
                .append("**Ethernet, guest transmit.** The driver model keeps ").append(P4Bench.TX_INFLIGHT)
                .append(" TX descriptors in flight on a ring of ").append(P4Bench.TX_DEPTH).append(" (a posted ")
                .append("doorbell every ").append(P4Bench.TX_BATCH).append(" frames, descriptors written once); ")
                .append("the device gathers each frame from guest memory, runs the program and hands the frame to a ")
                .append("counting sink on the device thread, where a TAP would write it. Three servers: the engine ")
                .append("off (the reference), `--p4` (the built-in pass-through program) and `--p4-program l2_fwd.json ")
                .append("--p4-entries l2_fwd.entries` (frames to 02:00:00:ee:00:0b: a table hit, to the TAP). Every ")
                .append("frame sent was counted at the sink (and in `p4.eth.tx_to_tap`), and one frame per size was ")
                .append("compared byte for byte. Ratios: ÷ the engine off, from the medians; the per-round ratios ")
                .append("(a round's wall-clock figure ÷ the same round's reference) give the spread. Aim: ≥ 0.5.\n\n");
        long[] frameSizes = Arrays.stream(P4Bench.FRAME_SIZES).asLongStream().toArray();
        j.put("ethernet", ComparedTable.ETHERNET.write(md, r.ethernet(), frameSizes));
        md.append("\n**The engine alone.** The same hooks without the device around them: the bench thread hands ")
                .append("the same frame to the Ethernet hook of each program again and again (as the device's TX path ")
                .append("does; the frame checked once to leave unchanged, to the TAP) and counts frames per second of ")
                .append("its own CPU time. This is what the engine adds to each frame, without the socket, the doorbells ")
                .append("and the second thread of the device path, so it moves least with load.\n\n")
                .append("| frame | program | ns a frame | rounds: low to high (ns) |\n|---:|---|---:|---:|\n");
        List<Map<String, Object>> ja = new ArrayList<>();
        for (P4Bench.Row row : r.engine()) {
            double[] ns = new double[row.perRound().length];
            for (int k = 0; k < ns.length; k++) {
                ns[k] = 1e9 / row.perRound()[k];
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("program", row.what());
            m.put("frameBytes", row.size());
            m.put("nanosPerFrameMedian", 1e9 / row.median());
            m.put("nanosPerFrameRounds", ns);
            ja.add(m);
            md.append(String.format(Locale.ROOT, "| %d B | %s | %.0f | %s |%n", row.size(), row.what(),
                    1e9 / row.median(), lowHigh(ns)));
        }
        j.put("engineAlone", ja);
        md.append("\n**RDMA WRITE and the fp8 externs.** RDMA WRITEs from QP A to QP B of one device, ")
                .append(DataPathBench.WINDOW).append(" in flight, on a server with `--p4-program rdma_fp8.json ")
                .append("--p4-entries rdma_fp8.entries` and on one without the engine: a plain WRITE without the ")
                .append("engine (the reference); a plain WRITE through the program (no entry matches its address); a ")
                .append("WRITE of E4M3 values into the MR at 0x6f0000000000, which the program turns into E4M3 += E4M3 ")
                .append("(saturating); a WRITE of fp32 values into the MR at 0x6d0000000000, which it turns into a ")
                .append("conversion to E4M3 (a quarter of the bytes land). Bandwidth in payload bytes (what the WRITE ")
                .append("carries) per second. Both externs were checked once against values worked by hand from the ")
                .append("OCP FP8 spec before measuring. Ratios: ÷ the plain WRITE without the engine.\n\n");
        j.put("rdma", ComparedTable.RDMA.write(md, r.rdma(), P4Bench.RDMA_SIZES));
        md.append("\n");
    }

    /** The median of some figures. */
    static double median(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /** "low to high", three significant digits each. */
    static String lowHigh(double[] v) {
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        return ratio(s[0]) + " to " + ratio(s[s.length - 1]);
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String host() {
        int cpus = Runtime.getRuntime().availableProcessors();
        return System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", " + cpus + " CPUs, Java "
                + System.getProperty("java.version");
    }
}
