package ernic.it.bench;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Section 5's start and footprint (issue 36): how soon a forked {@code ernic serve} opens its socket, with the CPU
 * it has used by then, and its resident size once a client brought the device up (Ethernet and RDMA, through the
 * driver model) and left it idle, split as /proc/PID/status does (RssAnon, RssFile, RssShmem). For two ways to
 * start it: the JVM's defaults (how serve started before issue 36, and how the tests' servers start) and the
 * package's settings, packaging/serve.jvm-options with an AOT cache trained on this class path as packaging/dist.sh
 * trains the package's. Both run on this JVM's runtime, not the package's jlink runtime.
 */
final class StartFootprint {
    static final Path OPTIONS = Path.of("packaging", "serve.jvm-options");
    /**
     * How long the device idles with its client before the reading: the JIT and the allocator settle, and the
     * package's {@code -XX:TrimNativeHeapInterval=5000} has handed back what the start freed at least once (3 s
     * read 79 or 90 MiB for the same server, as the trim had run or not).
     */
    static final long IDLE_MILLIS = 10_000;

    /** The medians of the starts of one setting. */
    record Figures(String setting, double openMillis, double cpuMillis, long rssKib, long anonKib, long fileKib,
                   long shmemKib) {}

    private final int starts;
    private final Consumer<String> log;

    StartFootprint(int starts, Consumer<String> log) {
        this.starts = starts;
        this.log = log;
    }

    /** The JVM's defaults, then the package's settings (when packaging/serve.jvm-options is here). */
    List<Figures> run(Path work) throws IOException, InterruptedException {
        List<Figures> all = new ArrayList<>();
        all.add(measure("JVM defaults", List.of()));
        if (Files.isRegularFile(OPTIONS)) {
            List<String> pkg = new ArrayList<>(List.of("@" + OPTIONS.toAbsolutePath()));
            Path aot = train(work.resolve("serve.aot"), pkg);
            if (aot != null) {
                pkg.add("-XX:AOTCache=" + aot);
            }
            all.add(measure(aot != null ? "the package's (serve.jvm-options, AOT cache)"
                    : "the package's (serve.jvm-options; the AOT training wrote no cache)", pkg));
        } else {
            log.accept("  no " + OPTIONS + " here: the package's settings are not measured");
        }
        return all;
    }

    /** A training run as packaging/dist.sh's: the socket, 2 s, SIGTERM; the JVM writes the cache as it exits. */
    private Path train(Path aot, List<String> options) throws IOException, InterruptedException {
        Files.deleteIfExists(aot);
        List<String> training = new ArrayList<>(options);
        training.addAll(List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-AOTRecordTraining",
                "-XX:AOTCacheOutput=" + aot));
        try (ServerFork s = ServerFork.withJvmOptions(training, List.of())) {
            Thread.sleep(2000);
            s.process.destroy();
            s.process.waitFor(3, TimeUnit.MINUTES);
        }
        return Files.isRegularFile(aot) && Files.size(aot) > 0 ? aot : null;
    }

    private Figures measure(String setting, List<String> options) throws IOException, InterruptedException {
        List<double[]> runs = new ArrayList<>();
        for (int i = 0; i < starts; i++) {
            try (ServerFork s = ServerFork.withJvmOptions(options, List.of())) {
                double open = s.socketOpenNanos / 1e6, cpu = s.cpuAtSocketNanos / 1e6;
                try (IonicDriverModel drv = IonicDriverModel.connect(s.socket.toString(), 64L << 20)) {
                    RdmaVerbs.open(drv).createCq(12);
                    Thread.sleep(IDLE_MILLIS);
                    Map<String, Long> st = status(s.pid());
                    runs.add(new double[] {open, cpu, st.get("VmRSS"), st.get("RssAnon"), st.get("RssFile"),
                        st.get("RssShmem")});
                    log.accept(String.format(Locale.ROOT, "  %s: socket open after %.0f ms (%.0f ms of CPU), idle"
                            + " with a client VmRSS %d KiB (anon %d, file %d, shmem %d)", setting, open, cpu,
                            st.get("VmRSS"), st.get("RssAnon"), st.get("RssFile"), st.get("RssShmem")));
                }
            }
        }
        return new Figures(setting, median(runs, 0), median(runs, 1), (long) median(runs, 2), (long) median(runs, 3),
                (long) median(runs, 4), (long) median(runs, 5));
    }

    private static double median(List<double[]> runs, int k) {
        double[] v = runs.stream().mapToDouble(r -> r[k]).sorted().toArray();
        return v[v.length / 2];
    }

    /** The kB fields of /proc/PID/status. */
    static Map<String, Long> status(long pid) throws IOException {
        Map<String, Long> m = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.endsWith(" kB")) {
                m.put(line.substring(0, colon), Long.parseLong(line.substring(colon + 1, line.length() - 3).strip()));
            }
        }
        return m;
    }

    /** The section's table and JSON. */
    static void report(List<Figures> figures, int starts, StringBuilder md, Map<String, Object> j) {
        md.append("**Start and footprint** (issue 36): a forked `serve` with its defaults. Socket open: from the")
                .append(" fork to the socket file (polled every millisecond), and the process's CPU by then. The size")
                .append(" is read ").append(IDLE_MILLIS / 1000).append(" s after a client (the driver model) brought")
                .append(" Ethernet and RDMA up; RssShmem is the client's memory the server mapped (a guest's RAM),")
                .append(" not the server's. Median of ").append(starts).append(" starts each, on this JVM's")
                .append(" runtime.\n\n")
                .append("| JVM settings | socket open | CPU by then | VmRSS | RssAnon | RssFile | RssShmem |\n")
                .append("|---|---:|---:|---:|---:|---:|---:|\n");
        List<Map<String, Object>> jf = new ArrayList<>();
        for (Figures f : figures) {
            md.append(String.format(Locale.ROOT, "| %s | %.0f ms | %.0f ms | %s | %s | %s | %s |%n", f.setting(),
                    f.openMillis(), f.cpuMillis(), mib(f.rssKib()), mib(f.anonKib()), mib(f.fileKib()),
                    mib(f.shmemKib())));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("setting", f.setting());
            m.put("socketOpenMillis", f.openMillis());
            m.put("cpuMillisAtSocket", f.cpuMillis());
            m.put("vmRssKib", f.rssKib());
            m.put("rssAnonKib", f.anonKib());
            m.put("rssFileKib", f.fileKib());
            m.put("rssShmemKib", f.shmemKib());
            jf.add(m);
        }
        md.append("\n");
        j.put("start", jf);
    }

    private static String mib(long kib) {
        return String.format(Locale.ROOT, "%.1f MiB", kib / 1024.0);
    }
}
