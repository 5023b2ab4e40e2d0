package ernic.it.bench;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Section 5 of the suite: the resident size of a real server process ({@code ernic.server.Main serve}, forked
 * with the launcher's JVM flags) read from {@code /proc/PID/status} VmRSS: started, with a client that brought
 * the device up (Ethernet and RDMA), with 1,000 RC QPs, and with 10,000 MRs more, all created through the
 * driver model. The reference is the idle figure of the same process.
 */
public final class MemoryBench {
    public static final int QPS = 1000, MRS = 10_000;

    /** One reading: what the process held, VmRSS and VmHWM in KiB, and the CPU it had used ({@link CpuCost}). */
    public record Point(String state, long rssKib, long hwmKib, CpuCost.Sample cpu) {}

    public record Result(long pid, String command, List<Point> points) {}

    private final Consumer<String> log;
    private CpuCost.Meter cpu;

    public MemoryBench(Consumer<String> log) {
        this.log = log;
    }

    public Result run() throws IOException, InterruptedException {
        List<Point> points = new ArrayList<>();
        try (ServerFork server = ServerFork.start(List.of(), java.util.Map.of())) {
            Process p = server.process;
            cpu = CpuCost.forked(p.pid());
            points.add(read(p, "started, no client"));
            try (IonicDriverModel drv = IonicDriverModel.connect(server.socket.toString(), 64L << 20)) {
                RdmaVerbs v = RdmaVerbs.open(drv);
                Cq cq = v.createCq(12);
                points.add(read(p, "client connected, Ethernet + RDMA up (idle)"));
                for (int i = 0; i < QPS; i++) {
                    v.createQp(RdmaVerbs.RC, cq, cq, 2, 2, 6, 0);
                }
                points.add(read(p, "+ " + QPS + " RC QPs"));
                Buffer buf = v.buffer(64 << 10, false);
                int access = RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE | RdmaVerbs.ACCESS_REMOTE_READ;
                for (int i = 0; i < MRS; i++) {
                    v.regMr(buf, (i % 16) * 4096L, 4096, access);
                }
                points.add(read(p, "+ " + MRS + " MRs"));
            }
            return new Result(p.pid(), "java --enable-native-access=ALL-UNNAMED ... ernic.server.Main serve", points);
        }
    }

    /** VmRSS / VmHWM after the process settled a moment. */
    private Point read(Process p, String state) throws IOException, InterruptedException {
        Thread.sleep(500);
        long rss = 0, hwm = 0;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = kib(line);
            } else if (line.startsWith("VmHWM:")) {
                hwm = kib(line);
            }
        }
        CpuCost.Sample used = cpu.read();
        log.accept(String.format("  %-45s VmRSS %8d KiB, CPU %6.0f ms (device thread %6.0f ms)", state, rss,
                used.processNanos() / 1e6, used.deviceNanos() / 1e6));
        return new Point(state, rss, hwm, used);
    }

    private static long kib(String line) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }
}
