package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * packaging/ernic@.service: {@code systemd-analyze verify} passes with nothing to say, and the unit keeps what
 * {@code --tap} needs (CAP_NET_ADMIN, /dev/net/tun) under its hardening.
 */
class ServiceUnitTest {
    static final Path UNIT = Path.of("../packaging/ernic@.service");
    static final String INSTALLED_LAUNCHER = "/opt/ernic/ernic";

    /** The value of the unit's one line that starts with {@code key} (for example {@code "ExecStart="}). */
    static String unitLine(String key) throws IOException {
        List<String> lines = Files.readAllLines(UNIT).stream().filter(l -> l.startsWith(key)).toList();
        assertThat(lines).as(key).hasSize(1);
        return lines.getFirst().substring(key.length());
    }

    static Optional<Path> onPath(String command) {
        return Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator))
                .map(d -> Path.of(d, command)).filter(Files::isExecutable).findFirst();
    }

    record Verify(int status, String output) {}

    /**
     * Runs {@code systemd-analyze verify} on instance vm1 of {@code unitText}, copied into {@code dir} with the
     * launcher path pointing at a stand-in (verify checks that ExecStart's program exists and is executable).
     */
    static Verify verify(Path systemdAnalyze, Path dir, String unitText) throws Exception {
        Path launcher = dir.resolve("ernic");
        Files.writeString(launcher, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(unitText).contains("ExecStart=" + INSTALLED_LAUNCHER + " ");
        Files.writeString(dir.resolve("ernic@.service"),
                unitText.replace("ExecStart=" + INSTALLED_LAUNCHER + " ", "ExecStart=" + launcher + " "));
        Process p = new ProcessBuilder(systemdAnalyze.toString(), "verify", "--man=no",
                dir.resolve("ernic@vm1.service").toString()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Verify(p.exitValue(), out);
    }

    @Test
    void systemdAnalyzeVerifyPassesCleanly(@TempDir Path dir) throws Exception {
        Optional<Path> sa = onPath("systemd-analyze");
        assumeTrue(sa.isPresent(), "systemd-analyze is not installed (package systemd): the unit is not verified");
        Verify v = verify(sa.get(), dir, Files.readString(UNIT));
        assertThat(v.output()).as("systemd-analyze verify output").isEmpty();
        assertThat(v.status()).isZero();
    }

    @Test
    void verifyWouldSayItIfTheUnitWereWrong(@TempDir Path dir) throws Exception {
        Optional<Path> sa = onPath("systemd-analyze");
        assumeTrue(sa.isPresent(), "systemd-analyze is not installed (package systemd): the unit is not verified");
        String broken = Files.readString(UNIT).replace("ProtectHome=yes", "ProtectHome=yes\nProtectEverything=yes");
        Verify v = verify(sa.get(), dir, broken);
        assertThat(v.output()).contains("ProtectEverything");
    }

    @Test
    void theUnitServesTheInstancesSocketFromItsConfigFile() throws IOException {
        assertThat(unitLine("ExecStart=")).isEqualTo(INSTALLED_LAUNCHER
                + " serve --socket /run/ernic/%i.sock @/etc/ernic/%i.conf");
        assertThat(unitLine("RuntimeDirectory=")).isEqualTo("ernic");
        assertThat(unitLine("AssertPathExists=")).isEqualTo("/etc/ernic/%i.conf");
    }

    @Test
    void theHardeningLeavesTheTapWorking() throws IOException {
        assertThat(unitLine("AmbientCapabilities=")).isEqualTo("CAP_NET_ADMIN");
        assertThat(unitLine("CapabilityBoundingSet=")).isEqualTo("CAP_NET_ADMIN");
        assertThat(unitLine("DeviceAllow=")).isEqualTo("/dev/net/tun rw");
        assertThat(unitLine("ProtectSystem=")).isEqualTo("strict");
        assertThat(unitLine("NoNewPrivileges=")).isEqualTo("yes");
        assertThat(unitLine("PrivateTmp=")).isEqualTo("yes");
        String unit = Files.readString(UNIT);
        // each of these would break the TAP, the JIT or the mesh
        assertThat(unit).doesNotContainPattern("(?m)^(PrivateDevices|PrivateNetwork|PrivateUsers|MemoryDenyWriteExecute)=");
    }
}
