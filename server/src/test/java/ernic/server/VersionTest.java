package ernic.server;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --version} says which build this is: the version Maven built, not "unknown" or a placeholder. */
class VersionTest {
    static String ernic(String... args) {
        StringWriter out = new StringWriter();
        CommandLine cmd = Main.commandLine(null);
        cmd.setOut(new PrintWriter(out, true));
        assertThat(cmd.execute(args)).isZero();
        return out.toString();
    }

    /** The project version as the reactor's pom has it (the version of server's parent). */
    static String pomVersion() throws Exception {
        String pom = Files.readString(Path.of("pom.xml"));
        Matcher m = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL).matcher(pom);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    @Test
    void theVersionIsTheProjectVersionFromTheBuild() throws Exception {
        ErnicVersion.Build build = ErnicVersion.build();
        assertThat(build.version()).isEqualTo(pomVersion()).doesNotContain("unknown").doesNotContain("${");
        assertThat(build.commit()).doesNotContain("${").matches("|[0-9a-f]{7,40}(-dirty)?");
    }

    @Test
    void ernicVersionAndServeVersionPrintTheBuildAndTheJava() throws Exception {
        String top = ernic("--version");
        assertThat(top.lines().findFirst()).hasValue("ernic " + ErnicVersion.build().describe());
        assertThat(top).startsWith("ernic " + pomVersion())
                .contains(System.lineSeparator() + "Java " + Runtime.version());
        assertThat(ernic("serve", "--version")).isEqualTo(top);
        assertThat(ernic("p4", "--version")).isEqualTo(top);
    }

    @Test
    void aCommitIsNamedOnlyWhenTheBuildHadOne() {
        assertThat(new ErnicVersion.Build("0.1.0", "").describe()).isEqualTo("0.1.0");
        assertThat(new ErnicVersion.Build("0.1.0", "0123456789ab").describe()).isEqualTo("0.1.0 (commit 0123456789ab)");
    }
}
