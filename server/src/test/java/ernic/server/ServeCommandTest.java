package ernic.server;

import org.junit.jupiter.api.Test;
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

    @Test
    void aBackendThatIsNotAMeshSpecIsRefused() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        Run r = serve("--socket", dir.resolve("s.sock").toString(), "--backend", "tcp:boss:7400");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("ernic serve: expected tcp:manager:listen:PORT or tcp:worker:HOST:PORT");
        assertThat(dir.resolve("s.sock")).doesNotExist();
    }

    @Test
    void aManagerWhosePortIsTakenSaysSoAndLeavesNoSocket() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        try (ServerSocket taken = new ServerSocket(0)) {
            Run r = serve("--socket", dir.resolve("s.sock").toString(), "--backend",
                    "tcp:manager:listen:" + taken.getLocalPort());
            assertThat(r.status()).isEqualTo(2);
            assertThat(r.stderr()).containsPattern("(?m)^ernic serve: --backend manager: .*Address already in use");
            assertThat(dir.resolve("s.sock")).doesNotExist();
        }
    }

    @Test
    void aBadS3OptionIsOneLineAndExitTwo() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        Run r = serve("--socket", dir.resolve("s.sock").toString(), "--backend", "s3:size=bogus");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).isEqualTo("ernic serve: s3 backend: bad size 'bogus'" + System.lineSeparator());
        assertThat(dir.resolve("s.sock")).doesNotExist();
        assertThat(serve("--socket", dir.resolve("s.sock").toString(), "--backend", "s3:colour=red").stderr())
                .isEqualTo("ernic serve: s3 backend: unknown option 'colour'" + System.lineSeparator());
    }

    @Test
    void theS3StoreRegistersItsCountersAndLetsGo() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withBackend("s3:bucket=data,port=9100"))) {
            var totals = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().totals()).get();
            assertThat(totals).containsKeys("s3.net.frames", "s3.tcp.connections", "s3.http.requests.get",
                    "s3.bytes.body_in", "s3.objects");
            assertThat(server.vfioUser().eventLoop().submit(server::snapshot).get()).containsKey("s3");
        }
    }
}
