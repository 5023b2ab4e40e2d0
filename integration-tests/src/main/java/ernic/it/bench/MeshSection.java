package ernic.it.bench;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static ernic.it.bench.BenchSuite.human;
import static ernic.it.bench.BenchSuite.ratio;
import static ernic.it.bench.BenchSuite.spread;

/**
 * Section 3 of the suite's report ({@link MeshBench}): the mesh's WRITE, READ and SEND on loopback beside raw TCP,
 * then the WRITE over a veth pair without and with delay; each row's bandwidth, latency and CPU per byte against
 * TCP's, as a table in the report and its rows in the JSON.
 */
final class MeshSection {
    /** Where a row's {@code cpuRatio} goes for the report's summary. */
    @FunctionalInterface
    interface CpuRatios {
        void add(int section, String row, double ratio);
    }

    private final StringBuilder md;
    private final Path out;
    private final boolean quick;
    private final BenchSuite.Pace pace;
    private final String generated;
    private final CpuRatios cpuRatios;
    private final Consumer<String> log = s -> {
        System.out.println(s);
        System.out.flush();
    };

    MeshSection(StringBuilder md, Path out, boolean quick, BenchSuite.Pace pace, String generated, CpuRatios cpuRatios) {
        this.md = md;
        this.out = out;
        this.quick = quick;
        this.pace = pace;
        this.generated = generated;
        this.cpuRatios = cpuRatios;
    }

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

    void run(Map<String, Object> j) throws Exception {
        if (!serveHasBackend()) {
            j.put("status", "not run");
            j.put("reason", "needs --backend: ernic serve has no --backend tcp:manager:listen:PORT / tcp:worker:HOST:PORT yet");
            md.append("**Not run: needs --backend.** `ernic serve` has no `--backend tcp:manager:listen:PORT` / ")
                    .append("`--backend tcp:worker:HOST:PORT` yet. When it has, this section starts a manager and a ")
                    .append("worker server (GIDs given with `ERNIC_TCP_GUEST_GIDS`), connects a QP on each whose RTR ")
                    .append("destination GID is owned by the other server, and compares cross-server WRITE bandwidth ")
                    .append("with a raw TCP loopback stream of the same sizes.\n\n");
            log.accept("  not run: needs --backend");
            return;
        }
        int rounds = quick ? 1 : 5;
        j.put("window", DataPathBench.WINDOW);
        j.put("delayedWindow", MeshBench.WINDOW);
        j.put("windowMaxBytes", MeshBench.WINDOW_BYTES);
        MeshBench.Result r = new MeshBench(pace.warmupMillis(), pace.measureMillis(), rounds, log)
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
                .append("**CPU, the figure that does not depend on placement:** both servers' processes (sender and ")
                .append("receiver: every thread, the device threads, JIT and GC included) over each bandwidth slice, per ")
                .append("byte moved, against the TCP writer's and reader's threads together over the stream (user and ")
                .append("kernel time both); the cheapest round of each, and each round's ratio. Aim (issue 35): ≤ 1.3 × ")
                .append("TCP from 64 KiB up, ≤ 2 × at 4 KiB. `device ns/B`: the two device threads alone.\n\n")
                .append(MESH_HEADER).append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
                .append("---:|---:|---:|---:|---:|\n");
        List<Map<String, Object>> jr = meshRows(r, "loopback");
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
        Chart.write(png, "ernic mesh (two servers) WRITE, READ, SEND vs raw TCP loopback, " + generated,
                String.valueOf(r.window()), chartRows);
        j.put("chart", png.getFileName().toString());
        md.append("\n![mesh bandwidth and latency by message size](mesh.png)\n\n");
        Map<String, Object> loopback = new LinkedHashMap<>();
        loopback.put("status", "ran");
        loopback.put("rounds", rounds);
        loopback.put("window", r.window());
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
                .append(" rounds right before the WRITEs; best of the rounds, and each round's own ratio. Bandwidth ")
                .append("with ").append(DataPathBench.WINDOW).append(" operations in flight on `veth`, as on loopback; ")
                .append("on the delayed paths ").append(windowText()).append(", which covers their bandwidth-delay ")
                .append("product (a round trip of at least 2 ms at 1 ms each way).\n\n");
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
            log.accept("  veth rows not run: " + notRun);
            return;
        }
        md.append("| path ").append(MESH_HEADER).append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
                .append("---:|---:|---:|---:|---:|\n");
        try (ernic.it.harness.MeshLan hosts = lan) {
            for (int v = 0; v < keys.length; v++) {
                log.accept("  " + keys[v]);
                Map<String, Object> jv = new LinkedHashMap<>();
                jv.put("delayEachWayMicros", delayMicros[v]);
                jv.put("rounds", rounds);
                jv.put("window", MeshBench.window(java.time.Duration.ofNanos(delayMicros[v] * 1000)));
                j.put(keys[v], jv);
                try {
                    MeshBench.Result r = new MeshBench(pace.warmupMillis(), pace.measureMillis(), rounds, log)
                            .runOnLan(hosts, java.time.Duration.ofNanos(delayMicros[v] * 1000));
                    if (!r.dataChecked()) {
                        throw new IOException("the WRITEs did not land in the other server's guest memory");
                    }
                    jv.put("status", "ran");
                    jv.put("rows", meshRows(r, keys[v]));
                } catch (IOException | RuntimeException e) {
                    // One path failing leaves the others' rows.
                    String why = String.valueOf(e.getMessage()).lines().findFirst().orElse(e.toString());
                    jv.put("status", "failed");
                    jv.put("reason", why);
                    md.append("| ").append(keys[v]).append(" | failed: ").append(why.replace('|', '/'))
                            .append(" | | | | | | | | | | | | | | |\n");
                    log.accept("  " + keys[v] + " failed: " + e);
                }
            }
        }
        md.append("\n");
    }

    /** The delayed paths' window in words: its WQEs, whether that is perftest's depth, and the byte cap. */
    private static String windowText() {
        long last = DataPathBench.SIZES[DataPathBench.SIZES.length - 1];
        int w = MeshBench.WINDOW;
        String text = w + " operations" + (w == MeshBench.PERFTEST_DEPTH ? " (perftest's default `--tx-depth`)" : "");
        if (MeshBench.window(w, last) < w) {
            text += ", at most " + human(MeshBench.WINDOW_BYTES) + " of them ("
                    + MeshBench.window(w, 1 << 20) + " of 1 MiB, " + MeshBench.window(w, last) + " of " + human(last) + ")";
        }
        return text;
    }

    /** Section 3's table rows (after {@code lead}, the cells before the size) in md; their JSON objects. */
    private static final String MESH_HEADER = "| size | op | GB/s | TCP GB/s | × TCP bw | rounds: × TCP bw | µs | TCP µs "
            + "| × TCP time | rounds: × TCP time | CPU ns/B | device ns/B | TCP CPU ns/B | × TCP CPU | rounds: × TCP CPU |\n";

    /** Section 3's table rows of one path ({@code path}: "loopback", or a veth key with its own column) in md. */
    private List<Map<String, Object>> meshRows(MeshBench.Result r, String path) {
        String lead = path.equals("loopback") ? "" : "| " + path + " ";
        List<Map<String, Object>> jr = new ArrayList<>();
        for (int i = 0; i < r.rdma().size(); i++) {
            DataPathBench.Row w = r.rdma().get(i), t = r.tcp(w.size());
            double bwRatio = w.bytesPerSecond() / t.bytesPerSecond(), latRatio = w.latencyNanos() / t.latencyNanos();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("size", w.size());
            m.put("op", w.op());
            m.put("window", MeshBench.window(r.window(), w.size()));
            m.put("bytesPerSecond", w.bytesPerSecond());
            m.put("tcpBytesPerSecond", t.bytesPerSecond());
            m.put("bandwidthRatioToTcp", bwRatio);
            m.put("latencyNanos", w.latencyNanos());
            m.put("tcpLatencyNanos", t.latencyNanos());
            m.put("latencyRatioToTcp", latRatio);
            DataPathBench.Spread sp = r.spreads().get(i);
            m.put("bandwidthRatioRounds", sp.bandwidthRatios());
            m.put("latencyRatioRounds", sp.latencyRatios());
            double cpu = w.cpu().nsPerOp(), ref = t.cpu().nsPerOp(), size = w.size();
            m.putAll(CpuCost.fields(cpu, cpu / size, ref, ref / size));
            m.put("deviceCpuNsPerByte", CpuCost.finite(w.cpu().deviceNsPerOp() / size));
            m.put("deviceSleepsPerOp", CpuCost.finite(w.cpu().deviceSleepsPerOp()));
            m.put("cpuRatioRounds", sp.cpuRatios());
            cpuRatios.add(3, w.op() + " " + human(w.size()) + " " + path + ", both servers ÷ TCP", cpu / ref);
            jr.add(m);
            md.append(lead).append(String.format(Locale.ROOT,
                    "| %s | %s | %.2f | %.2f | **%s** | %s | %.1f | %.1f | **%s** | %s | %.3f | %.3f | %.3f | **%s** | %s |%n",
                    human(w.size()), w.op(), w.bytesPerSecond() / 1e9, t.bytesPerSecond() / 1e9, ratio(bwRatio),
                    spread(sp.bandwidth()), w.latencyNanos() / 1e3, t.latencyNanos() / 1e3, ratio(latRatio),
                    spread(sp.latency()), cpu / size, w.cpu().deviceNsPerOp() / size, ref / size, ratio(cpu / ref),
                    spread(sp.cpu())));
        }
        return jr;
    }
}
