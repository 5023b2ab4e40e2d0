package ernic.vfiouser.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Fresh socket paths in a private temporary directory. */
public final class TestSockets {
    private TestSockets() {}

    public static String newPath(String name) throws IOException {
        Path dir = Files.createTempDirectory("ernic-test");
        dir.toFile().deleteOnExit();
        return dir.resolve(name + ".sock").toString();
    }
}
