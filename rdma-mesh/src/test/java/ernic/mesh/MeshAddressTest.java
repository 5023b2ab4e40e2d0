package ernic.mesh;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MeshAddressTest {

    @Test
    void parsesNamesIpv4AndBracketedIpv6() {
        assertThat(MeshAddress.parse("manager.example:5000")).isEqualTo(new MeshAddress("manager.example", 5000));
        assertThat(MeshAddress.parse("10.1.2.3:5000")).isEqualTo(new MeshAddress("10.1.2.3", 5000));
        assertThat(MeshAddress.parse("[::1]:5000")).isEqualTo(new MeshAddress("::1", 5000));
        MeshAddress zoned = MeshAddress.parse("[fe80::1%eth0]:5000");
        assertThat(zoned.host()).isEqualTo("fe80::1%eth0");
        assertThat(zoned.port()).isEqualTo(5000);
        assertThat(zoned.isLiteral()).isTrue();
        assertThat(zoned.toString()).isEqualTo("[fe80::1%eth0]:5000");
        assertThat(MeshAddress.parse("manager.example:1").isLiteral()).isFalse();
        assertThat(MeshAddress.parse("127.0.0.1:1").isLiteral()).isTrue();
    }

    @Test
    void backendSpecs() {
        MeshSpec m = MeshSpec.parse("tcp:manager:listen:5000");
        assertThat(m.role()).isEqualTo(MeshNode.Role.MANAGER);
        assertThat(m.port()).isEqualTo(5000);
        MeshSpec w = MeshSpec.parse("tcp:worker:[fe80::1%eth0]:5000");
        assertThat(w.role()).isEqualTo(MeshNode.Role.WORKER);
        assertThat(w.manager()).isEqualTo(new MeshAddress("fe80::1%eth0", 5000));
        assertThat(MeshSpec.parse("tcp:worker:mgr.example:6000").manager()).isEqualTo(new MeshAddress("mgr.example", 6000));
        for (String bad : new String[] {"tcp:manager:listen:", "tcp:manager:listen:0", "tcp:worker:fe80::1:5000",
                "loopback", "tcp:boss:1"}) {
            assertThatThrownBy(() -> MeshSpec.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void gidLists() {
        assertThat(Gid.parseList("fe80::1, 10.0.0.1  fe80::2")).containsExactly(Gid.parse("fe80::1"),
                Gid.parse("10.0.0.1"), Gid.parse("fe80::2"));
        assertThat(Gid.parseList("")).isEmpty();
        assertThat(Gid.parseList(null)).isEmpty();
        assertThatThrownBy(() -> Gid.parseList("fe80::1,bogus")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refusesWhatItCannotRead() {
        for (String bad : new String[] {"", "::1:5000", "[::1]5000", "[::1]:", "[::1", "host", "host:0", "host:70000",
                "host:x", ":5000", "[nothex]:5000"}) {
            assertThatThrownBy(() -> MeshAddress.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
