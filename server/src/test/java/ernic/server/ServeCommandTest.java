package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code ernic serve} refuses a bad {@code --backend} with a one-line error and exit status 2. */
class ServeCommandTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path dir;

    record Run(int status, String stderr) {}

    static Run serve(String... args) {
        PrintStream original = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int status = new CommandLine(new ServeCommand()).execute(args);
            return new Run(status, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }

    /** {@link #serve} with {@code --socket DIR/s.sock} before {@code args}. */
    static Run serveIn(Path dir, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--socket";
        all[1] = dir.resolve("s.sock").toString();
        System.arraycopy(args, 0, all, 2, args.length);
        return serve(all);
    }

    /** {@link #serveIn} with a command line it must refuse: exit status 2 and no socket. Returns stderr. */
    static String refusedIn(Path dir, String... args) {
        Run r = serveIn(dir, args);
        assertThat(r.status()).as(String.join(" ", args)).isEqualTo(2);
        assertThat(dir.resolve("s.sock")).doesNotExist();
        return r.stderr();
    }

    @Test
    void aBackendThatIsNotAMeshSpecIsRefused() throws Exception {
        assertThat(refusedIn(dir, "--backend", "tcp:boss:7400"))
                .contains("ernic serve: expected tcp:manager:listen:PORT or tcp:worker:HOST:PORT");
    }

    @Test
    void aBusyPollOutside0To1000MicrosecondsIsOneLineAndExitTwo() throws Exception {
        for (String bad : new String[] {"-1", "1001", "100000"}) {
            assertThat(refusedIn(dir, "--busy-poll-us", bad)).as(bad).isEqualTo("ernic serve: --busy-poll-us " + bad
                    + ": expected 0 to 1000 (microseconds)" + System.lineSeparator());
        }
    }

    @Test
    void aMeshSecretFileThatIsMissingShortOrOpenIsOneLineAndExitTwo() throws Exception {
        Path missing = dir.resolve("missing.key");
        Path shortKey = Files.writeString(dir.resolve("short.key"), "too short\n");
        Files.setPosixFilePermissions(shortKey, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Path open = Files.writeString(dir.resolve("open.key"), "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Path empty = Files.writeString(dir.resolve("empty.key"), "");
        Files.setPosixFilePermissions(empty, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        String[][] cases = {
                {"tcp:manager:listen:7400,secret=" + missing, "mesh secret file " + missing + ": no such file"},
                {"tcp:worker:127.0.0.1:7400,secret=" + shortKey, "mesh secret file " + shortKey
                        + ": 9 bytes, a secret needs at least 16 (e.g. openssl rand -hex 32 > FILE)"},
                {"tcp:manager:listen:7400,secret=" + open, "mesh secret file " + open
                        + ": permissions rw-r--r-- are too open (group or others have access); chmod 600 it"},
                {"tcp:worker:[::1]:7400,secret=" + empty, "mesh secret file " + empty + ": empty"}};
        for (String[] c : cases) {
            assertThat(refusedIn(dir, "--backend", c[0])).as(c[0])
                    .isEqualTo("ernic serve: " + c[1] + System.lineSeparator());
        }
    }

    @Test
    void aQueueThatIsNotASizeFrom64KTo1GIsOneLineAndExitTwo() throws Exception {
        for (String bad : new String[] {"lots", "32K", "65535", "2G", "1025M", "", "1.5M"}) {
            for (String node : new String[] {"tcp:manager:listen:7400", "tcp:worker:127.0.0.1:7400"}) {
                String spec = node + ",queue=" + bad;
                assertThat(refusedIn(dir, "--backend", spec)).as(spec).isEqualTo("ernic serve: queue=" + bad + " in "
                        + spec + ": expected a size from 64K to 1G (bytes, or with a K, M or G suffix)"
                        + System.lineSeparator());
            }
        }
        assertThat(refusedIn(dir, "--backend", "tcp:worker:127.0.0.1:7400,queue=64K,queue=64K")).isEqualTo("ernic serve: queue= given twice in tcp:worker:127.0.0.1:7400,queue=64K,"
                + "queue=64K" + System.lineSeparator());
    }

    @Test
    void aManagerWhosePortIsTakenSaysSoAndLeavesNoSocket() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            assertThat(refusedIn(dir, "--backend", "tcp:manager:listen:" + taken.getLocalPort()))
                    .containsPattern("(?m)^ernic serve: --backend manager: .*Address already in use");
        }
    }

    @Test
    void anUnknownBackendIsRefusedWithTheFormsThatExist() throws Exception {
        assertThat(refusedIn(dir, "--backend", "rxe")).isEqualTo("ernic serve: --backend rxe: expected one of loopback, none,"
                + " tcp:manager:listen:PORT[,secret=FILE,queue=BYTES],"
                + " tcp:worker:HOST:PORT[,secret=FILE,queue=BYTES],"
                + " nvmeof[:size=SIZE,bs=512|1024|2048|4096,file=PATH,nqn=NQN,ip=ADDR,port=PORT,queues=N,nsid=N,"
                + "model=TEXT,serial=TEXT],"
                + " s3[:bucket=NAME,size=SIZE,objects=N,ip=ADDR,port=PORT,maxpart=SIZE,access=KEY,secret=KEY,"
                + "reply=status|compat]" + System.lineSeparator());
    }

    @Test
    void aTraceFileThatCannotBeWrittenIsOneLineAndNoSocket() throws Exception {
        Path pcap = dir.resolve("missing").resolve("rdma.pcap");
        assertThat(refusedIn(dir, "--trace-rdma", pcap.toString())).isEqualTo("ernic serve: --trace-rdma " + pcap
                + ": cannot write (no such directory)" + System.lineSeparator());
        assertThat(refusedIn(dir, "--device", "sample", "--trace-rdma", dir.resolve("rdma.pcap").toString())).isEqualTo("ernic serve: --trace-rdma needs --device ionic" + System.lineSeparator());
        assertThat(dir.resolve("rdma.pcap")).doesNotExist();
    }

    @Test
    void backendNoneNeedsTheIonicDevice() throws Exception {
        assertThat(refusedIn(dir, "--device", "sample", "--backend", "none")).isEqualTo("ernic serve: --backend none needs --device ionic" + System.lineSeparator());
    }

    @Test
    void aBadMetricsAddressIsRefusedBeforeAnythingStarts() throws Exception {
        for (String bad : new String[] {"http", "::1:9464", "localhost:70000", ":9464"}) {
            assertThat(refusedIn(dir, "--metrics", bad)).as(bad).startsWith("ernic serve: --metrics " + bad + ": ")
                    .hasLineCount(1);
        }
    }

    @Test
    void aMetricsPortInUseStopsTheServerAndLeavesNoSocket() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(refusedIn(dir, "--metrics", "127.0.0.1:" + taken.getLocalPort()))
                    .containsPattern("(?m)^ernic serve: --metrics 127.0.0.1:" + taken.getLocalPort() + ": .*in use$");
        }
    }

    @Test
    void aBadNvmeofOptionIsOneLineAndExitTwo() throws Exception {
        assertThat(refusedIn(dir, "--backend", "nvmeof:size=bogus"))
                .isEqualToIgnoringNewLines("ernic serve: nvmeof backend: bad size 'bogus'");
    }

    @Test
    void theNvmeofBackendStartsWithItsLineAndCounters() throws Exception {
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withMesh("nvmeof:size=1M,bs=4096,nqn=test-nqn", null))) {
            var names = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().snapshot().stream()
                    .map(ernic.counters.CounterRegistry.Sample::name).toList()).get();
            assertThat(names).contains("nvmeof.cm.req", "nvmeof.connections", "nvmeof.cmd.read",
                    "rdma.target.capsules");
        }
    }

    @Test
    void aBadS3OptionIsOneLineAndExitTwo() throws Exception {
        assertThat(refusedIn(dir, "--backend", "s3:size=bogus"))
                .isEqualTo("ernic serve: s3 backend: bad size 'bogus'" + System.lineSeparator());
        assertThat(refusedIn(dir, "--backend", "s3:colour=red"))
                .startsWith("ernic serve: s3 backend: unknown option 'colour' (bucket, size,").hasLineCount(1);
    }

    @Test
    void theS3StoreRegistersItsCountersAndLetsGo() throws Exception {
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withBackend("s3:bucket=data,port=9100"))) {
            var totals = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().totals()).get();
            assertThat(totals).containsKeys("s3.net.frames", "s3.tcp.connections", "s3.http.requests.get",
                    "s3.bytes.body_in", "s3.objects");
            assertThat(server.vfioUser().eventLoop().submit(server::snapshot).get()).containsKey("s3");
        }
    }
}
