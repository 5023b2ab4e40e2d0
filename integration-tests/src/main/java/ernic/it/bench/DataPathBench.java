package ernic.it.bench;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import ernic.server.ErnicServer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Section 2 of the suite: the RDMA data path through the driver model and one server over its real vfio-user
 * socket. Two RC QPs of the same device are connected to each other; QP A WRITEs into, READs from, or SENDs to
 * QP B's buffer, for messages of 4 KiB to 4 MiB. Bandwidth keeps a window of WQEs in flight (one posted doorbell
 * per WQE, completions found by polling the CQ in guest memory, as perftest does: {@link #POLL_YIELD_NANOS});
 * latency has one WQE in flight. The reference is
 * a single-thread {@code MemorySegment.copy} of the same sizes between the same two guest-RAM buffers, measured
 * in the same run, interleaved with the operations in rounds; each figure is the best of its rounds, and each
 * round's ratio to its own reference is kept ({@link #spreads()}) to show how much the figures move. The loops
 * allocate nothing per operation (the work request and completion are reused).
 */
public final class DataPathBench {
    public static final long[] SIZES = {4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    /** Section 2's sizes: {@link #SIZES} and a 64-byte WRITE, whose cost is all doorbell (its CPU floor is one). */
    public static final long[] ONE_SERVER_SIZES = {64, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    public static final String[] OPS = {"WRITE", "READ", "SEND"};
    /** Section 2's window, and section 3's on paths without delay; the delayed paths' is {@link MeshBench#WINDOW}. */
    static final int WINDOW = 16;
    /** Receives kept posted on B for SEND when the window is small (what they were before the window could grow). */
    private static final int RECEIVES_MIN = 100;
    /**
     * The client polls its CQ as perftest does, without sleeping: it yields the CPU between polls (so a device
     * thread on the same CPU runs) for up to 5 ms, longer than any operation here takes, and sleeps only after that.
     * A sleep in the driver model's default polling (after 50 µs) lasts 50 µs or more on this kind of machine, which
     * would be measured as the device's time. {@code -Dernic.benchPollYieldNanos=50000} (in {@code ERNIC_JAVA_OPTS})
     * is the client of the benches before that (the driver model's default): to compare code across that change.
     */
    static final long POLL_YIELD_NANOS = Long.getLong("ernic.benchPollYieldNanos", 5_000_000);

    /**
     * One measurement: bytes per second with a window in flight, nanoseconds per operation with one, and the CPU
     * the bandwidth slice cost the server (or the reference's own threads), {@link CpuCost.Spent#NONE} when not read.
     */
    public record Row(String op, long size, double bytesPerSecond, double latencyNanos, long operations,
                      CpuCost.Spent cpu) {
        public Row(String op, long size, double bytesPerSecond, double latencyNanos, long operations) {
            this(op, size, bytesPerSecond, latencyNanos, operations, CpuCost.Spent.NONE);
        }
    }

    /** What an operation is compared with, measured in each round right before it (memcpy, a TCP stream). */
    @FunctionalInterface
    public interface Reference {
        Row measure(long size, boolean warm) throws IOException;
    }

    /**
     * The ratios of one operation and size to the reference of the same round, over the rounds: how much the
     * figure moves with the machine's load (bandwidth: op ÷ reference; latency: op ÷ reference).
     */
    public record Spread(String op, long size, double[] bandwidthRatios, double[] latencyRatios, double[] cpuRatios) {
        static double[] minMedianMax(double[] v) {
            double[] s = v.clone();
            java.util.Arrays.sort(s);
            return new double[] {s[0], s[s.length / 2], s[s.length - 1]};
        }

        public double[] bandwidth() {
            return minMedianMax(bandwidthRatios);
        }

        public double[] latency() {
            return minMedianMax(latencyRatios);
        }

        /** CPU per operation ÷ the reference's (its floor), per round: lowest, median, highest. */
        public double[] cpu() {
            return minMedianMax(cpuRatios);
        }
    }

    private final List<Spread> spreads = new ArrayList<>();
    /**
     * Bytes the device thread has allocated so far (its {@code ThreadMXBean} counter), when the device runs in this
     * process; and what it allocated, and how many operations completed, in the measured bandwidth slices.
     */
    private LongSupplier deviceAllocation;
    private long allocatedBefore, deviceAllocated, deviceOps;
    /** The server's CPU clocks (null: not read), and the CPU of a doorbell's floor, added to the reference's per WQE. */
    private CpuCost.Meter serverCpu;
    private double doorbellFloorNanos;
    private CpuCost.Sample cpuBefore;

    /** Per-round ratio spreads of the last measurement, one per operation and size. */
    public List<Spread> spreads() {
        return spreads;
    }

    private final long warmupNanos, measureNanos;
    private final int rounds;
    private final Consumer<String> log;
    /** How long the unrecorded first pass of each operation runs (see {@link #coldStart}). */
    private long coldStartNanos;

    public DataPathBench(long warmupMillis, long measureMillis, int rounds, Consumer<String> log) {
        this.rounds = rounds;
        this.warmupNanos = warmupMillis * 1_000_000L;
        this.measureNanos = measureMillis * 1_000_000L;
        this.coldStartNanos = warmupNanos;
        this.log = log;
    }

    /**
     * Runs the unrecorded first pass of each operation for {@code millis} instead of one warm-up slice: a
     * server in a fresh process is still being compiled by the JIT for seconds, which on two CPUs takes the
     * time the servers need (the mesh section measured 0.04 GB/s at 4 KiB after 0.3 s, 0.2-0.3 GB/s after 3 s).
     */
    DataPathBench coldStart(long millis) {
        coldStartNanos = millis * 1_000_000L;
        return this;
    }

    /**
     * One end of the measured pair: its verbs (both ends' are the same object when both QPs are on one device), its
     * CQ, its connected RC QP, and an MR of {@link #SIZES}' largest size over {@code buf}.
     */
    record End(RdmaVerbs verbs, Cq cq, Qp qp, Buffer buf, Mr mr) {
        /** A receive for the largest message, what every receive takes. */
        void postRecv() throws IOException {
            verbs.postRecv(qp, 0, mr.va(), (int) mr.length(), mr.lkey());
        }
    }

    private IonicDriverModel drv;
    /** A sends, B receives (and is written and read). */
    private End endA, endB;
    private final SendWr wr = new SendWr();
    private final Wc wc = new Wc();

    /**
     * Bytes the device thread allocated per operation in the bandwidth slices {@link #run} measured (all sizes and
     * operations; NaN when none): the data path's promise to allocate nothing per operation, as the JIT left it.
     */
    public double deviceBytesPerOperation() {
        return deviceOps == 0 ? Double.NaN : deviceAllocated / (double) deviceOps;
    }

    /**
     * Reads the server's CPU around each bandwidth slice with {@code meter}; {@code doorbellFloorNanos} is added to the
     * reference's CPU per operation to make the floor a WQE is compared with (one doorbell's receive; 0 for none).
     */
    DataPathBench cpu(CpuCost.Meter meter, double doorbellFloorNanos) {
        this.serverCpu = meter;
        this.doorbellFloorNanos = doorbellFloorNanos;
        return this;
    }

    /** WQEs in flight for bandwidth ({@link #WINDOW} unless {@link #window} says otherwise), and their bytes' cap. */
    private int window = WINDOW;
    private long windowBytes = Long.MAX_VALUE;

    /**
     * Keeps {@code wqes} in flight for bandwidth, but no more than {@code maxBytes} of them: the slice ends with a
     * drain of every WQE in flight, which for 128 WQEs of 4 MiB (512 MiB) would take seconds and measure nothing.
     * The QPs' rings must hold the window: {@link #ringLog2}.
     */
    DataPathBench window(int wqes, long maxBytes) {
        this.window = wqes;
        this.windowBytes = maxBytes;
        return this;
    }

    /** The WQEs in flight for {@code size}: the window, less when its bytes would pass the cap (at least one). */
    int window(long size) {
        return window(window, windowBytes, size);
    }

    /** The WQEs in flight for {@code size} with a window of {@code wqes} capped at {@code maxBytes}. */
    static int window(int wqes, long maxBytes, long size) {
        return (int) Math.max(1, Math.min(wqes, maxBytes / size));
    }

    /**
     * The log2 of a ring that holds {@code wqes} WQEs and, for SEND, the receives posted beside them: a ring of 2^n
     * slots holds 2^n - 1 (a full ring would look empty).
     */
    static int ringLog2(int wqes) {
        return 32 - Integer.numberOfLeadingZeros(receives(wqes));
    }

    /** The receives B keeps posted for SEND: one per WQE in flight and a window's worth to spare, at least 100. */
    static int receives(int wqes) {
        return Math.max(RECEIVES_MIN, 2 * wqes);
    }

    /** The sizes {@link #run} measures (default {@link #ONE_SERVER_SIZES}). */
    private long[] sizes = ONE_SERVER_SIZES;

    /** Measures only {@code sizes} in {@link #run} (the suite's smoke run: two of them). */
    DataPathBench sizes(long... sizes) {
        this.sizes = sizes.clone();
        return this;
    }

    public List<Row> run() throws IOException, InterruptedException, ExecutionException {
        var dir = Files.createTempDirectory("ernic-bench-data");
        List<Row> rows = new ArrayList<>();
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("ernic.sock").toString()))) {
            drv = IonicDriverModel.connect(server.vfioUser().socketPath(), 64L << 20);
            long device = server.vfioUser().eventLoop().submit(() -> Thread.currentThread().threadId()).get();
            var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            deviceAllocation = () -> threads.getThreadAllocatedBytes(device);
            serverCpu = CpuCost.inProcess(device);
            try {
                RdmaVerbs v = RdmaVerbs.open(drv);
                Cq cqA = v.createCq(10);
                Cq cqB = v.createCq(10);
                int access = RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ;
                Qp a = v.createQp(RdmaVerbs.RC, cqA, cqA, 7, 7, 6, access);
                Qp b = v.createQp(RdmaVerbs.RC, cqB, cqB, 7, 7, 6, access);
                v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
                long max = SIZES[SIZES.length - 1];
                Buffer bufA = v.buffer(max, false);
                Buffer bufB = v.buffer(max, false);
                int all = RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE | RdmaVerbs.ACCESS_REMOTE_READ;
                endA = new End(v, cqA, a, bufA, v.regMr(bufA, 0, max, all));
                endB = new End(v, cqB, b, bufB, v.regMr(bufB, 0, max, all));
                bufA.segment().fill((byte) 0x5a);
                rows.addAll(measure(OPS, this::memcpy, sizes));
            } finally {
                drv.close();
            }
        } finally {
            Files.deleteIfExists(dir.resolve("ernic.sock"));
            Files.deleteIfExists(dir);
        }
        return rows;
    }

    /**
     * Measures {@code ops} from end {@code a} to end {@code b}, their QPs connected already: used by the mesh section,
     * where a and b are on two servers.
     */
    List<Row> measure(End a, End b, String[] ops, Reference reference) throws IOException {
        this.endA = a;
        this.endB = b;
        this.drv = b.verbs().driver();
        return measure(ops, reference, SIZES);
    }

    /** The operations and the reference, interleaved in rounds; the reference's rows come first for each size. */
    private List<Row> measure(String[] ops, Reference reference, long[] sizes) throws IOException {
        spreads.clear();
        List<Row> rows = new ArrayList<>();
        // One unrecorded pass of every operation first, so that the smallest size, measured first, does not
        // pay for the JIT compiling the client's and the device's paths.
        for (String op : ops) {
            rdma(op, sizes[0], coldStartNanos);
        }
        reference.measure(sizes[0], true);
        for (long size : sizes) {
            // Rounds interleave the reference and the operations, so a burst of load elsewhere on the
            // machine hits both; each figure is the best of its rounds (the least disturbed one).
            Row[] best = new Row[ops.length + 1];
            double[][] bw = new double[ops.length][rounds], lat = new double[ops.length][rounds];
            double[][] cpu = new double[ops.length][rounds];
            for (int round = 0; round < rounds; round++) {
                boolean warm = round == 0;
                Row ref = reference.measure(size, warm);
                best[0] = better(best[0], ref);
                for (int o = 0; o < ops.length; o++) {
                    Row r = rdma(ops[o], size, warm ? warmupNanos : 0);
                    best[o + 1] = better(best[o + 1], r);
                    bw[o][round] = r.bytesPerSecond() / ref.bytesPerSecond();
                    lat[o][round] = r.latencyNanos() / ref.latencyNanos();
                    cpu[o][round] = r.cpu().nsPerOp() / floorNanos(ref);
                }
            }
            for (int o = 0; o < ops.length; o++) {
                spreads.add(new Spread(ops[o], size, bw[o], lat[o], cpu[o]));
            }
            for (Row r : best) {
                if (r == null) {
                    continue;
                }
                log.accept(String.format("  %-6s %8d B: %8.2f GB/s, %10.1f us, CPU %10.1f ns/op%s (best of %d)", r.op(),
                        size, r.bytesPerSecond() / 1e9, r.latencyNanos() / 1e3, r.cpu().nsPerOp(),
                        Double.isNaN(r.cpu().deviceSleepsPerOp()) ? ""
                                : String.format(", device sleeps %.2f/op", r.cpu().deviceSleepsPerOp()), rounds));
                rows.add(r);
            }
        }
        return rows;
    }

    /** The CPU per operation a row of this size is compared with: the reference's, plus a doorbell's floor. */
    double floorNanos(Row reference) {
        return reference.cpu().nsPerOp() + doorbellFloorNanos;
    }

    /** The doorbell's floor added to the reference's CPU per operation (0: none). */
    double doorbellFloorNanos() {
        return doorbellFloorNanos;
    }

    private static Row better(Row a, Row b) {
        if (a == null) {
            return b;
        }
        return new Row(a.op(), a.size(), Math.max(a.bytesPerSecond(), b.bytesPerSecond()),
                Math.min(a.latencyNanos(), b.latencyNanos()), a.operations() + b.operations(),
                CpuCost.Spent.cheaper(a.cpu(), b.cpu()));
    }

    private Row memcpy(long size, boolean warm) {
        MemorySegment src = endA.buf().segment(), dst = endB.buf().segment();
        long t0 = System.nanoTime();
        while (warm && System.nanoTime() - t0 < warmupNanos) {
            MemorySegment.copy(src, 0, dst, 0, size);
        }
        long n = 0;
        long cpu0 = CpuCost.currentThreadNanos();
        long start = System.nanoTime(), now;
        do {
            MemorySegment.copy(src, 0, dst, 0, size);
            n++;
            now = System.nanoTime();
        } while (now - start < measureNanos);
        long cpu = CpuCost.currentThreadNanos() - cpu0;
        double secs = (now - start) / 1e9;
        return new Row("memcpy", size, n * size / secs, (now - start) / (double) n, n,
                CpuCost.Spent.reference(cpu, n, n * size));
    }

    private Row rdma(String op, long size, long warmNanos) throws IOException {
        int opcode = switch (op) {
            case "WRITE" -> RdmaVerbs.WRITE;
            case "READ" -> RdmaVerbs.READ;
            default -> RdmaVerbs.SEND;
        };
        RdmaVerbs v = endA.verbs();
        Qp a = endA.qp();
        Cq cqA = endA.cq();
        wr.reset().sge(endA.mr().va(), (int) size, endA.mr().lkey());
        wr.opcode = opcode;
        wr.remoteVa = endB.mr().va();
        wr.rkey = endB.mr().rkey();
        boolean send = opcode == RdmaVerbs.SEND;
        if (send) {
            while (endB.qp().rqOutstanding() < receives(window)) {
                endB.postRecv();
            }
        }
        // Bandwidth: a window in flight.
        int inFlightMax = window(size);
        long ops = 0, start = 0, end;
        long t0 = System.nanoTime();
        boolean measuring = false;
        int inFlight = 0;
        CpuCost.Spent spent;
        for (;;) {
            while (inFlight < inFlightMax) {
                v.postSend(a, wr);
                inFlight++;
            }
            if (!v.pollWait(cqA, wc, 10_000, POLL_YIELD_NANOS)) {
                throw new IOException(op + " " + size + ": no completion within 10 s");
            }
            check(wc);
            inFlight--;
            if (send) {
                replenish(size);
            }
            long now = System.nanoTime();
            if (!measuring) {
                if (now - t0 >= warmNanos) {
                    measuring = true;
                    start = now;
                    ops = 0;
                    allocatedBefore = deviceAllocation == null ? 0 : deviceAllocation.getAsLong();
                    cpuBefore = serverCpu == null ? null : serverCpu.read();
                }
            } else {
                ops++;
                if (now - start >= measureNanos) {
                    end = now;
                    spent = cpuBefore == null ? CpuCost.Spent.NONE
                            : CpuCost.Spent.between(cpuBefore, serverCpu.read(), ops, ops * size);
                    if (deviceAllocation != null) {
                        deviceAllocated += deviceAllocation.getAsLong() - allocatedBefore;
                        deviceOps += ops;
                    }
                    break;
                }
            }
        }
        drain(inFlight, send, size);
        double bw = ops * size / ((end - start) / 1e9);
        // Latency: one in flight.
        long lops = 0;
        long lt0 = System.nanoTime(), lstart = 0, lend;
        measuring = false;
        for (;;) {
            v.postSend(a, wr);
            if (!v.pollWait(cqA, wc, 10_000, POLL_YIELD_NANOS)) {
                throw new IOException(op + " " + size + ": no completion within 10 s");
            }
            check(wc);
            if (send) {
                replenish(size);
            }
            long now = System.nanoTime();
            if (!measuring) {
                if (now - lt0 >= warmNanos / 2) {
                    measuring = true;
                    lstart = now;
                }
            } else {
                lops++;
                if (now - lstart >= measureNanos / 2) {
                    lend = now;
                    break;
                }
            }
        }
        return new Row(op, size, bw, (lend - lstart) / (double) lops, ops + lops, spent);
    }

    private static void check(Wc wc) throws IOException {
        if (wc.status != RdmaVerbs.STS_OK) {
            throw new IOException("completion with status " + wc.status + ": " + wc);
        }
    }

    /** SEND: take the receive completions on B's CQ and post the receives again. */
    private void replenish(long size) throws IOException {
        while (endB.cq().poll(wc)) {
            check(wc);
            endB.postRecv();
        }
    }

    private void drain(int inFlight, boolean send, long size) throws IOException {
        for (; inFlight > 0; inFlight--) {
            if (!endA.verbs().pollWait(endA.cq(), wc, 10_000, POLL_YIELD_NANOS)) {
                throw new IOException("drain: no completion");
            }
            check(wc);
        }
        if (send) {
            drv.sync();
            replenish(size);
        }
    }
}
