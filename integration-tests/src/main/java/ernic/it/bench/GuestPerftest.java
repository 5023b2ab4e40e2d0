package ernic.it.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestImage;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * perftest in the real guest on the emulated ionic NIC beside Soft-RoCE (rdma_rxe) in the same VM:
 * boots one guest against an in-process ionic server, runs {@code guest/bench/perftest-vs-rxe.sh}
 * (ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_send_lat at 64 B to 1 MiB on both
 * devices) and writes the script's JSON document, with the run's timings and the device's counters
 * added, to {@code target/bench/guest-perftest.json}.
 *
 * <pre>
 *   java -cp ... ernic.it.bench.GuestPerftest [--out FILE] [--script FILE] [--sizes "64 4096"]
 * </pre>
 *
 * Exit status: 0 when every run passed, the script's status otherwise (the JSON is written whenever
 * the guest printed it), 2 when docker or the guest image is missing, 1 when the guest printed no
 * JSON. Paths are relative to the working directory (the repository root under ./ernic).
 */
public final class GuestPerftest {
    static final String SCRIPT = "guest/bench/perftest-vs-rxe.sh";
    /** The script's exit status when it printed its JSON but some runs gave no figure ("ok": false). */
    static final int SOME_RUNS_FAILED = 4;
    static final String BEGIN = "PERFTEST-JSON-BEGIN", END = "PERFTEST-JSON-END";

    private GuestPerftest() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of("target", "bench", "guest-perftest.json");
        Path script = Path.of(SCRIPT);
        String sizes = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--script" -> script = Path.of(args[++i]);
                case "--sizes" -> sizes = args[++i];
                default -> {
                    System.err.println("usage: GuestPerftest [--out FILE] [--script FILE] [--sizes \"64 4096 ...\"]");
                    System.exit(2);
                }
            }
        }
        System.exit(run(out, script, sizes));
    }

    static int run(Path out, Path script, String sizes) throws IOException {
        String missing = GuestImage.missing();
        if (missing != null) {
            System.err.println("guest perftest: " + missing);
            return 2;
        }
        if (!Files.isRegularFile(script)) {
            System.err.println("guest perftest: no script " + script.toAbsolutePath() + " (run from the repository root)");
            return 2;
        }
        String body = Files.readString(script);
        if (sizes != null) {
            body = "export PERF_SIZES='" + sizes.replaceAll("[^0-9 ]", "") + "'\n" + body;
        }
        Path work = Files.createDirectories(Path.of("target", "bench", "guest-perftest")).toAbsolutePath();
        Path socket = Files.createDirectories(work.resolve("server")).resolve("ernic.sock");
        Instant started = Instant.now();
        GuestResult r;
        Map<String, Long> counters;
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString()))) {
            r = new GuestVm(0, work.resolve("vm0"), socket, System.out).withTimeout(Duration.ofMinutes(20)).run(body);
            counters = ((IonicDevice) server.device()).lastSessionCounters();
        }
        System.out.println(r);
        String output = r.output();
        int b = output.indexOf(BEGIN), e = output.indexOf(END);
        if (b < 0 || e < b) {
            System.err.println("guest perftest: the guest printed no JSON (exit " + r.exitStatus() + "); console tail:\n"
                    + r.consoleTail(40));
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
        // What the emulated device saw: proof that the ionic numbers are its work, and that it failed nothing.
        Map<String, Long> picked = new TreeMap<>();
        counters.forEach((k, v) -> {
            if (k.equals("rdma.sq.wqes") || k.equals("rdma.sq.errors") || k.equals("rdma.admin.errors")
                    || k.equals("rdma.admin.commands") || k.startsWith("refused.rdma")) {
                picked.put(k, v);
            }
        });
        run.set("ionic_device_counters", json.valueToTree(picked));
        Files.createDirectories(out.toAbsolutePath().getParent());
        json.writeValue(out.toFile(), doc);
        System.out.println("guest perftest: wrote " + out.toAbsolutePath());
        doc.withArray("ratios").forEach(x -> System.out.println("  " + x));
        return r.exitStatus();
    }
}
