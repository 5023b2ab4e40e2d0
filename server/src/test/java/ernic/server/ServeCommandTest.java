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
    void aBadNvmeofOptionIsOneLineAndExitTwo() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        Run r = serve("--socket", dir.resolve("s.sock").toString(), "--backend", "nvmeof:size=bogus");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).isEqualToIgnoringNewLines("ernic serve: nvmeof backend: bad size 'bogus'");
        assertThat(dir.resolve("s.sock")).doesNotExist();
    }

    @Test
    void theNvmeofBackendStartsWithItsLineAndCounters() throws Exception {
        Path dir = Files.createTempDirectory("ernic-serve");
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withMesh("nvmeof:size=1M,bs=4096,nqn=test-nqn", null))) {
            var names = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().snapshot().stream()
                    .map(ernic.counters.CounterRegistry.Sample::name).toList()).get();
            assertThat(names).contains("nvmeof.cm.req", "nvmeof.connections", "nvmeof.cmd.read",
                    "rdma.target.capsules");
        }
    }
}
