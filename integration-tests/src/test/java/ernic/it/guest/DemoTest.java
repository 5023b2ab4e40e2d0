package ernic.it.guest;

import ernic.it.harness.GuestRun;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's main command, {@code ./ernic demo}: demo/demo.sh in a guest, as a newcomer runs it. */
class DemoTest {
    @BeforeAll
    static void prerequisites() {
        GuestPrerequisites.require();
    }

    @Test
    void theDemoShowsRdmaInTheGuest() {
        Path demo = Path.of("..", "demo", "demo.sh");
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        int status;
        try (PrintStream tee = new PrintStream(new GuestRunTest.TeeStream(captured, original), true,
                StandardCharsets.UTF_8)) {
            System.setOut(tee);
            status = new CommandLine(new GuestRun()).execute(demo.toString());
        } finally {
            System.setOut(original);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        assertThat(status).isZero();
        assertThat(out).contains("[1dd8:1002]").contains("Speed: 100000Mb/s").contains("ionic_0")
                .contains("PORT_ACTIVE").contains("200 iters in").containsPattern("65536\\s+500\\s+[0-9.]+")
                .contains("=== Done");
    }
}
