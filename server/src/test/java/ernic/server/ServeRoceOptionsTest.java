package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static ernic.server.ServeCommandTest.refusedIn;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code ernic serve --roce}: what it needs is said in one line, exit status 2, before any socket exists. */
class ServeRoceOptionsTest {
    @TempDir
    Path dir;

    private static final String NL = System.lineSeparator();

    @Test
    void roceWithoutATapIsRefused() {
        assertThat(refusedIn(dir, "--roce"))
                .isEqualTo("ernic serve: --roce needs --tap: RoCEv2 goes out of the Ethernet port" + NL);
    }

    @Test
    void roceIsTheIonicDevicesOnly() {
        assertThat(refusedIn(dir, "--device", "sample", "--roce")).isEqualTo("ernic serve: --roce needs --device ionic" + NL);
    }
}
