package ernic.it.guest;

import ernic.it.harness.GuestImage;
import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.fail;

/** Real-guest tests need docker and the guest image: skipped without them, except in CI, where that fails. */
final class GuestPrerequisites {
    private GuestPrerequisites() {}

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
}
