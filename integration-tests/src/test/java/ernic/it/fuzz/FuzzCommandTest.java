package ernic.it.fuzz;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CI's short run of {@code ./ernic fuzz}: a fixed seed per target, a few seconds each. A finding fails the test with
 * the fuzzer's output (which names the reproducer and the command that replays it).
 */
class FuzzCommandTest {
    static final Path OUT = Path.of("target", "fuzz-test");

    @ParameterizedTest
    @CsvSource({"vfio, 20000, 5000", "ionic, 20000, 5000", "mesh, 20000, 5000", "roce, 20000, 5000"})
    void aShortSeedFixedRunIsClean(String target, long messages, long checkEvery) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        FuzzCommand cmd = new FuzzCommand(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        int rc = new CommandLine(cmd).execute("--target", target, "--messages", Long.toString(messages), "--seed",
                "20261202", "--check-every", Long.toString(checkEvery), "--out", OUT.toString());
        String output = bytes.toString(StandardCharsets.UTF_8);
        System.out.print(output);
        assertThat(rc).as(output).isZero();
        assertThat(cmd.result().messages()).isEqualTo(messages);
        assertThat(cmd.result().crashes()).isZero();
        assertThat(cmd.result().leaks()).isZero();
        assertThat(output).contains("crashes 0, leaks 0");
    }

    @Test
    void inputsAreAFunctionOfSeedTargetAndIndex() {
        assertThat(FuzzCommand.rng(7, FuzzCommand.Target.vfio, 12345).nextLong())
                .isEqualTo(FuzzCommand.rng(7, FuzzCommand.Target.vfio, 12345).nextLong())
                .isNotEqualTo(FuzzCommand.rng(7, FuzzCommand.Target.vfio, 12346).nextLong())
                .isNotEqualTo(FuzzCommand.rng(7, FuzzCommand.Target.ionic, 12345).nextLong())
                .isNotEqualTo(FuzzCommand.rng(8, FuzzCommand.Target.vfio, 12345).nextLong());
    }
}
