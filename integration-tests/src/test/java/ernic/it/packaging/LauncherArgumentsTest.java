package ernic.it.packaging;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher refuses what it does not know before it installs, builds or starts anything: one line on stderr,
 * exit status 2 (the Java commands' own parsers refuse theirs the same way and are tested with them; {@code test}
 * passes what is not its own to Maven, as tools/prereqs-test.sh checks). And the
 * layout of the installed package: /usr/bin/ernic runs only what needs no source tree.
 */
class LauncherArgumentsTest {
    static final Path LAUNCHER = Path.of("..", "ernic").toAbsolutePath().normalize();

    record Run(int status, String out, String err) {}

    static Run run(Path launcher, String args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        if (!args.isBlank()) {
            command.addAll(List.of(args.split(" ")));
        }
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("ERNIC_NO_PREREQS", "1");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out, err);
    }

    @ParameterizedTest(name = "ernic {0}")
    @CsvSource(delimiter = '|', value = {
        "dist --bogus        | ernic: dist: unknown option '--bogus' (dist takes --deb and --image)",
        "dist --deb extra    | ernic: dist: unknown option 'extra' (dist takes --deb and --image)",
        "demo --bogus        | ernic: demo: unknown argument '--bogus' (demo takes none)",
        "--version --bogus   | ernic: --version: unknown argument '--bogus' (--version takes none)",
        "help me             | ernic: help: unknown argument 'me' (help takes none)",
        "guest build --bogus | ernic: guest build: unknown argument '--bogus' (guest build takes none)",
        "bench --bogus       | ernic: bench: unknown option '--bogus' (bench takes --only N[,N...], --quick and --out DIR, or a JMH benchmark regex and JMH options)",
        "frobnicate          | ernic: unknown command 'frobnicate' (try ./ernic help)",
    })
    void anUnknownArgumentIsRefusedWithOneLine(String args, String line) throws Exception {
        Run r = run(LAUNCHER, args.strip());
        assertThat(r.status()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).isEqualTo(line.strip() + "\n");
        assertThat(r.out()).isEmpty();
    }

    /** A stand-in for the installed package: the launcher as usr/bin/ernic beside usr/lib/ernic/app. */
    static Path installed(Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("usr/bin"));
        Files.createDirectories(dir.resolve("usr/lib/ernic/app"));
        Path launcher = bin.resolve("ernic");
        Files.copy(LAUNCHER, launcher);
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        return launcher;
    }

    @ParameterizedTest(name = "installed: ernic {0}")
    @CsvSource({"test", "demo", "dist --deb", "guest run x.sh", "up", "bench"})
    void theInstalledPackageRefusesWhatNeedsTheSourceTree(String args, @TempDir Path dir) throws Exception {
        Run r = run(installed(dir), args);
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("ernic: '" + args.split(" ")[0] + "' needs the source tree: this is an"
                + " installed release, which runs serve, p4, fuzz and --version\n");
    }

    @Test
    void aSymbolicLinkToTheInstalledLauncherFindsThePackage(@TempDir Path dir) throws Exception {
        Path launcher = installed(dir);
        Path link = Files.createDirectories(dir.resolve("elsewhere")).resolve("ernic");
        Files.createSymbolicLink(link, launcher);
        Run r = run(link, "test");
        assertThat(r.err()).contains("needs the source tree");
        assertThat(r.status()).isEqualTo(2);
    }

    @Test
    void aDirectoryThatIsNoLayoutIsSaidSo(@TempDir Path dir) throws Exception {
        Path launcher = dir.resolve("ernic");
        Files.copy(LAUNCHER, launcher);
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        Run r = run(launcher, "serve");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).startsWith("ernic: ").contains("neither a source tree").endsWith("\n")
                .hasLineCount(1);
    }
}
