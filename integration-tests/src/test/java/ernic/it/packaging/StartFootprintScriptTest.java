package ernic.it.packaging;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * packaging/start-footprint.sh, as docs/operations.md ("Start and footprint") runs it: one start of the server, a
 * client that brings the device up ({@code --client}), and the lines it prints; an unknown option is one line and
 * exit status 2.
 */
class StartFootprintScriptTest {
    static final Path SCRIPT = Path.of("..", "packaging", "start-footprint.sh").toAbsolutePath().normalize();

    record Run(int status, String out, String err) {}

    static Run run(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(SCRIPT.toString()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out, err);
    }

    @Test
    void readsTheSizeOnceTheClientBroughtTheDeviceUp() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        Run r = run(List.of("--runs", "1", "--idle", "1",
                "--client", java + " --enable-native-access=ALL-UNNAMED -cp " + cp + " ernic.it.bench.IdleClient",
                "--", java, "--enable-native-access=ALL-UNNAMED", "-cp", cp, "ernic.server.Main", "serve"));
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("(?m)^run 1: socket open after \\d+ ms \\(\\d+ ms of CPU\\), idle RSS \\d+ MiB"
                + " \\(anonymous \\d+ MiB\\); with the client up: VmRSS \\d+ MiB \\(anonymous \\d+, file \\d+, shared \\d+\\)$");
        assertThat(r.out()).containsPattern("(?m)^median of 1: .*; with the client up: VmRSS \\d+ MiB .* \\(load average");
    }

    @Test
    void anUnknownOptionIsOneLine() throws Exception {
        Run r = run(List.of("--bogus"));
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("start-footprint.sh: unknown option '--bogus' (usage: [--runs N] [--idle S]"
                + " [--client C] -- COMMAND...)\n");
        assertThat(r.out()).isEmpty();
    }
}
