package ernic.it.bench;

import ernic.ionic.IonicDevice;
import ernic.ionic.eth.FrameFilter;
import ernic.ionic.eth.FrameSink;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.p4hook.P4Scope;
import ernic.model.EthQueue;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import ernic.server.ErnicServer;
import ernic.server.P4Options;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * Section 8 of the suite: the P4 engine's cost on the device's two paths, through the driver model and in-process
 * servers over their real vfio-user sockets (as section 2).
 *
 * <ul>
 * <li><b>Ethernet:</b> guest transmit. The driver model keeps a TX ring of {@value #TX_DEPTH} descriptors busy
 *     ({@value #TX_INFLIGHT} in flight, posted doorbells every {@value #TX_BATCH}); the device gathers each frame
 *     from guest memory, runs the program, and hands the frame to a sink on the device thread (where a TAP would
 *     write it) that counts it. Three servers side by side: the engine off, {@code --p4} (the built-in pass-through)
 *     and {@code --p4-program l2_fwd.json --p4-entries l2_fwd.entries}, whose table sends the frames (to the other
 *     guest's MAC) to the TAP. Frames per second for each; the reference is the engine off.</li>
 * <li><b>The engine alone:</b> the Ethernet hooks of the two programs fed one frame after another on the bench
 *     thread, nanoseconds of its CPU time a frame: what the engine adds, without the socket and the wake-ups of
 *     the device path.</li>
 * <li><b>RDMA:</b> RDMA WRITEs from QP A to QP B of one device ({@value DataPathBench#WINDOW} in flight), on a
 *     server with {@code --p4-program rdma_fp8.json --p4-entries rdma_fp8.entries} and one without the engine:
 *     a plain WRITE without the engine (the reference), a plain WRITE through the program (no entry matches), a
 *     WRITE into the 1 MiB at 0x6f0000000000 that the program turns into an fp8 accumulate (E4M3 += E4M3) and a
 *     WRITE of fp32 into the 1 MiB at 0x6d0000000000 that it turns into a conversion to E4M3. Payload bytes per
 *     second.</li>
 * </ul>
 * Programs and entries are read from {@code integration-tests/src/test/resources/p4} (the suite runs in the
 * repository root, as {@code ./ernic bench} does). Rounds interleave the configurations, so load elsewhere on the
 * machine hits all of them; every round's figure is kept (the report gives the median and the spread). Before any
 * measurement each path is checked once: the frame the sink gets is the frame the guest sent, and the fp8 results
 * are those worked by hand from the OCP FP8 spec.
 */
public final class P4Bench {
    /** Where the test programs are, relative to the repository root. */
    public static final Path PROGRAMS = Path.of("integration-tests", "src", "test", "resources", "p4");
    /** Ethernet frame sizes (bytes on the wire without the FCS: 64 is the minimum, 1514 a 1500-byte MTU). */
    public static final int[] FRAME_SIZES = {64, 1514};
    public static final String[] ENGINES = {"engine off", "--p4 (pass-through)", "l2_fwd"};
    public static final long[] RDMA_SIZES = {4 << 10, 64 << 10, 1 << 20};
    public static final String[] RDMA_OPS = {"WRITE, engine off", "WRITE through rdma_fp8", "fp8 accumulate",
            "format convert"};
    static final int TX_DEPTH_LOG2 = 10, TX_DEPTH = 1 << TX_DEPTH_LOG2, TX_INFLIGHT = 512, TX_BATCH = 64;
    static final int SLOT_BYTES = 2048;
    /** l2_fwd.entries: this guest's MAC and the other guest's (the table sends the latter to the TAP, port 0). */
    static final long THIS_GUEST = 0x02_00_00_ee_00_0aL, OTHER_GUEST = 0x02_00_00_ee_00_0bL;
    /** rdma_fp8.entries: WRITEs into the 1 MiB here become E4M3 += E4M3 (saturating)... */
    static final long ACCUMULATE_VA = 0x6f00_0000_0000L;
    /** ...and WRITEs into the 1 MiB here become fp32 -> E4M3 conversions. */
    static final long CONVERT_VA = 0x6d00_0000_0000L;
    static final int REGION = 1 << 20;

    /**
     * One configuration at one size, in each round: frames (or payload bytes) per second of wall-clock time, and
     * per second of CPU time of the server's device thread (what the path costs the device, whatever else runs on
     * the machine).
     */
    /** A row beside its size's reference (the first row of that size): medians and per-round ratios. */
    public record Compared(Row row, boolean isReference, double[] perRound, double ratio, double cpuRatio) {
    }

    /** The rows of one size, each compared with the first of them, the reference. */
    public static List<Compared> compared(List<Row> rows, long size) {
        List<Compared> out = new ArrayList<>();
        Row ref = null;
        for (Row row : rows) {
            if (row.size() != size) {
                continue;
            }
            if (ref == null) {
                ref = row;
            }
            double[] perRound = new double[row.perRound().length];
            for (int k = 0; k < perRound.length; k++) {
                perRound[k] = row.perRound()[k] / ref.perRound()[k];
            }
            out.add(new Compared(row, row == ref, perRound, row.median() / ref.median(),
                    row.cpuMedian() / ref.cpuMedian()));
        }
        return out;
    }

    public record Row(String what, long size, double[] perRound, double[] perCpuRound) {
        public double median() {
            return BenchSuite.median(perRound);
        }

        public double cpuMedian() {
            return BenchSuite.median(perCpuRound);
        }
    }

    /** A rate over wall-clock time and over the device thread's CPU time. */
    record Rate(double wall, double cpu) {}

    /** The CPU time the device thread of {@code s} has used, in nanoseconds. */
    static long deviceCpu(ErnicServer s, long threadId) {
        return java.lang.management.ManagementFactory.getThreadMXBean().getThreadCpuTime(threadId);
    }

    static long deviceThread(ErnicServer s) throws Exception {
        return onLoop(s, () -> Thread.currentThread().threadId());
    }

    /** {@code engine}: the Ethernet hook alone, frames per CPU second of the calling thread (both rates). */
    public record Result(List<Row> ethernet, List<Row> engine, List<Row> rdma) {}

    private final long warmupNanos, measureNanos;
    private final int rounds;
    private final Consumer<String> log;

    public P4Bench(long warmupMillis, long measureMillis, int rounds, Consumer<String> log) {
        this.warmupNanos = warmupMillis * 1_000_000L;
        this.measureNanos = measureMillis * 1_000_000L;
        this.rounds = rounds;
        this.log = log;
    }

    /** Why the section cannot run here (the programs are not where they should be), or null. */
    public static String missing() {
        for (String f : List.of("l2_fwd.json", "l2_fwd.entries", "rdma_fp8.json", "rdma_fp8.entries")) {
            if (!Files.isRegularFile(PROGRAMS.resolve(f))) {
                return PROGRAMS.resolve(f) + " not found (run from the repository root)";
            }
        }
        return null;
    }

    static String program(String name) {
        return PROGRAMS.resolve(name).toString();
    }

    public Result run() throws Exception {
        Path dir = Files.createTempDirectory("ernic-bench-p4");
        try {
            List<Row> eth = ethernet(dir);
            return new Result(eth, engineAlone(), rdma(dir));
        } finally {
            try (var s = Files.list(dir)) {
                for (Path p : s.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    static <T> T onLoop(ErnicServer s, Callable<T> c) throws Exception {
        return s.vfioUser().eventLoop().submit(c).get();
    }

    // ---- Ethernet ----------------------------------------------------------------------------------------------

    /** Counts what the device transmits, on the device thread; keeps a copy of the next frame when asked. */
    static final class CountingSink implements FrameSink {
        long frames, bytes;
        byte[] capture;
        boolean captureNext;

        @Override
        public void transmit(MemorySegment frame) {
            frames++;
            bytes += frame.byteSize();
            if (captureNext) {
                capture = frame.toArray(ValueLayout.JAVA_BYTE);
                captureNext = false;
            }
        }
    }

    /** One server with one engine configuration, a driver model on its socket, and a TX queue. */
    final class EthRig implements AutoCloseable {
        final String name;
        final ErnicServer server;
        final IonicDevice dev;
        final CountingSink sink = new CountingSink();
        final IonicDriverModel drv;
        final EthQueue tx;
        final long frames;
        final long doorbell;
        final long thread;
        int frameSize;
        long posted, done;

        EthRig(Path dir, int i) throws Exception {
            name = ENGINES[i];
            P4Options p4 = switch (i) {
                case 0 -> null;
                case 1 -> new P4Options(true, null, null, null);
                default -> new P4Options(false, program("l2_fwd.json"), program("l2_fwd.entries"), null);
            };
            server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("eth" + i + ".sock").toString())
                    .withMac("02:00:00:ee:00:0a").withP4(p4));
            dev = (IonicDevice) server.device();
            onLoop(server, () -> {
                dev.lif().sink(sink);
                return null;
            });
            drv = IonicDriverModel.connect(server.vfioUser().socketPath(), 32L << 20);
            drv.bringUp();
            drv.probeLif();
            tx = EthQueue.tx(drv, 1, 0, 1, TX_DEPTH_LOG2);
            if (tx.control(true) != 0) {
                throw new IOException(name + ": TX queue not enabled");
            }
            frames = drv.alloc((long) TX_DEPTH * SLOT_BYTES);
            doorbell = tx.doorbellOffset();
            thread = deviceThread(server);
        }

        /** Writes a frame of {@code size} bytes (to the other guest's MAC) and its descriptor into every slot. */
        void frames(int size) {
            frameSize = size;
            for (int slot = 0; slot < TX_DEPTH; slot++) {
                long at = frames + (long) slot * SLOT_BYTES;
                drv.mem(at, size).copyFrom(MemorySegment.ofArray(frame(size, slot)));
                tx.writeTx(slot, EthQueue.TX_OPCODE_CSUM_NONE, 0, 0, at, size);
            }
        }

        /** Posts {@code n} descriptors (written already) and rings a posted doorbell. */
        void post(int n) {
            tx.advance(n);
            posted += n;
            drv.doorbellPosted(doorbell, IonicDriverModel.doorbellValue(tx.hwIndex(), 0, tx.head()));
        }

        /** Takes the completions there are; true when there was one. */
        boolean reap() throws IOException {
            EthQueue.Comp c = tx.next();
            if (c == null) {
                return false;
            }
            if (c.status() != 0) {
                throw new IOException(name + ": TX completion with status " + c.status());
            }
            // One completion retires every descriptor up to and including comp_index.
            int n = (c.compIndex() + 1 - (int) (done & (TX_DEPTH - 1))) & (TX_DEPTH - 1);
            if (n == 0 || n > posted - done) {
                throw new IOException(name + ": TX completion for slot " + c.compIndex() + " with " + (posted - done)
                        + " in flight");
            }
            done += n;
            return true;
        }

        void drain() throws IOException {
            long t0 = System.nanoTime();
            while (done < posted) {
                if (!reap()) {
                    if (System.nanoTime() - t0 > 10_000_000_000L) {
                        throw new IOException(name + ": " + (posted - done) + " TX descriptors not completed in 10 s");
                    }
                    Thread.onSpinWait();
                }
            }
        }

        /** Frames per second, {@link #TX_INFLIGHT} in flight, after a warm-up when {@code warm}. */
        Rate measure(boolean warm) throws IOException {
            long t0 = System.nanoTime(), start = 0, doneAtStart = 0, lastProgress = t0, cpuAtStart = 0;
            boolean measuring = false;
            for (;;) {
                while (posted - done <= TX_INFLIGHT - TX_BATCH) {
                    post(TX_BATCH);
                }
                long now = System.nanoTime();
                if (reap()) {
                    lastProgress = now;
                } else if (now - lastProgress > 10_000_000_000L) {
                    throw new IOException(name + ": no TX completion within 10 s");
                } else {
                    Thread.onSpinWait();
                }
                if (!measuring) {
                    if (now - t0 >= (warm ? warmupNanos : 0)) {
                        measuring = true;
                        start = now;
                        doneAtStart = done;
                        cpuAtStart = deviceCpu(server, thread);
                    }
                } else if (now - start >= measureNanos) {
                    long frames = done - doneAtStart;
                    long cpu = deviceCpu(server, thread) - cpuAtStart;
                    drain();
                    return new Rate(frames / ((now - start) / 1e9), frames / (cpu / 1e9));
                }
            }
        }

        /** Sends one frame and checks that the sink got exactly it; then that every frame so far reached the sink. */
        void check() throws Exception {
            onLoop(server, () -> sink.captureNext = true);
            long slot = posted & (TX_DEPTH - 1);
            post(1);
            drain();
            byte[] got = onLoop(server, () -> sink.capture);
            if (!Arrays.equals(got, frame(frameSize, (int) slot))) {
                throw new IOException(name + ": the frame transmitted is not the frame the guest sent");
            }
            verifyCounts();
        }

        void verifyCounts() throws Exception {
            long sunk = onLoop(server, () -> sink.frames);
            if (sunk != posted) {
                throw new IOException(name + ": " + posted + " frames sent, " + sunk + " reached the sink");
            }
            if (dev.p4() != null) {
                long toTap = onLoop(server, () -> dev.counters().getOrDefault("p4.eth.tx_to_tap", -1L));
                if (toTap != posted) {
                    throw new IOException(name + ": p4.eth.tx_to_tap " + toTap + " for " + posted + " frames");
                }
            }
        }

        @Override
        public void close() {
            drv.close();
            server.close();
        }
    }

    /** Ethernet II to the other guest, from this one, IPv4 ethertype, a payload that varies with the slot. */
    static byte[] frame(int size, int slot) {
        byte[] f = new byte[size];
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (OTHER_GUEST >>> 40 - 8 * i);
            f[6 + i] = (byte) (THIS_GUEST >>> 40 - 8 * i);
        }
        f[12] = 0x08;
        for (int i = 14; i < size; i++) {
            f[i] = (byte) (i * 13 + slot);
        }
        return f;
    }

    List<Row> ethernet(Path dir) throws Exception {
        List<EthRig> rigs = new ArrayList<>();
        try {
            for (int i = 0; i < ENGINES.length; i++) {
                rigs.add(new EthRig(dir, i));
            }
            List<Row> rows = new ArrayList<>();
            for (int size : FRAME_SIZES) {
                for (EthRig r : rigs) {
                    r.frames(size);
                    r.check();
                    r.measure(true); // an unrecorded pass: the JIT compiles this size's path
                }
                double[][] fps = new double[rigs.size()][rounds], cpu = new double[rigs.size()][rounds];
                for (int round = 0; round < rounds; round++) {
                    for (int k = 0; k < rigs.size(); k++) {
                        Rate r = rigs.get(k).measure(round == 0);
                        fps[k][round] = r.wall();
                        cpu[k][round] = r.cpu();
                    }
                }
                for (int k = 0; k < rigs.size(); k++) {
                    rigs.get(k).verifyCounts();
                    Row row = new Row(rigs.get(k).name, size, fps[k], cpu[k]);
                    rows.add(row);
                    log.accept(String.format(java.util.Locale.ROOT, "  %-20s %5d B: %,10.0f frames/s, %,10.0f per device "
                            + "CPU second (medians of %d; rounds: %s)", row.what(), size, row.median(), row.cpuMedian(),
                            rounds, rounds(fps[k], 1e6)));
                }
            }
            return rows;
        } finally {
            for (EthRig r : rigs) {
                r.close();
            }
        }
    }

    /** Each round's figure divided by {@code unit}, three significant digits. */
    static String rounds(double[] v, double unit) {
        StringBuilder b = new StringBuilder();
        for (double x : v) {
            b.append(b.isEmpty() ? "" : " ").append(BenchSuite.ratio(x / unit));
        }
        return b.toString();
    }


    /**
     * The Ethernet hook alone, without the device around it: the bench thread hands one frame after another to the
     * hook of a loaded program (as the device's TX path does) and counts frames per second of its own CPU time.
     * What the engine adds to each frame, free of the socket and the other thread that the device path has.
     */
    List<Row> engineAlone() throws Exception {
        String[] names = {"--p4 (pass-through)", "l2_fwd"};
        FrameFilter[] hooks = {P4Hooks.load(null, null, null, null, P4Scope.NONE).ethernet(),
                P4Hooks.load(Files.readString(Path.of(program("l2_fwd.json"))), "l2_fwd.json",
                        Files.readString(Path.of(program("l2_fwd.entries"))), "l2_fwd.entries", P4Scope.NONE).ethernet()};
        var mx = java.lang.management.ManagementFactory.getThreadMXBean();
        List<Row> rows = new ArrayList<>();
        for (int size : FRAME_SIZES) {
            byte[] bytes = frame(size, 0);
            MemorySegment f = java.lang.foreign.Arena.ofAuto().allocate(size, 64);
            f.copyFrom(MemorySegment.ofArray(bytes));
            for (FrameFilter h : hooks) {
                if (h.filter(f, FrameFilter.GUEST) != FrameFilter.TAP
                        || !Arrays.equals(h.output().toArray(ValueLayout.JAVA_BYTE), bytes)) {
                    throw new IOException("the engine alone did not send the frame on unchanged to the TAP");
                }
            }
            double[][] rate = new double[hooks.length][rounds];
            for (int round = -1; round < rounds; round++) { // round -1: unrecorded, for the JIT
                for (int k = 0; k < hooks.length; k++) {
                    FrameFilter h = hooks[k];
                    long n = 0, bad = 0;
                    long t0 = System.nanoTime(), c0 = mx.getCurrentThreadCpuTime();
                    long until = t0 + (round < 0 ? warmupNanos : measureNanos / 2);
                    do {
                        for (int i = 0; i < 1000; i++) {
                            bad += h.filter(f, FrameFilter.GUEST) == FrameFilter.TAP ? 0 : 1;
                        }
                        n += 1000;
                    } while (System.nanoTime() < until);
                    long cpu = mx.getCurrentThreadCpuTime() - c0;
                    if (bad != 0) {
                        throw new IOException(names[k] + ": " + bad + " frames not sent to the TAP");
                    }
                    if (round >= 0) {
                        rate[k][round] = n / (cpu / 1e9);
                    }
                }
            }
            for (int k = 0; k < hooks.length; k++) {
                Row row = new Row(names[k], size, rate[k], rate[k]);
                rows.add(row);
                log.accept(String.format(java.util.Locale.ROOT, "  engine alone, %-20s %5d B: %6.1f ns a frame "
                        + "(median of %d)", names[k], size, 1e9 / row.median(), rounds));
            }
        }
        return rows;
    }

    // ---- RDMA --------------------------------------------------------------------------------------------------

    static final int ALL = RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE | RdmaVerbs.ACCESS_REMOTE_READ;

    /** One server, two connected RC QPs, a source of E4M3 values, one of fp32 values, and the destinations. */
    final class RdmaRig implements AutoCloseable {
        final ErnicServer server;
        final IonicDevice dev;
        final IonicDriverModel drv;
        final RdmaVerbs v;
        final Cq cqA, cqB;
        final Qp a, b;
        final Buffer src8, src32, plain, acc, conv;
        final Mr mrSrc8, mrSrc32, mrPlain, mrAcc, mrConv;
        final SendWr wr = new SendWr();
        final Wc wc = new Wc();
        final long thread;

        RdmaRig(Path dir, boolean engine) throws Exception {
            P4Options p4 = engine ? new P4Options(false, program("rdma_fp8.json"), program("rdma_fp8.entries"), null)
                    : null;
            server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve((engine ? "fp8" : "plain") + ".sock")
                    .toString()).withP4(p4));
            dev = (IonicDevice) server.device();
            drv = IonicDriverModel.connect(server.vfioUser().socketPath(), 32L << 20);
            v = RdmaVerbs.open(drv);
            cqA = v.createCq(10);
            cqB = v.createCq(10);
            int access = RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ;
            a = v.createQp(RdmaVerbs.RC, cqA, cqA, 7, 7, 6, access);
            b = v.createQp(RdmaVerbs.RC, cqB, cqB, 7, 7, 6, access);
            v.connect(a, ernic.model.rdma.Path.of("10.0.0.1", "10.0.0.2"), b,
                    ernic.model.rdma.Path.of("10.0.0.2", "10.0.0.1"));
            src8 = v.buffer(REGION, false);
            src32 = v.buffer(REGION, false);
            plain = v.buffer(REGION, false);
            acc = v.buffer(REGION, false, ACCUMULATE_VA);
            conv = v.buffer(REGION / 4, false, CONVERT_VA);
            mrSrc8 = v.regMr(src8, 0, REGION, ALL);
            mrSrc32 = v.regMr(src32, 0, REGION, ALL);
            mrPlain = v.regMr(plain, 0, REGION, ALL);
            mrAcc = v.regMr(acc, 0, REGION, ALL);
            mrConv = v.regMr(conv, 0, REGION / 4, ALL);
            thread = deviceThread(server);
        }

        /** RDMA WRITE of {@code n} bytes from {@code src} to {@code dst}, one in flight: its status. */
        int writeOnce(Mr src, Mr dst, int n) {
            wr.reset().sge(src.va(), n, src.lkey());
            wr.opcode = RdmaVerbs.WRITE;
            wr.remoteVa = dst.va();
            wr.rkey = dst.rkey();
            v.postSend(a, wr);
            return v.pollWait(cqA, wc, 10_000) ? wc.status : -1;
        }

        /**
         * Checks each path once with values worked by hand from the OCP FP8 spec (E4M3: 1.0 = 0x38, 0.5 = 0x30,
         * 2.0 = 0x40, 1.5 = 0x3c, 448 = 0x7e), then fills the sources: E4M3 values (no NaN) and fp32 values in
         * [-512, 512] (some beyond 448: they saturate).
         */
        void checkAndFill(boolean engine) throws IOException {
            src8.put(0, new byte[] {0x38, 0x30, 0x11, 0x22});
            expect(writeOnce(mrSrc8, mrPlain, 4), "plain WRITE");
            if (!Arrays.equals(plain.get(0, 4), new byte[] {0x38, 0x30, 0x11, 0x22})) {
                throw new IOException("a plain WRITE did not land as sent");
            }
            if (engine) {
                acc.put(0, new byte[] {0x38, 0x38});
                expect(writeOnce(mrSrc8, mrAcc, 2), "fp8 accumulate");
                if (!Arrays.equals(acc.get(0, 2), new byte[] {0x40, 0x3c})) {
                    throw new IOException("fp8 accumulate: 1.0 + 1.0, 1.0 + 0.5 gave " + Arrays.toString(acc.get(0, 2)));
                }
                MemorySegment f = src32.segment();
                float[] in = {1.0f, -2.0f, 1000f, 0.3f};
                for (int i = 0; i < in.length; i++) {
                    f.set(LEF32, 4L * i, in[i]);
                }
                expect(writeOnce(mrSrc32, mrConv, 16), "format convert");
                if (!Arrays.equals(conv.get(0, 4), new byte[] {0x38, (byte) 0xc0, 0x7e, 0x2a})) {
                    throw new IOException("format convert: 1, -2, 1000, 0.3 gave " + Arrays.toString(conv.get(0, 4)));
                }
            }
            Random rnd = new Random(8);
            byte[] e4m3 = new byte[REGION];
            for (int i = 0; i < e4m3.length; i++) {
                int c;
                do {
                    c = rnd.nextInt(256);
                } while ((c & 0x7f) == 0x7f); // no NaN: the sums stay numbers (a NaN destination would stay NaN)
                e4m3[i] = (byte) c;
            }
            src8.segment().copyFrom(MemorySegment.ofArray(e4m3));
            acc.segment().copyFrom(MemorySegment.ofArray(e4m3));
            MemorySegment f = src32.segment();
            for (long i = 0; i < REGION / 4; i++) {
                f.set(LEF32, 4 * i, (rnd.nextFloat() - 0.5f) * 1024f);
            }
        }

        void expect(int status, String what) throws IOException {
            if (status != RdmaVerbs.STS_OK) {
                throw new IOException(what + ": completion status " + status);
            }
        }

        /** Payload bytes per second of {@code size}-byte WRITEs from {@code src} to {@code dst}, a window in flight. */
        Rate measure(Mr src, Mr dst, long size, boolean warm) throws IOException {
            wr.reset().sge(src.va(), (int) size, src.lkey());
            wr.opcode = RdmaVerbs.WRITE;
            wr.remoteVa = dst.va();
            wr.rkey = dst.rkey();
            long ops = 0, start = 0, cpuAtStart = 0;
            long t0 = System.nanoTime();
            boolean measuring = false;
            int inFlight = 0;
            for (;;) {
                while (inFlight < DataPathBench.WINDOW) {
                    v.postSend(a, wr);
                    inFlight++;
                }
                if (!v.pollWait(cqA, wc, 10_000)) {
                    throw new IOException(size + " B WRITE: no completion within 10 s");
                }
                expect(wc.status, size + " B WRITE");
                inFlight--;
                long now = System.nanoTime();
                if (!measuring) {
                    if (now - t0 >= (warm ? warmupNanos : 0)) {
                        measuring = true;
                        start = now;
                        cpuAtStart = deviceCpu(server, thread);
                    }
                } else {
                    ops++;
                    if (now - start >= measureNanos) {
                        long cpu = deviceCpu(server, thread) - cpuAtStart;
                        Rate bw = new Rate(ops * size / ((now - start) / 1e9), ops * size / (cpu / 1e9));
                        for (; inFlight > 0; inFlight--) {
                            if (!v.pollWait(cqA, wc, 10_000)) {
                                throw new IOException("drain: no completion");
                            }
                            expect(wc.status, size + " B WRITE");
                        }
                        return bw;
                    }
                }
            }
        }

        long counter(String name) throws Exception {
            return onLoop(server, () -> dev.counters().getOrDefault(name, -1L));
        }

        @Override
        public void close() {
            drv.close();
            server.close();
        }
    }

    static final ValueLayout.OfFloat LEF32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    List<Row> rdma(Path dir) throws Exception {
        try (RdmaRig off = new RdmaRig(dir, false); RdmaRig on = new RdmaRig(dir, true)) {
            off.checkAndFill(false);
            on.checkAndFill(true);
            List<Row> rows = new ArrayList<>();
            for (long size : RDMA_SIZES) {
                // A conversion of `size` fp32 bytes lands size / 4 bytes of E4M3.
                double[][] bw = new double[RDMA_OPS.length][rounds], cpu = new double[RDMA_OPS.length][rounds];
                for (int round = -1; round < rounds; round++) { // round -1: unrecorded, for the JIT
                    boolean warm = round <= 0;
                    Rate[] r = {
                            off.measure(off.mrSrc8, off.mrPlain, size, warm),
                            on.measure(on.mrSrc8, on.mrPlain, size, warm),
                            on.measure(on.mrSrc8, on.mrAcc, size, warm),
                            on.measure(on.mrSrc32, on.mrConv, size, warm)};
                    if (round >= 0) {
                        for (int k = 0; k < r.length; k++) {
                            bw[k][round] = r[k].wall();
                            cpu[k][round] = r[k].cpu();
                        }
                    }
                }
                for (int k = 0; k < RDMA_OPS.length; k++) {
                    Row row = new Row(RDMA_OPS[k], size, bw[k], cpu[k]);
                    rows.add(row);
                    log.accept(String.format(java.util.Locale.ROOT, "  %-24s %8d B: %8.3f GB/s, %8.3f GB per device CPU "
                            + "second (medians of %d; rounds: %s)", row.what(), size, row.median() / 1e9,
                            row.cpuMedian() / 1e9, rounds, rounds(bw[k], 1e9)));
                }
            }
            if (on.counter("p4.wqe.fp8_accumulate.ops") <= 0 || on.counter("p4.wqe.format_convert.ops") <= 0
                    || on.counter("p4.wqe.extern.bad_request") != 0 || on.counter("p4.wqe.extern.bad_operand") != 0) {
                throw new IOException("the externs did not run as expected: " + on.counter("p4.wqe.fp8_accumulate.ops")
                        + " accumulates, " + on.counter("p4.wqe.format_convert.ops") + " conversions");
            }
            return rows;
        }
    }
}
