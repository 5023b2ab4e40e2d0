package ernic.vfiouser.testing;

import ernic.vfiouser.sys.LibC;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The process's open fds and mapping count, to assert that a test gave back everything it took. */
public record Leaks(Set<String> fds, long mappings) {
    public static Leaks baseline() {
        return new Leaks(openFds(), LibC.memfdMappingCount());
    }

    /**
     * fd number -> what it points to, for every open fd except those the JVM opens lazily once and
     * keeps (jar files, the random devices) and the directory being listed.
     */
    static Set<String> openFds() {
        Set<String> out = new TreeSet<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            s.forEach(p -> {
                try {
                    String target = Files.readSymbolicLink(p).toString();
                    if (!target.endsWith(".jar") && !target.startsWith("/proc/") && !target.matches("/dev/u?random")) {
                        out.add(p.getFileName() + " -> " + target);
                    }
                } catch (IOException e) {
                    // closed while listing: not open any more
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** Waits (cleanup runs on other threads) until both are back to this baseline, then asserts it. */
    public void assertBackToBaseline() throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            if (fds.containsAll(openFds()) && LibC.memfdMappingCount() <= mappings) {
                break;
            }
            Thread.sleep(50);
        }
        Set<String> extra = openFds();
        extra.removeAll(fds);
        assertThat(extra).as("fds opened and not closed").isEmpty();
        assertThat(LibC.memfdMappingCount()).as("memory mappings").isLessThanOrEqualTo(mappings);
    }
}
