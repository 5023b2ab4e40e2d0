package ernic.it.bench;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The CPU side of the doorbell path, measured in the suite's own JVM (JMH's forks measure time, not CPU): the
 * server's device thread CPU per REGION_WRITE round trip, and the echo thread's CPU per 40-byte message of the raw
 * UNIX-socket echo, the floor of a doorbell (one receive of a 40-byte message and a 32-byte answer, nothing
 * behind it). The same servers and echo as {@link DoorbellBenchmark}, placed the same way (client on CPU 0, the
 * answering thread on CPU 1: {@link CpuPin}). And {@link #postedDoorbells}: the floor of a posted doorbell with
 * several in flight, as the data path rings them.
 */
final class DoorbellCpu {
    /** CPU time of the answering thread, the round trips counted and their wall-clock time. */
    record Result(long cpuNanos, long roundTrips, double seconds) {
        double roundTripsPerSecond() {
            return roundTrips / seconds;
        }

        /** CPU of the answering thread per round trip (per 40-byte message received and answered). */
        double nsPerRoundTrip() {
            return cpuNanos / (double) roundTrips;
        }
    }

    /** The window of {@link #postedDoorbells} as the floor: enough that the receiver finds the next one waiting. */
    static final int STREAMED = 1024;

    private DoorbellCpu() {}

    /** REGION_WRITE round trips for {@code millis} after a warm-up as long: the device thread's CPU per one. */
    static Result regionWrite(long millis) throws Exception {
        DoorbellBenchmark.VfioUser s = new DoorbellBenchmark.VfioUser();
        s.busyPollMicros = 0;
        s.pinned = true;
        s.start();
        try {
            s.pinClient();
            long device = s.server.eventLoop().submit(() -> Thread.currentThread().threadId()).get();
            return measure(millis, () -> s.client.regionWriteLong(0, 0x100, 8, s.value++),
                    () -> CpuCost.threadNanos(device));
        } finally {
            CpuPin.anyCpu();
            s.stop();
        }
    }

    /** Raw echo round trips for {@code millis} after a warm-up as long: the echo thread's CPU per message. */
    static Result rawEcho(long millis) throws Exception {
        DoorbellBenchmark.RawEcho s = new DoorbellBenchmark.RawEcho();
        s.pinned = true;
        s.start();
        try {
            s.pinClient();
            DoorbellBenchmark bench = new DoorbellBenchmark();
            long echo = s.echo.threadId();
            return measure(millis, () -> bench.rawUnixSocketEcho(s), () -> CpuCost.threadNanos(echo));
        } finally {
            CpuPin.anyCpu();
            s.stop();
        }
    }

    /**
     * The floor of the data path's doorbells: posted 40-byte messages on a UNIX socket with {@code window} of them in
     * flight. A receiving thread reads one message per read (one {@code recvmsg} each: the floor the issue names)
     * and marks each done in memory the client polls, yielding, as it polls a CQ: no answer on the socket, as a
     * posted write has none. The receiving thread's CPU per message is one doorbell with nothing behind it. With
     * a window of {@link #STREAMED} the socket is seldom empty, so the receiver seldom sleeps: a wake-up costs a
     * thread tens of µs of CPU on a virtual machine (the hypervisor's), which a receiver woken for each message
     * pays and the device thread with 16 WQEs in flight mostly does not; the floor leaves it out.
     */
    static Result postedDoorbells(long millis, int window) throws Exception {
        Path dir = Files.createTempDirectory("ernic-bench-floor");
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(dir.resolve("floor.sock"));
        AtomicLong done = new AtomicLong();
        int size = DoorbellBenchmark.REQUEST;
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(address)) {
            Thread receiver = Thread.ofPlatform().daemon().name("floor-receiver").start(() -> {
                try (SocketChannel peer = listener.accept()) {
                    ByteBuffer in = ByteBuffer.allocateDirect(size);
                    for (long messages = 1; ; messages++) {
                        in.clear();
                        while (in.hasRemaining()) {
                            if (peer.read(in) < 0) {
                                return;
                            }
                        }
                        done.set(messages);
                    }
                } catch (IOException e) {
                    // run over
                }
            });
            try (SocketChannel socket = SocketChannel.open(address)) {
                ByteBuffer out = ByteBuffer.allocateDirect(size);
                long[] sent = {0};
                RoundTrip post = () -> { // one message, once the window has room for it
                    while (sent[0] - done.get() >= window) {
                        Thread.yield();
                    }
                    out.clear();
                    while (out.hasRemaining()) {
                        socket.write(out);
                    }
                    sent[0]++;
                };
                return measure(millis, post, () -> CpuCost.threadNanos(receiver.threadId()));
            } finally {
                receiver.join(5000);
            }
        } finally {
            Files.deleteIfExists(dir.resolve("floor.sock"));
            Files.deleteIfExists(dir);
        }
    }

    @FunctionalInterface
    private interface RoundTrip {
        void run() throws IOException;
    }

    @FunctionalInterface
    private interface Clock {
        long nanos() throws IOException;
    }

    private static Result measure(long millis, RoundTrip trip, Clock cpu) throws IOException {
        long nanos = millis * 1_000_000L;
        for (long t0 = System.nanoTime(); System.nanoTime() - t0 < nanos; ) {
            trip.run();
        }
        long n = 0, cpu0 = cpu.nanos(), start = System.nanoTime(), now;
        do {
            trip.run();
            n++;
            now = System.nanoTime();
        } while (now - start < nanos);
        long spent = cpu.nanos() - cpu0;
        return new Result(spent, n, (now - start) / 1e9);
    }
}
