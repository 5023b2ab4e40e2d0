package ernic.it.bench;

import ernic.it.harness.DelayRelay;
import ernic.it.harness.MeshLan;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminException;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Section 3 of the suite: RDMA WRITE (and READ and SEND, when asked) across two servers of a mesh (two forked {@code ernic serve} processes,
 * {@code --backend tcp:manager:listen:PORT} and {@code --backend tcp:worker:127.0.0.1:PORT}, each given its
 * guest's GID with {@code ERNIC_TCP_GUEST_GIDS}), one driver model per server; QP A's RTR destination GID is
 * owned by the other server, so every WRITE crosses the mesh. The reference, measured in the same run, is a
 * raw TCP loopback stream of the same message sizes (bandwidth: a writer streaming, a reader draining;
 * latency: the message out and a one-byte answer back). {@link #runOnLan} does the same with the servers on two
 * hosts of a {@link MeshLan}, the reference crossing the same path.
 */
public final class MeshBench {
    static final String GID_A = "10.77.0.1", GID_B = "10.77.0.2";
    /** The manager's mesh port on its own host of a {@link MeshLan} (a fresh namespace: nothing else there). */
    static final int LAN_PORT = 7400;
    /** The first pass through both freshly started servers, unrecorded, while their JIT compiles the path. */
    static final long COLD_START_MILLIS = 4_000;
    /** perftest's default {@code --tx-depth}. */
    static final int PERFTEST_DEPTH = 128;
    /**
     * WQEs in flight for bandwidth on the delayed paths: perftest's default {@code --tx-depth}, enough to cover their
     * bandwidth-delay product (1 ms each way: a 2 ms round trip holds 128 × 4 KiB = 512 KiB, 256 MB/s; the window of
     * 16 before 2026-12-07 capped 4 KiB WRITEs there at 32 MB/s). Without delay (loopback, {@code veth}) the window
     * stays {@link DataPathBench#WINDOW}: 16 covers a round trip of tens of µs, and 128 there cost the veth row
     * bandwidth and latency on two CPUs (docs/performance.md). {@code -Dernic.meshWindow=16} (in
     * {@code ERNIC_JAVA_OPTS}) brings the old window back, to compare across the change.
     */
    static final int WINDOW = Integer.getInteger("ernic.meshWindow", PERFTEST_DEPTH);
    /**
     * The window's bytes are capped at this (4 MiB: 16 WQEs, 1 MiB: 64): every bandwidth slice ends by draining what
     * is in flight, and 512 MiB of 4 MiB WRITEs would take seconds to drain on a busy machine. 64 MiB in flight
     * covers a 2 ms round trip up to 32 GB/s.
     */
    static final long WINDOW_BYTES = 64L << 20;

    /** The window of a path with {@code delay} each way: {@link #WINDOW} with a delay, else section 2's. */
    static int window(Duration delay) {
        return delay.isZero() ? DataPathBench.WINDOW : WINDOW;
    }

    /** The WQEs in flight for bandwidth at {@code size} with a window of {@code wqes}. */
    static int window(int wqes, long size) {
        return DataPathBench.window(wqes, WINDOW_BYTES, size);
    }

    /**
     * {@code rdma}: the operations' rows, per size in the order asked; {@code spreads} in the same order; {@code tcp}:
     * the reference, one row per size; {@code window}: the WQEs in flight for bandwidth ({@link #window(int, long)}).
     */
    public record Result(List<DataPathBench.Row> rdma, List<DataPathBench.Row> tcp, List<DataPathBench.Spread> spreads,
                         boolean dataChecked, int window) {
        /** The reference row of {@code size}. */
        public DataPathBench.Row tcp(long size) {
            return tcp.stream().filter(t -> t.size() == size).findFirst().orElseThrow();
        }
    }

    private final long warmupNanos, measureNanos;
    private final int rounds;
    private final Consumer<String> log;
    private String[] ops = {"WRITE"};

    public MeshBench(long warmupMillis, long measureMillis, int rounds, Consumer<String> log) {
        this.warmupNanos = warmupMillis * 1_000_000L;
        this.measureNanos = measureMillis * 1_000_000L;
        this.rounds = rounds;
        this.log = log;
    }

    /** The operations measured, each size in this order (WRITE, READ, SEND; default WRITE alone). */
    public MeshBench ops(String... ops) {
        this.ops = ops.clone();
        return this;
    }

    /**
     * {@code -Dernic.meshPin=true} (in {@code ERNIC_JAVA_OPTS}): the loopback run places its threads as two hosts of
     * one CPU each would have them: the manager's process and the client (this thread) on CPU 0, the worker's
     * process on CPU 1; the TCP reference's writer on CPU 0 and its reader on CPU 1. By default the scheduler places
     * them, and on two CPUs the figures then depend on where it put the three busy threads (docs/performance.md).
     */
    static final boolean PINNED = Boolean.getBoolean("ernic.meshPin");

    /** Both servers, the driver models and both ends of the TCP reference in this namespace, over loopback. */
    public Result run() throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        try (ServerSocketChannel listener = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            if (PINNED) {
                CpuPin.client();
            }
            return run(PINNED ? List.of("taskset", "-c", "0") : List.of(), PINNED ? List.of("taskset", "-c", "1")
                    : List.of(), port, "127.0.0.1:" + port, window(Duration.ZERO),
                    new TcpPath(listener, (InetSocketAddress) listener.getLocalAddress(), SocketChannel::open, PINNED));
        } finally {
            if (PINNED) {
                CpuPin.anyCpu();
            }
        }
    }

    /**
     * The manager on host 0 and the worker on host 1 of {@code lan}, so the mesh crosses the veth pairs and the
     * bridge as between two machines; the driver models stay in this namespace (the vfio-user sockets are files).
     * With a {@code delay}, the worker reaches the manager through a {@link DelayRelay} in this namespace that
     * holds each chunk {@code delay} in each direction: with two servers every mesh message travels on that one
     * connection. The TCP reference goes from host 1 to host 0 the same way: directly over the bridge, or through
     * a second relay with the same delay, placed in the same namespace.
     */
    public Result runOnLan(MeshLan lan, Duration delay) throws IOException, InterruptedException {
        InetSocketAddress manager = new InetSocketAddress(lan.address(0), LAN_PORT);
        ServerSocketChannel listener = lan.host(0).inside(
                () -> ServerSocketChannel.open().bind(new InetSocketAddress(lan.address(0), 0)));
        InetSocketAddress peer = (InetSocketAddress) listener.getLocalAddress();
        DelayRelay meshRelay = null, tcpRelay = null;
        try (listener) {
            if (!delay.isZero()) {
                InetSocketAddress here = new InetSocketAddress(lan.rootAddress(), 0);
                meshRelay = DelayRelay.start(here, manager, delay, delay);
                tcpRelay = DelayRelay.start(here, peer, delay, delay);
                manager = new InetSocketAddress(lan.rootAddress(), meshRelay.port());
                peer = new InetSocketAddress(lan.rootAddress(), tcpRelay.port());
            }
            Result r = run(lan.launcher(0), lan.launcher(1), LAN_PORT,
                    manager.getHostString() + ":" + manager.getPort(), window(delay),
                    new TcpPath(listener, peer, () -> lan.host(1).inside(SocketChannel::open), false));
            if (meshRelay != null && meshRelay.forwarded() == 0) {
                throw new IOException("nothing crossed the mesh's relay");
            }
            return r;
        } finally {
            if (meshRelay != null) {
                meshRelay.close();
            }
            if (tcpRelay != null) {
                tcpRelay.close();
            }
        }
    }

    /**
     * Where the TCP reference runs: its peer's listener, the address its writer connects to, how it opens, and
     * whether its reader runs on CPU 1 ({@link #PINNED}).
     */
    private record TcpPath(ServerSocketChannel listener, InetSocketAddress target, Opener opener, boolean pinned) {}

    @FunctionalInterface
    private interface Opener {
        SocketChannel open() throws IOException;
    }

    private Result run(List<String> managerLauncher, List<String> workerLauncher, int port, String managerAddress,
                       int window, TcpPath tcpPath) throws IOException, InterruptedException {
        List<DataPathBench.Row> rdma = new ArrayList<>(), tcp = new ArrayList<>();
        List<DataPathBench.Spread> spreads;
        boolean checked;
        try (ServerFork manager = ServerFork.start(managerLauncher, List.of("--backend", "tcp:manager:listen:" + port),
                Map.of("ERNIC_TCP_GUEST_GIDS", GID_A));
             ServerFork worker = ServerFork.start(workerLauncher, List.of("--backend", "tcp:worker:" + managerAddress),
                     Map.of("ERNIC_TCP_GUEST_GIDS", GID_B));
             IonicDriverModel drvA = IonicDriverModel.connect(manager.socket.toString(), 64L << 20);
             IonicDriverModel drvB = IonicDriverModel.connect(worker.socket.toString(), 64L << 20)) {
            RdmaVerbs va = RdmaVerbs.open(drvA), vb = RdmaVerbs.open(drvB);
            // Rings that hold the window (and SEND's receives), and CQs that hold both rings' completions.
            int ring = DataPathBench.ringLog2(window);
            Cq cqA = va.createCq(Math.max(10, ring + 1)), cqB = vb.createCq(Math.max(10, ring + 1));
            int access = RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ;
            Qp a = va.createQp(RdmaVerbs.RC, cqA, cqA, ring, ring, 6, access);
            Qp b = vb.createQp(RdmaVerbs.RC, cqB, cqB, ring, ring, 6, access);
            va.init(a, access);
            vb.init(b, access);
            // RTR is refused while no node owns the destination GID: wait for the mesh to form.
            rtrWhenOwned(va, a, b.id, Path.of(GID_A, GID_B), manager);
            rtrWhenOwned(vb, b, a.id, Path.of(GID_B, GID_A), worker);
            va.rts(a);
            vb.rts(b);
            long max = DataPathBench.SIZES[DataPathBench.SIZES.length - 1];
            int all = RdmaVerbs.ACCESS_LOCAL_WRITE | RdmaVerbs.ACCESS_REMOTE_WRITE | RdmaVerbs.ACCESS_REMOTE_READ;
            Buffer bufA = va.buffer(max, false), bufB = vb.buffer(max, false);
            DataPathBench.End endA = new DataPathBench.End(va, cqA, a, bufA, va.regMr(bufA, 0, max, all));
            DataPathBench.End endB = new DataPathBench.End(vb, cqB, b, bufB, vb.regMr(bufB, 0, max, all));
            byte[] pattern = new byte[4096];
            for (int i = 0; i < pattern.length; i++) {
                pattern[i] = (byte) (i * 7 + 3);
            }
            bufA.put(0, pattern);
            // The CPU of both servers, sender and receiver, against the TCP writer's and reader's together.
            DataPathBench bench = new DataPathBench(warmupNanos / 1_000_000L, measureNanos / 1_000_000L, rounds, log)
                    .coldStart(COLD_START_MILLIS)
                    .window(window, WINDOW_BYTES)
                    .cpu(CpuCost.forked(manager.pid()).and(CpuCost.forked(worker.pid())), 0);
            // The TCP reference runs in each round right before the operations, so a burst of load hits both.
            for (DataPathBench.Row r : bench.measure(endA, endB, ops,
                    (size, warm) -> tcpOnce(tcpPath, (int) size, warm))) {
                (r.op().equals("TCP") ? tcp : rdma).add(r);
            }
            spreads = bench.spreads();
            // The bytes really arrived in the other server's guest memory.
            checked = Arrays.equals(bufB.get(0, pattern.length), pattern);
        }
        return new Result(rdma, tcp, spreads, checked, window);
    }

    private void rtrWhenOwned(RdmaVerbs v, Qp qp, int dest, Path path, ServerFork server)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (;;) {
            try {
                v.rtr(qp, dest, path);
                return;
            } catch (AdminException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("RTR to " + path + " still refused after 30 s (status " + e.status
                            + "); server log:\n" + server.logText(), e);
                }
                Thread.sleep(100);
            }
        }
    }

    /**
     * A direct buffer of {@code size} bytes starting on a page, as the servers' read buffers do (FrameReader): a
     * large {@code allocateDirect} starts 16 bytes past a page, where the kernel's receive copy runs about four times
     * slower on AMD Zen, and the reference would then measure that instead of TCP.
     */
    private static ByteBuffer pageAligned(int size) {
        return Arena.ofAuto().allocate(size, 4096).asByteBuffer();
    }

    /** The reference: TCP on {@code path}, one size, bandwidth (a stream) and latency (message out, a byte back). */
    private DataPathBench.Row tcpOnce(TcpPath path, int size, boolean warm) throws IOException {
        ServerSocketChannel listener = path.listener();
        // The peer: reads whole messages; in ping-pong mode answers each with one byte.
        Thread peer = Thread.ofPlatform().daemon().start(() -> {
            if (path.pinned()) {
                CpuPin.answerer();
            }
            try (SocketChannel c = listener.accept()) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer in = pageAligned(size), ack = ByteBuffer.allocateDirect(1);
                ByteBuffer mode = ByteBuffer.allocateDirect(1);
                for (;;) {
                    mode.clear();
                    while (mode.hasRemaining()) {
                        if (c.read(mode) < 0) {
                            return;
                        }
                    }
                    boolean pingPong = mode.get(0) == 1;
                    in.clear();
                    while (in.hasRemaining()) {
                        if (c.read(in) < 0) {
                            return;
                        }
                    }
                    if (pingPong) {
                        ack.clear();
                        c.write(ack);
                    }
                }
            } catch (IOException e) {
                // over
            }
        });
        try (SocketChannel c = path.opener().open()) {
            c.connect(path.target());
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer out = pageAligned(size + 1), ack = ByteBuffer.allocateDirect(1);
            // Stream: a mode byte (0) and the message, back to back.
            long ops = 0, start = 0, end, cpu0 = 0;
            long t0 = System.nanoTime();
            boolean measuring = false;
            for (;;) {
                out.clear();
                out.put(0, (byte) 0);
                while (out.hasRemaining()) {
                    c.write(out);
                }
                long now = System.nanoTime();
                if (!measuring) {
                    if (now - t0 >= (warm ? warmupNanos : 0)) {
                        measuring = true;
                        start = now;
                        cpu0 = CpuCost.currentThreadNanos() + CpuCost.threadNanos(peer.threadId());
                    }
                } else {
                    ops++;
                    if (now - start >= measureNanos) {
                        end = now;
                        break;
                    }
                }
            }
            // The writer's and the reader's CPU over the stream: sender + receiver, as for the two servers.
            long cpu = CpuCost.currentThreadNanos() + CpuCost.threadNanos(peer.threadId()) - cpu0;
            double bw = ops * (double) size / ((end - start) / 1e9);
            // Ping-pong: mode byte (1) and message out, one byte back.
            long lops = 0, lstart = System.nanoTime(), lend;
            for (;;) {
                out.clear();
                out.put(0, (byte) 1);
                while (out.hasRemaining()) {
                    c.write(out);
                }
                ack.clear();
                while (ack.hasRemaining()) {
                    if (c.read(ack) < 0) {
                        throw new IOException("TCP peer closed");
                    }
                }
                lops++;
                long now = System.nanoTime();
                if (now - lstart >= measureNanos / 2) {
                    lend = now;
                    break;
                }
            }
            return new DataPathBench.Row("TCP", size, bw, (lend - lstart) / (double) lops, ops + lops,
                    CpuCost.Spent.reference(cpu, ops, ops * (long) size));
        } finally {
            try {
                peer.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted waiting for the TCP peer");
            }
        }
    }
}
