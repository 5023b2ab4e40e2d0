package ernic.it.guest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's main command, {@code ./ernic demo}: demo/demo.sh in a guest, as a newcomer runs it. */
@ExtendWith(GuestPrerequisites.class)
class DemoTest {

    @Test
    void theDemoShowsRdmaInTheGuest() {
        Path demo = Path.of("..", "demo", "demo.sh");
        GuestRunTest.Run run = GuestRunTest.guestRun(demo.toString());
        String out = run.out();
        assertThat(run.status()).isZero();
        assertThat(out).contains("[1dd8:1002]").contains("Speed: 100000Mb/s").contains("ionic_0")
                .contains("PORT_ACTIVE").contains("200 iters in").containsPattern("65536\\s+500\\s+[0-9.]+")
                .contains("=== Done");
    }
}
