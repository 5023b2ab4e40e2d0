package ernic.it.guest;

import ernic.it.harness.GuestRun;
import ernic.it.harness.Leftovers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM to {@code ./ernic guest run --vms 2} while its guests boot leaves nothing behind: no guest
 * container, no network namespace (with its bridge and TAPs), no server process, no socket.
 */
@ExtendWith(GuestPrerequisites.class)
class CleanStopTest {

    @Test
    void sigtermMidBootLeavesNothing() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "guest", "clean-stop")).toAbsolutePath();
        Path script = dir.resolve("wait.sh");
        Files.writeString(script, "sleep 600\n");
        Process run = HarnessProcess.start(dir, dir.resolve("run.log"), Map.of(), GuestRun.class.getName(),
                "--vms", "2", script.toString());
        long pid = run.pid();
        // Mid-boot: both guests' containers exist (their QEMUs are booting) and both servers run.
        while (run.isAlive() && Leftovers.of(pid).stream().filter(o -> o.what().equals("container")).count() < 2) {
            Thread.sleep(200);
        }
        List<ProcessHandle> children = run.toHandle().descendants().toList();
        System.out.println("before SIGTERM: " + Leftovers.of(pid) + ", processes " + children.stream()
                .map(h -> h.pid() + (h.info().arguments().map(a -> List.of(a).contains("serve")).orElse(false)
                        ? " (ernic serve)" : "")).toList());
        assertThat(run.isAlive()).as("the run is still booting").isTrue();
        assertThat(Leftovers.of(pid)).extracting(Leftovers.Owned::what).contains("netns", "container", "container");
        assertThat(children).as("its two servers").hasSizeGreaterThanOrEqualTo(2);

        run.destroy(); // SIGTERM
        int status = run.waitFor();
        System.out.println("guest run ended with " + status + ":\n" + Files.readString(dir.resolve("run.log")));
        // The servers watch their parent (ernic serve --exit-with): they end within seconds of it.
        for (ProcessHandle h : children) {
            try {
                h.onExit().get(60, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                // asserted below
            }
        }
        assertThat(Leftovers.of(pid)).as("containers and namespaces of the run").isEmpty();
        assertThat(children).noneMatch(ProcessHandle::isAlive);
        try (Stream<Path> files = Files.walk(dir.resolve("target"))) {
            assertThat(files.filter(p -> p.toString().endsWith(".sock")).toList()).as("sockets").isEmpty();
        }
        String links = new String(new ProcessBuilder("ip", "-o", "link", "show").start().getInputStream().readAllBytes());
        assertThat(links).as("TAPs of the run").doesNotContain("er" + pid + "v");
    }
}
