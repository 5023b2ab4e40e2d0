package ernic.ionic.layout;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MacTest {
    @Test
    void parsesAndFormats() {
        long mac = Mac.parse("02:ee:0a:1b:2c:3d");
        assertThat(mac).isEqualTo(0x02ee0a1b2c3dL);
        assertThat(Mac.format(mac)).isEqualTo("02:ee:0a:1b:2c:3d");
    }

    @Test
    void refusesWhatIsNotAMac() {
        for (String bad : new String[] {"", "02:ee:0a:1b:2c", "02:ee:0a:1b:2c:3d:4e", "2:ee:0a:1b:2c:3d", "zz:ee:0a:1b:2c:3d"}) {
            assertThatThrownBy(() -> Mac.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
