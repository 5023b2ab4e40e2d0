package ernic.it.harness;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What the host has installed, for the tests and the bench that need a host tool (dpkg-deb, iperf3, ...). */
public final class HostCommands {
    private HostCommands() {}

    /** Whether {@code command} is an executable file in a directory of PATH (/usr/bin:/bin without one). */
    public static boolean onPath(String command) {
        return Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, command)));
    }
}
