package ernic.mesh;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code ,queue=BYTES} option of a mesh spec: the per-connection send budget, parsed or refused in one line. */
class MeshSpecTest {
    @Test
    void queueSetsTheWriteWatermarksHighAndHalfOfItLow() {
        String[][] cases = {{"65536", "65536"}, {"64K", "65536"}, {"64k", "65536"}, {"1M", "1048576"},
                {"96K", "98304"}, {"32M", "33554432"}, {"1G", "1073741824"}, {"1073741824", "1073741824"}};
        for (String[] c : cases) {
            MeshSpec s = MeshSpec.parse("tcp:worker:h:1,queue=" + c[0]);
            int high = Integer.parseInt(c[1]);
            assertThat(s.queueBytes()).as(c[0]).isEqualTo(high);
            MeshConfig config = s.config(MeshConfig.defaults());
            assertThat(config.writeBufferHigh()).as(c[0]).isEqualTo(high);
            assertThat(config.writeBufferLow()).as(c[0]).isEqualTo(high / 2);
        }
        MeshSpec m = MeshSpec.parse("tcp:manager:listen:7400,secret=/k,queue=64K");
        assertThat(m.port()).isEqualTo(7400);
        assertThat(m.secretFile()).isEqualTo(Path.of("/k"));
        assertThat(m.queueBytes()).isEqualTo(64 << 10);
        MeshSpec w = MeshSpec.parse("tcp:worker:[fe80::1%eth0]:7400,queue=128K,secret=/k");
        assertThat(w.manager()).isEqualTo(new MeshAddress("fe80::1%eth0", 7400));
        assertThat(w.secretFile()).isEqualTo(Path.of("/k"));
        assertThat(w.queueBytes()).isEqualTo(128 << 10);
    }

    @Test
    void withoutQueueTheDefaultsStay() {
        MeshSpec s = MeshSpec.parse("tcp:worker:h:1");
        assertThat(s.queueBytes()).isZero();
        MeshConfig c = s.config(MeshConfig.defaults());
        assertThat(c.writeBufferHigh()).isEqualTo(32 << 20);
        assertThat(c.writeBufferLow()).isEqualTo(16 << 20);
        assertThat(c.socketBufferBytes()).isZero();
    }

    @Test
    void nonsenseIsRefusedInOneLine() {
        for (String bad : new String[] {"", "abc", "63K", "65535", "0", "-64K", "1.5M", "64KiB", "2G", "1025M",
                "1073741825", "99999999999K", "9999999999G", "K", " 64K", "64K "}) {
            String text = "tcp:worker:h:1,queue=" + bad;
            assertThatThrownBy(() -> MeshSpec.parse(text)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("queue=" + bad + " in " + text + ": expected a size from 64K to 1G (bytes, or with a"
                            + " K, M or G suffix)");
        }
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,queue")).hasMessageContaining("expected a size");
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,queue=64K,queue=1M"))
                .hasMessage("queue= given twice in tcp:worker:h:1,queue=64K,queue=1M");
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,budget=1M"))
                .hasMessage("unknown mesh option 'budget' in tcp:worker:h:1,budget=1M (the options are secret=FILE"
                        + " and queue=BYTES)");
        assertThatThrownBy(() -> new MeshSpec(MeshNode.Role.WORKER, 0, null, null, 1000))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
