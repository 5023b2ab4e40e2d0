package ernic.it.bench;

import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.VfioUserServer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The doorbell path: a REGION_WRITE of 8 bytes and its reply, client to server on one machine,
 * beside a plain UNIX-socket echo of the same sizes (40 bytes out, 32 back) measured in the same run.
 * The ratio of the two is the figure that matters; absolute numbers move with the machine. Both put their client
 * on CPU 0 and the thread that answers on CPU 1 ({@code pinned}, default true; {@link CpuPin} says why).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class DoorbellBenchmark {
    /** The size of a REGION_WRITE of 8 bytes (header 16 + head 16 + data 8) and of its reply. */
    static final int REQUEST = 40, REPLY = 32;

    @State(Scope.Benchmark)
    public static class VfioUser {
        Path dir;
        SampleDevice device;
        VfioUserServer server;
        VfioUserClient client;
        long value;
        /** The server's {@code --busy-poll-us} (0 in the suite: the default a user gets). */
        @Param("0")
        public int busyPollMicros;
        /** The client on CPU 0, the server's device thread on CPU 1 ({@link CpuPin}). */
        @Param("true")
        public boolean pinned;

        @Setup(Level.Trial)
        public void start() throws Exception {
            dir = Files.createTempDirectory("ernic-bench");
            device = new SampleDevice();
            server = VfioUserServer.start(device, VfioUserServer.Options.defaults(dir.resolve("b.sock").toString())
                    .withBusyPollMicros(busyPollMicros));
            if (pinned) {
                server.eventLoop().submit(CpuPin::answerer).get();
            }
            client = VfioUserClient.connect(server.socketPath());
            client.negotiate();
        }

        @Setup(Level.Iteration)
        public void pinClient() {
            if (pinned) {
                CpuPin.client(); // the benchmark thread (JMH calls iteration setups on it)
            }
        }

        @TearDown(Level.Trial)
        public void stop() throws IOException {
            client.close();
            server.close();
            device.close();
            Files.deleteIfExists(dir);
        }
    }

    @State(Scope.Benchmark)
    public static class RawEcho {
        Path dir;
        ServerSocketChannel listener;
        Thread echo;
        SocketChannel socket;
        final ByteBuffer out = ByteBuffer.allocateDirect(REQUEST);
        final ByteBuffer in = ByteBuffer.allocateDirect(REPLY);
        /** The client on CPU 0, the echo thread on CPU 1, as for the server. */
        @Param("true")
        public boolean pinned;

        @Setup(Level.Iteration)
        public void pinClient() {
            if (pinned) {
                CpuPin.client();
            }
        }

        @Setup(Level.Trial)
        public void start() throws IOException {
            dir = Files.createTempDirectory("ernic-bench");
            UnixDomainSocketAddress address = UnixDomainSocketAddress.of(dir.resolve("echo.sock"));
            listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(address);
            echo = Thread.ofPlatform().daemon().start(() -> {
                if (pinned) {
                    CpuPin.answerer();
                }
                try (SocketChannel peer = listener.accept()) {
                    ByteBuffer req = ByteBuffer.allocateDirect(REQUEST);
                    ByteBuffer rep = ByteBuffer.allocateDirect(REPLY);
                    for (;;) {
                        req.clear();
                        while (req.hasRemaining()) {
                            if (peer.read(req) < 0) {
                                return;
                            }
                        }
                        rep.clear();
                        while (rep.hasRemaining()) {
                            peer.write(rep);
                        }
                    }
                } catch (IOException e) {
                    // benchmark over
                }
            });
            socket = SocketChannel.open(address);
        }

        @TearDown(Level.Trial)
        public void stop() throws IOException, InterruptedException {
            socket.close();
            echo.join(2000);
            listener.close();
            Files.deleteIfExists(dir.resolve("echo.sock"));
            Files.deleteIfExists(dir);
        }
    }

    @Benchmark
    public void regionWriteRoundTrip(VfioUser s) throws IOException {
        // An 8-byte write to the sample device's scratch array (no side effects), as a doorbell is.
        s.client.regionWriteLong(0, 0x100, 8, s.value++);
    }

    @Benchmark
    public int rawUnixSocketEcho(RawEcho s) throws IOException {
        s.out.clear();
        while (s.out.hasRemaining()) {
            s.socket.write(s.out);
        }
        s.in.clear();
        while (s.in.hasRemaining()) {
            s.socket.read(s.in);
        }
        return s.in.get(0);
    }
}
