package ernic.ionic.profile;

import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProfileLoaderTest {
    @Test
    void compatHasTheSeedValues() {
        Profile p = ProfileLoader.compat();
        assertThat(p.interrupts()).isEqualTo(32);
        assertThat(p.rdmaEqs()).isEqualTo(32);
        assertThat(p.linkSpeedMbps()).isEqualTo(100_000);
        assertThat(p.transceiver()).isEqualTo(Transceiver.QSFP_100G_CR4);
        assertThat(p.transceiver().phy()).isEqualTo(1);
        assertThat(p.transceiver().pid()).isEqualTo(1);
        assertThat(p.statsIntervalMs()).isEqualTo(1000);
        assertThat(ProfileLoader.load(null)).isEqualTo(p);
        assertThat(ProfileLoader.load(" ")).isEqualTo(p);
    }

    @Test
    void everyBuiltInLoadsAndShipsAsAFile() {
        for (String name : ProfileLoader.BUILT_INS) {
            assertThat(ProfileLoader.load(name).name()).contains(name);
            assertThat(Path.of("../profiles", name + ".ini")).as("shipped in the top-level profiles/").exists();
            assertThat(ProfileLoader.load("../profiles/" + name + ".ini")).usingRecursiveComparison().ignoringFields("name")
                    .isEqualTo(ProfileLoader.load(name));
        }
    }

    @Test
    void layersApplyInOrderOverCompat() {
        Profile p = ProfileLoader.load("minimal,400g");
        assertThat(p.interrupts()).isEqualTo(16);
        assertThat(p.ethQueues()).isEqualTo(2);
        assertThat(p.rdmaEqs()).isEqualTo(4);
        assertThat(p.linkSpeedMbps()).isEqualTo(400_000);
        assertThat(p.transceiver()).isEqualTo(Transceiver.QSFP_400G_CR4);
        assertThat(p.firmwareVersion()).isEqualTo("1.0.0-ernic"); // from compat
        assertThat(p.name()).isEqualTo("compat+minimal+400g");
        assertThat(ProfileLoader.load("400g,25g").linkSpeedMbps()).isEqualTo(25_000);
    }

    @Test
    void iniFilesLayerToo(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("mine.ini");
        Files.writeString(f, """
                ; my lab NIC
                [profile]
                interrupts = 64
                firmware_version = lab 2.0
                stats_interval_ms = 0
                """);
        Profile p = ProfileLoader.load("max," + f);
        assertThat(p.interrupts()).isEqualTo(64);
        assertThat(p.ethQueues()).isEqualTo(64);
        assertThat(p.firmwareVersion()).isEqualTo("lab 2.0");
        assertThat(p.statsIntervalMs()).isZero();
    }

    /** What loading a profile file holding {@code ini} throws. */
    static AbstractThrowableAssert<?, ? extends Throwable> refusedFor(Path dir, String ini) throws IOException {
        Path bad = Files.writeString(dir.resolve("bad.ini"), ini);
        return assertThatThrownBy(() -> ProfileLoader.load(bad.toString()));
    }

    @Test
    void clearErrors(@TempDir Path dir) throws IOException {
        assertThatThrownBy(() -> ProfileLoader.load("nosuch"))
                .hasMessageContaining("unknown NIC profile 'nosuch'").hasMessageContaining("compat");
        assertThatThrownBy(() -> ProfileLoader.load(dir.resolve("missing.ini").toString()))
                .hasMessageContaining("cannot read");
        refusedFor(dir, "interrupts = 32\nspeed = 5\n")
                .hasMessageContaining("line 2").hasMessageContaining("unknown key 'speed'");
        refusedFor(dir, "interrupts = lots\n")
                .hasMessageContaining("line 1").hasMessageContaining("needs an integer");
        refusedFor(dir, "interrupts = 256\n")
                .hasMessageContaining("interrupts = 256").hasMessageContaining("2..128");
        refusedFor(dir, "transceiver = usb\n")
                .hasMessageContaining("unknown transceiver 'usb'").hasMessageContaining("qsfp-100g-cr4");
        refusedFor(dir, "max_mtu = 9000\nmax_mtu = 1500\n").hasMessageContaining("already set on line 1");
        refusedFor(dir, "[other]\n").hasMessageContaining("unexpected section");
        refusedFor(dir, "rdma_eqs = 2\n").hasMessageContaining("rdma_eqs");
        refusedFor(dir, "firmware_version = " + "x".repeat(32) + "\n").hasMessageContaining("31");
        assertThatThrownBy(() -> ProfileLoader.load("compat,,max")).hasMessageContaining("empty entry");
    }
}
