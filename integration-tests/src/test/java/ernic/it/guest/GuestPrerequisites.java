package ernic.it.guest;

import ernic.it.harness.GuestImage;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.fail;

/**
 * Real-guest tests need docker and the guest image: skipped without them, except in CI, where that fails. A test
 * class says so with {@code @ExtendWith(GuestPrerequisites.class)}; its runs keep their files under
 * {@code target/guest/NAME} ({@link #workDir}).
 */
final class GuestPrerequisites implements BeforeAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
        require();
    }

    static void require() {
        String missing = GuestImage.missing();
        if (missing == null) {
            return;
        }
        if ("true".equals(System.getenv("CI"))) {
            fail("real-guest test prerequisite missing in CI: " + missing);
        }
        Assumptions.abort("real-guest test skipped: " + missing);
    }

    /** {@code target/guest/NAME}, made if missing: where a test's guests and servers keep their files. */
    static Path workDir(String name) throws IOException {
        return Files.createDirectories(Path.of("target", "guest", name));
    }

    /** The server's socket in {@code work} (its directory made). */
    static Path socketIn(Path work) throws IOException {
        return Files.createDirectories(work.resolve("server")).resolve("ernic.sock");
    }
}
