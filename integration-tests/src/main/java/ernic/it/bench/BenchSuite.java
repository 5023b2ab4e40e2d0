package ernic.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import ernic.it.harness.HostCommands;
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
    /** Each section's {@code cpuRatio}s, by row: the report's summary. */
    private final Map<String, Map<String, Double>> cpuSummary = new LinkedHashMap<>();
    /** The references that gave no figure, by guest bench, and why: the report's summary names them. */
    private final Map<String, String> referencesMissing = new LinkedHashMap<>();

    /**
     * How long the measurement slices of sections 2 and 3 last (warm-up and measured, per operation and size), and
     * the CPU runs of sections 1 and 2 (each side of a doorbell).
     */
    record Pace(long warmupMillis, long measureMillis, long cpuMillis) {
        static final Pace FULL = new Pace(300, 300, 1000), QUICK = new Pace(100, 150, 500);
        /** The CI smoke run of the CPU accounting: slices too short for figures, long enough to read every field. */
        static final Pace SMOKE = new Pace(10, 30, 100);
    }

    private final Pace pace;
    /** Section 2's unrecorded first pass of each operation, so that its first size does not measure the JIT. */
    static final long COLD_START_MILLIS = 1_000;
    /** Section 2's sizes in the smoke run: the two the aim names. */
    static final long[] SMOKE_SIZES = {64, 64 << 10};

    private BenchSuite(Path out, Set<Integer> only, boolean quick, Pace pace) {
        this.out = out;
        this.only = only;
        this.quick = quick;
        this.pace = pace;
    }

    /**
     * The smoke run of the CPU accounting ({@code CpuCostTest}): {@code sections} with one round of very short
     * slices; returns the report's JSON as written to {@code out}.
     */
    static Map<String, Object> smoke(Path out, Set<Integer> sections) throws Exception {
        Files.createDirectories(out);
        BenchSuite suite = new BenchSuite(out, new LinkedHashSet<>(sections), true, Pace.SMOKE);
        suite.run();
        return suite.json;
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
        new BenchSuite(out, only, quick, quick ? Pace.QUICK : Pace.FULL).run();
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
        summary();
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

    /** Records a row's {@code cpuRatio} for the summary (a NaN is left out). */
    private void cpuRatio(int section, String row, double ratio) {
        if (Double.isFinite(ratio)) {
            cpuSummary.computeIfAbsent("section" + section, k -> new LinkedHashMap<>()).put(row, ratio);
        }
    }

    /** The summary: every section's {@code cpuRatio}s, in the JSON and as a table in the report. */
    private void summary() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("cpuRatio", cpuSummary);
        s.put("referencesMissing", referencesMissing);
        json.put("summary", s);
        referencesMissing.forEach((bench, why) -> md.append("**Reference missing** (").append(bench).append("): ")
                .append(why).append(".\n\n"));
        md.append("## Summary: CPU cost against the floors\n\n")
                .append("`cpuRatio`: the server's CPU time per operation ÷ its floor's, both measured in this run ")
                .append("(above 1: the server spends more CPU than the floor). Sections without a row here had no ")
                .append("reference or did not run.\n\n| section | row | cpuRatio |\n|---|---|---:|\n");
        cpuSummary.forEach((section, rows) -> rows.forEach((row, r) -> md.append("| ")
                .append(section.substring("section".length())).append(" | ").append(row).append(" | ")
                .append(ratio(r)).append(" |\n")));
        md.append("\n");
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
        doorbellCpu(j, rounds);
    }

    /**
     * Section 1's CPU figures: the device thread's CPU per REGION_WRITE round trip ÷ the echo thread's per echo,
     * in rounds of both (the suite's JVM; JMH's forks measure time only); the cheapest round of each, and each
     * round's ratio.
     */
    private void doorbellCpu(Map<String, Object> j, int rounds) throws Exception {
        long millis = pace.cpuMillis();
        double[] dev = new double[rounds], echo = new double[rounds], ratios = new double[rounds];
        for (int round = 0; round < rounds; round++) {
            DoorbellCpu.Result w = DoorbellCpu.regionWrite(millis), e = DoorbellCpu.rawEcho(millis);
            dev[round] = w.nsPerRoundTrip();
            echo[round] = e.nsPerRoundTrip();
            ratios[round] = dev[round] / echo[round];
            log(String.format(Locale.ROOT, "  CPU round %d: device thread %.0f ns per REGION_WRITE (%.0f/s), echo "
                    + "thread %.0f ns per echo (%.0f/s): ratio %.3f", round + 1, dev[round], w.roundTripsPerSecond(),
                    echo[round], e.roundTripsPerSecond(), ratios[round]));
        }
        double d = Arrays.stream(dev).min().orElseThrow(), e = Arrays.stream(echo).min().orElseThrow();
        double[] r = DataPathBench.Spread.minMedianMax(ratios);
        j.putAll(CpuCost.fields(d, d / DoorbellBenchmark.REQUEST, e, e / DoorbellBenchmark.REQUEST));
        j.put("deviceCpuNsPerOp", d);
        j.put("cpuRatioRounds", ratios);
        cpuRatio(1, "REGION_WRITE round trip, device thread ÷ echo thread", d / e);
        md.append("**CPU.** The server's device thread per REGION_WRITE round trip against ")
                .append("the echo thread per echo (its floor: receive 40 bytes, answer 32), the same two pinned as above, ")
                .append(rounds).append(" rounds of ").append(millis).append(" ms each in the suite's JVM; the cheapest ")
                .append("round of each (CPU time does not depend on where the threads ran as much as time does).\n\n")
                .append("| | CPU ns per round trip | ratio to the echo | rounds |\n|---|---:|---:|---:|\n")
                .append(String.format(Locale.ROOT, "| device thread, REGION_WRITE | %,.0f | **%s** | %s |%n", d,
                        ratio(d / e), spread(r)))
                .append(String.format(Locale.ROOT, "| echo thread (reference) | %,.0f | 1 | |%n%n", e));
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
        // The doorbell's CPU floor, measured first: a receiving thread's CPU per posted 40-byte message, one recvmsg
        // each, the socket seldom empty (DoorbellCpu.postedDoorbells); beside it the echo's, one at a time, and
        // the same receiver with the WQEs' window of 16, which sleeps and wakes for most messages.
        DoorbellCpu.Result posted = DoorbellCpu.postedDoorbells(pace.cpuMillis(), DoorbellCpu.STREAMED);
        DoorbellCpu.Result windowed = DoorbellCpu.postedDoorbells(pace.cpuMillis(), DataPathBench.WINDOW);
        DoorbellCpu.Result echo = DoorbellCpu.rawEcho(pace.cpuMillis());
        double doorbellFloor = posted.nsPerRoundTrip();
        log(String.format(Locale.ROOT, "  doorbell floor: %.0f ns of the receiver's CPU per posted 40-byte message "
                + "(%.0f/s); with %d in flight %.0f ns (%.0f/s); the echo's, one at a time: %.0f ns", doorbellFloor,
                posted.roundTripsPerSecond(), DataPathBench.WINDOW, windowed.nsPerRoundTrip(),
                windowed.roundTripsPerSecond(), echo.nsPerRoundTrip()));
        DataPathBench bench = new DataPathBench(pace.warmupMillis(), pace.measureMillis(), quick ? 1 : 3,
                BenchSuite::log).cpu(null, doorbellFloor);
        long[] sizes = pace == Pace.SMOKE ? SMOKE_SIZES : DataPathBench.ONE_SERVER_SIZES;
        // The first size measured is 64 B, whose CPU per WQE is the device path's own: give the JIT a second on it
        // first (a --quick run with 100 ms measured 4.65 × the floor at 64 B, 1.27-1.97 with 300 ms).
        bench.sizes(sizes).coldStart(pace == Pace.SMOKE ? pace.warmupMillis() : COLD_START_MILLIS);
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
                .append("**CPU:** the device thread's CPU time over each bandwidth slice, per WQE (`cpuNsPerOp`), ")
                .append("against its floor (`refCpuNsPerOp`): one doorbell received, which is a thread's CPU per ")
                .append("posted 40-byte message read (one recvmsg each) from a raw UNIX socket that is seldom empty (")
                .append(DoorbellCpu.STREAMED).append(" in flight), marked done in memory the client polls (measured ")
                .append(String.format(Locale.ROOT, "before the sizes: %,.0f ns; with %d in flight, when the receiver ",
                        doorbellFloor, DataPathBench.WINDOW))
                .append(String.format(Locale.ROOT, "sleeps and wakes for most messages, %,.0f ns; the raw echo's thread, ",
                        windowed.nsPerRoundTrip()))
                .append(String.format(Locale.ROOT, "one message at a time and answered: %,.0f ns", echo.nsPerRoundTrip()))
                .append("), plus memcpy's CPU for the payload (the memcpy row's thread). Cheapest of the rounds; ")
                .append("the rounds column gives each round's ratio.\n\n")
                .append("| op | size | GB/s | × memcpy bw | µs per op | × memcpy time | device CPU ns per op ")
                .append("| floor ns | × floor CPU | rounds: × floor |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Map<String, DataPathBench.Spread> spreads = new LinkedHashMap<>();
        for (DataPathBench.Spread sp : bench.spreads()) {
            spreads.put(sp.op() + sp.size(), sp);
        }
        for (long size : sizes) {
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
                double cpu = r.cpu().nsPerOp(), floor = isRef ? Double.NaN : bench.floorNanos(ref);
                m.putAll(CpuCost.fields(cpu, cpu / size, floor, floor / size));
                DataPathBench.Spread sp = spreads.get(r.op() + size);
                if (sp != null) {
                    m.put("cpuRatioRounds", sp.cpuRatios());
                    cpuRatio(2, r.op() + " " + human(size) + ", device thread ÷ doorbell + memcpy", cpu / floor);
                }
                jr.add(m);
                md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %s | %.1f | %s | %,.0f | %s | %s | %s |%n",
                        isRef ? "memcpy (reference)" : r.op(), human(size), r.bytesPerSecond() / 1e9,
                        isRef ? "1.00" : "**" + ratio(bwRatio) + "**", r.latencyNanos() / 1e3,
                        isRef ? "1.00" : "**" + ratio(latRatio) + "**", cpu,
                        isRef ? "" : String.format(Locale.ROOT, "%,.0f", floor),
                        isRef ? "" : "**" + ratio(cpu / floor) + "**", sp == null ? "" : spread(sp.cpu())));
            }
        }
        double perOp = bench.deviceBytesPerOperation();
        log(String.format(Locale.ROOT, "  device thread: %.1f bytes allocated per operation in the measured slices", perOp));
        md.append(String.format(Locale.ROOT, "%nThe device thread allocated %.1f bytes per operation in the measured "
                + "bandwidth slices (all sizes and operations; its `ThreadMXBean` counter).%n%n", perOp));
        j.put("window", DataPathBench.WINDOW);
        j.put("doorbellFloorCpuNs", doorbellFloor);
        j.put("doorbellWindowedCpuNs", windowed.nsPerRoundTrip());
        j.put("rawEchoCpuNs", echo.nsPerRoundTrip());
        j.put("deviceBytesPerOperation", perOp);
        j.put("rows", jr);
        Path png = out.resolve("datapath.png");
        Chart.write(png, "ernic data path (driver model, one server) vs memcpy, " + json.get("generated"),
                String.valueOf(DataPathBench.WINDOW),
                rows.stream().filter(r -> r.size() >= DataPathBench.SIZES[0]).toList()); // the chart's axis: 4 KiB up
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
        return size >= 1 << 20 ? (size >> 20) + " MiB" : size >= 1 << 10 ? (size >> 10) + " KiB" : size + " B";
    }

    // ---- 3 -----------------------------------------------------------------------------------------------------

    private void mesh(Map<String, Object> j) throws Exception {
        new MeshSection(md, out, quick, pace, String.valueOf(json.get("generated")), this::cpuRatio).run(j);
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
        GuestReport.table(md, m.valueToTree(ratios));
    }

    /** The guest benches' references that come from iperf3 on the host (section 7's S3 bench). */
    static final List<String> IPERF_REFERENCES = List.of("iperf_guest_to_host_MB_s", "iperf_host_to_guest_MB_s");

    /**
     * Why each reference of a guest bench's JSON that is there but null gave no figure ({@code iperf3}: whether the
     * host has iperf3, the usual reason); empty when every reference has one.
     */
    static List<String> missingReferences(JsonNode node, boolean iperf3) {
        List<String> whys = new ArrayList<>();
        for (String ref : IPERF_REFERENCES) {
            if (node.has(ref) && node.get(ref).isNull()) {
                whys.add("the reference " + ref + " gave no figure: " + (iperf3
                        ? "iperf3 between the guest and the host gave no result (the host has iperf3: see the run's anomaly)"
                        : "iperf3 is not installed on the host (./ernic bench installs it: tools/prereqs.sh)"));
            }
        }
        return whys;
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
        // A reference that gave no figure is named, here and in the summary, not left as a null among the results.
        List<String> whys = missingReferences(node, HostCommands.onPath("iperf3"));
        if (!whys.isEmpty()) {
            String why = String.join("; ", whys);
            j.put("referenceMissing", why);
            referencesMissing.put(bench.name(), why);
            md.append("**Reference missing:** ").append(why).append(".\n\n");
            log("  " + why);
        }
        GuestReport.cpu(md, j, node.path("run").path("server_cpu"));
        JsonNode ratios = node.path("ratios");
        if (ratios.isArray() && !ratios.isEmpty()) {
            md.append(ratioTitle).append(":\n\n");
            GuestReport.table(md, ratios);
            md.append("All runs:\n\n");
        }
        JsonNode rows = node.isArray() ? node : node.path("results");
        if (rows.isArray() && !rows.isEmpty() && rows.get(0).isObject()) {
            GuestReport.table(md, rows);
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
        // CPU: the server's process and device thread per object created; there is no floor to hold it against.
        List<Map<String, Object>> jc = new ArrayList<>();
        md.append("**CPU** of the server per object created (the difference between two readings over the count; ")
                .append("the half second of idling before each reading included). No reference: `cpuRatio` is null.\n\n")
                .append("| object | process CPU µs each | device thread µs each |\n|---|---:|---:|\n");
        String[] what = {"RC QP created", "MR registered"};
        int[] count = {MemoryBench.QPS, MemoryBench.MRS};
        for (int k = 0; k < 2; k++) {
            CpuCost.Sample before = p.get(k + 1).cpu(), after = p.get(k + 2).cpu();
            double proc = (after.processNanos() - before.processNanos()) / (double) count[k];
            double dev = (after.deviceNanos() - before.deviceNanos()) / (double) count[k];
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("what", what[k]);
            m.putAll(CpuCost.fields(proc, Double.NaN, Double.NaN, Double.NaN));
            m.put("deviceCpuNsPerOp", dev);
            jc.add(m);
            md.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f |%n", what[k], proc / 1e3, dev / 1e3));
        }
        j.put("cpu", jc);
        md.append("\n");
        int starts = quick ? 3 : 5;
        Path startDir = Files.createDirectories(out.resolve("start"));
        StartFootprint.report(new StartFootprint(starts, BenchSuite::log).run(startDir), starts, md, j);
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
        summarize(8, "Ethernet", j.get("ethernet"), "engine", "frameBytes", ComparedTable.ETHERNET);
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
        summarize(8, "RDMA", j.get("rdma"), "op", "size", ComparedTable.RDMA);
        md.append("\n");
    }

    /** The summary's {@code cpuRatio} of each row of a section-8 table but the reference's. */
    @SuppressWarnings("unchecked")
    private void summarize(int section, String table, Object rows, String whatKey, String sizeKey, ComparedTable t) {
        for (Map<String, Object> m : (List<Map<String, Object>>) rows) {
            Object r = m.get("cpuRatio");
            long size = ((Number) m.get(sizeKey)).longValue();
            if (r instanceof Double d && !Boolean.TRUE.equals(m.get("reference"))) {
                cpuRatio(section, table + " " + m.get(whatKey) + " " + t.sizeLabel().apply(size)
                        + ", device thread ÷ the reference's", d);
            }
        }
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
