package ernic.it.packaging;

import ernic.it.harness.HostCommands;
import ernic.server.ErnicVersion;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Debian package of {@code ./ernic dist --deb} (packaging/dist.sh), read with {@code dpkg-deb} as apt would
 * install it: its files ({@code dpkg-deb -c}), its control file and maintainer scripts ({@code dpkg-deb -e}) and
 * its unit. It checks {@code target/dist/ernic_VERSION_amd64.deb} when {@code ./ernic dist --deb} has built one
 * (about four minutes); otherwise it builds the same package itself the quick way (packaging/dist.sh with
 * {@code ERNIC_DIST_QUICK}: the jars of this build, a cached jlink runtime, no AOT training, no compression; well
 * under a minute once the runtime is cached), so CI checks it too. It skips, saying why, when {@code dpkg-deb},
 * {@code fakeroot} or a jar of the build is missing. Installing it in a fresh container is in docs/operations.md,
 * "The Debian package".
 */
class DebianPackageTest {
    static final Path ROOT = Path.of("..");
    static final Path DIST = ROOT.resolve("target").resolve("dist");
    static final String VERSION = ErnicVersion.build().version();
    /** The Debian form of the version: a snapshot sorts before its release ({@code 0.1.0~SNAPSHOT < 0.1.0}). */
    static final String DEB_VERSION = VERSION.replace('-', '~');
    static final String DEB_NAME = "ernic_" + DEB_VERSION + "_amd64.deb";

    static Path deb;
    /** True for the quick build, which has no AOT cache. */
    static boolean quick;
    static List<String> contents;
    /** Why the package could not be had, once tried; null while none was tried or one was found. */
    static String unavailable;
    /** The quick build's failure, once it failed. */
    static AssertionError quickFailure;

    record Run(int status, String out) {}

    static Run run(String... command) throws IOException, InterruptedException {
        return run(Map.of(), command);
    }

    static Run run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), out);
    }

    /** Before each test, so that each is reported as skipped with the reason when there is nothing to check. */
    @BeforeEach
    void findThePackage() throws Exception {
        assumeTrue(HostCommands.onPath("dpkg-deb"), "dpkg-deb is not installed (package dpkg): the .deb is not checked");
        assumeTrue(unavailable == null, unavailable);
        if (deb != null) {
            return;
        }
        Path full = DIST.resolve(DEB_NAME);
        if (Files.isRegularFile(full)) {
            deb = full;
        } else {
            unavailable = !HostCommands.onPath("fakeroot") ? "fakeroot is not installed: jpackage builds the .deb under it"
                    : missingJar();
            assumeTrue(unavailable == null, unavailable);
            if (quickFailure != null) {
                throw quickFailure; // built once, failed once: every test says so without building again
            }
            try {
                deb = buildQuick();
            } catch (AssertionError e) {
                quickFailure = e;
                throw e;
            }
            quick = true;
        }
        Run c = run("dpkg-deb", "-c", deb.toString());
        assertThat(c.status()).as(c.out()).isZero();
        contents = c.out().lines().toList();
    }

    /** The jars {@code ./ernic dist} packs (the launcher's release_jars), from this build. */
    static List<Path> releaseJars() {
        List<Path> jars = new java.util.ArrayList<>(List.of(
                ROOT.resolve("server/target/server-" + VERSION + ".jar"),
                ROOT.resolve("ionic-driver-model/target/ionic-driver-model-" + VERSION + ".jar")));
        try (Stream<Path> lib = Files.list(ROOT.resolve("server/target/lib"))) {
            lib.filter(p -> p.toString().endsWith(".jar")).forEach(jars::add);
        } catch (IOException e) {
            jars.add(ROOT.resolve("server/target/lib/*.jar")); // reported missing
        }
        return jars;
    }

    static String missingJar() {
        return releaseJars().stream().filter(j -> !Files.isRegularFile(j)).findFirst()
                .map(j -> "no " + j.normalize() + ": the quick package is built from the jars of this build")
                .orElse(null);
    }

    /**
     * The quick build into target/quick-deb; the integration tests' own jar (which {@code ernic fuzz} runs) is made
     * here from their classes, as packaging comes after the tests in Maven's order.
     */
    static Path buildQuick() throws Exception {
        Path jars = Path.of("target", "quick-deb-jars").toAbsolutePath();
        if (Files.isDirectory(jars)) {
            try (Stream<Path> old = Files.list(jars)) {
                for (Path p : old.toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(jars);
        for (Path j : releaseJars()) {
            Files.copy(j, jars.resolve(j.getFileName().toString()));
        }
        java.util.spi.ToolProvider jar = java.util.spi.ToolProvider.findFirst("jar").orElseThrow();
        int made = jar.run(System.out, System.err, "--create", "--file",
                jars.resolve("integration-tests-" + VERSION + ".jar").toString(), "-C", "target/classes", ".");
        assertThat(made).as("jar of target/classes").isZero();
        Run b = run(Map.of("ERNIC_DIST_QUICK", jars.toString(), "ERNIC_NO_PREREQS", "1",
                "JAVA_HOME", System.getProperty("java.home")), "bash", ROOT.resolve("packaging/dist.sh").toString(),
                "deb", VERSION);
        assertThat(b.status()).as(b.out()).isZero();
        return jars.resolveSibling("quick-deb").resolve(DEB_NAME);
    }

    /** The line of {@code dpkg-deb -c} for {@code path} (as {@code ./usr/...}); fails when the package lacks it. */
    static String entry(String path) {
        Optional<String> line = contents.stream().filter(l -> l.endsWith(" " + path)).findFirst();
        assertThat(line).as("the package holds " + path).isPresent();
        return line.get();
    }

    /** The paths of the package's entries (a symbolic link's own path, not its target). */
    static List<String> paths() {
        return contents.stream().map(l -> l.contains(" -> ") ? l.substring(0, l.indexOf(" -> ")) : l)
                .map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
    }

    @Test
    void itCarriesTheLauncherItsOwnRuntimeTheJarsAndTheAotCache() {
        assertThat(entry("./usr/bin/ernic")).startsWith("-rwxr-xr-x root/root");
        for (String p : List.of("runtime/bin/java", "runtime/lib/modules", "runtime/lib/server/libjvm.so",
                "app/server-" + VERSION + ".jar", "app/integration-tests-" + VERSION + ".jar",
                "app/ionic-driver-model-" + VERSION + ".jar", "serve.jvm-options", "classpath.jvm-options")) {
            entry("./usr/lib/ernic/" + p);
        }
        if (!quick) {
            entry("./usr/lib/ernic/ernic.aot");
        }
        assertThat(entry("./usr/lib/ernic/runtime/bin/java")).startsWith("-rwxr-xr-x");
    }

    @Test
    void itCarriesTheUnitTheExampleConfigTheDocsAndTheLintianOverrides() {
        for (String p : List.of("./usr/lib/systemd/system/ernic@.service", "./usr/share/doc/ernic/copyright",
                "./usr/share/doc/ernic/changelog.gz", "./usr/share/doc/ernic/examples/ernic.conf.example",
                "./usr/share/doc/ernic/operations.md", "./usr/share/doc/ernic/README.md",
                "./usr/share/lintian/overrides/ernic")) {
            assertThat(entry(p)).startsWith("-rw-r--r-- root/root");
        }
    }

    @Test
    void everyFileIsUnderUsrAndRoots() {
        assertThat(paths()).allMatch(p -> p.equals("./") || p.startsWith("./usr/"), "under /usr");
        assertThat(contents).allMatch(l -> l.contains(" root/root "), "owned by root");
        // /etc/ernic is made by postinst (so purge can remove it); nothing else of /etc, /opt or /var is shipped
        assertThat(paths()).noneMatch(p -> p.startsWith("./etc") || p.startsWith("./opt") || p.startsWith("./var"));
    }

    @Test
    void theRuntimeIsTrimmedAndJpackagesNativeLauncherIsGone() {
        // java.desktop (AWT, X11) is left out of the runtime; /usr/bin/ernic is the shell launcher
        assertThat(paths()).noneMatch(p -> p.endsWith("/libawt.so") || p.endsWith("/libawt_xawt.so"));
        assertThat(paths()).noneMatch(p -> p.endsWith("/libapplauncher.so") || p.endsWith("/ernic.cfg"));
        assertThat(paths()).noneMatch(p -> p.contains("/jmods/") || p.contains("/include/") || p.contains("/man/"));
    }

    @Test
    void theInstalledUnitRunsTheInstalledLauncher(@TempDir Path dir) throws Exception {
        Run x = run("dpkg-deb", "-x", deb.toString(), dir.toString());
        assertThat(x.status()).as(x.out()).isZero();
        String unit = Files.readString(dir.resolve("usr/lib/systemd/system/ernic@.service"));
        assertThat(unit).contains("\nExecStart=/usr/bin/ernic serve --socket /run/ernic/%i.sock @/etc/ernic/%i.conf\n")
                .contains("\nDocumentation=file:///usr/share/doc/ernic/operations.md\n")
                .contains("\nUser=ernic\n").doesNotContain("/opt/ernic");
        String launcher = Files.readString(dir.resolve("usr/bin/ernic"));
        assertThat(launcher).isEqualTo(Files.readString(Path.of("..", "ernic")));
        String classpath = Files.readString(dir.resolve("usr/lib/ernic/classpath.jvm-options")).strip();
        String[] jars = classpath.substring("-cp ".length()).split(":");
        assertThat(jars).as("the class path names every jar of app/, in C order").isSorted()
                .allMatch(j -> j.startsWith("/usr/lib/ernic/app/") && j.endsWith(".jar"))
                .allMatch(j -> Files.isRegularFile(dir.resolve(j.substring(1))));
        try (Stream<Path> app = Files.list(dir.resolve("usr/lib/ernic/app"))) {
            assertThat(app.filter(p -> p.toString().endsWith(".jar"))).hasSize(jars.length);
        }
    }

    @Test
    void theControlFileNamesThisVersionAndItsDependencies(@TempDir Path dir) throws Exception {
        Path control = extractControl(dir);
        String text = Files.readString(control.resolve("control"));
        assertThat(text).startsWith("Package: ernic\n").contains("\nVersion: " + DEB_VERSION + "\n")
                .contains("\nArchitecture: amd64\n").containsPattern("\nDepends: adduser, libc6[^\n]*\n")
                .containsPattern("\nInstalled-Size: [0-9]+\n").doesNotContain("libx11");
        // md5sums covers every file the package installs
        long files = contents.stream().filter(l -> l.startsWith("-")).count();
        assertThat(Files.readAllLines(control.resolve("md5sums"))).hasSize((int) files);
    }

    @Test
    void theMaintainerScriptsCreateAndOnPurgeRemoveTheUserAndDirectories(@TempDir Path dir) throws Exception {
        Path control = extractControl(dir);
        String postinst = Files.readString(control.resolve("postinst"));
        String postrm = Files.readString(control.resolve("postrm"));
        String prerm = Files.readString(control.resolve("prerm"));
        assertThat(postinst).contains("adduser --system --group").contains("install -d -m 0755 /etc/ernic")
                .contains("systemctl --system daemon-reload");
        assertThat(postrm).contains("\"$1\" = purge").contains("deluser --system").contains("delgroup --system")
                .contains("rmdir --ignore-fail-on-non-empty /etc/ernic").contains("rm -rf /var/lib/ernic /run/ernic")
                .contains("daemon-reload");
        assertThat(prerm).contains("systemctl stop 'ernic@*.service'");
        assertThat(control.resolve("preinst")).doesNotExist();
        for (String script : List.of("postinst", "postrm", "prerm")) {
            Path p = control.resolve(script);
            assertThat(Files.isExecutable(p)).as(script + " is executable").isTrue();
            assertThat(Files.readString(p)).startsWith("#!/bin/sh\n");
            Run syntax = run("sh", "-n", p.toString());
            assertThat(syntax.status()).as(script + ": " + syntax.out()).isZero();
        }
    }

    static Path extractControl(Path dir) throws Exception {
        Path control = dir.resolve("DEBIAN");
        Run e = run("dpkg-deb", "-e", deb.toString(), control.toString());
        assertThat(e.status()).as(e.out()).isZero();
        try (Stream<Path> s = Files.list(control)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted(Comparator.naturalOrder()).toList())
                    .isSubsetOf(Arrays.asList("control", "md5sums", "postinst", "postrm", "prerm"));
        }
        return control;
    }

    /** The quick build against the full one, when {@code ./ernic dist --deb} has built one: the same less the cache. */
    @Test
    void theQuickBuildHoldsWhatTheFullOneHoldsButTheAotCache() throws Exception {
        assumeTrue(!quick, "no package of ./ernic dist --deb in target/dist to hold the quick build against");
        List<String> full = paths();
        Path quickDeb = buildQuick();
        Run c = run("dpkg-deb", "-c", quickDeb.toString());
        assertThat(c.status()).as(c.out()).isZero();
        List<String> fast = c.out().lines()
                .map(l -> l.contains(" -> ") ? l.substring(0, l.indexOf(" -> ")) : l)
                .map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
        assertThat(fast).containsExactlyInAnyOrderElementsOf(
                full.stream().filter(p -> !p.equals("./usr/lib/ernic/ernic.aot")).toList());
    }
}
