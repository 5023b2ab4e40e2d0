package ernic.server;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * tools/prereqs.sh, what {@code ./ernic demo|test|guest} and .ci/run install: tools/prereqs-test.sh runs it
 * and the launcher against fake apt-get, id, docker, podman and friends on PATH (nothing is installed) and
 * checks which packages each situation gets, the question on a terminal, the refusals (not root, no
 * terminal, no apt-get) with the command to run, that an engine present is never joined by docker.io, and
 * that the launcher passes its arguments on without {@code --yes}.
 */
class PrereqsScriptTest {
    static final Path TEST = Path.of("../tools/prereqs-test.sh");

    @Test
    void thePrerequisiteInstallerDoesWhatItSays() throws Exception {
        assertThat(TEST).isRegularFile();
        Process p = new ProcessBuilder("bash", TEST.toString()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("tools/prereqs-test.sh finished").isTrue();
        assertThat(out).as("tools/prereqs-test.sh output").doesNotContain("not ok").contains("1..");
        assertThat(p.exitValue()).as("exit status; output:\n" + out).isZero();
    }

    @Test
    void ciAndTheLauncherShareTheOneScript() throws Exception {
        assertThat(Files.readString(Path.of("../.ci/run"))).contains("source tools/prereqs.sh")
                .doesNotContain("apt-get install");
        assertThat(Files.readString(Path.of("../ernic"))).contains("source \"$ROOT/tools/prereqs.sh\"")
                .doesNotContain("apt-get install");
    }
}
