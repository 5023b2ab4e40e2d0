package ernic.common;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CommonTest {
    @Test
    void rfc1071ExampleSumsAsTheRfcShows() {
        // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 (before the complement).
        byte[] b = {0x00, 0x01, (byte) 0xf2, 0x03, (byte) 0xf4, (byte) 0xf5, (byte) 0xf6, (byte) 0xf7};
        assertThat(InternetChecksum.sum(b, 0, b.length, 0)).isEqualTo(0xddf2);
        assertThat(InternetChecksum.of(b, 0, b.length, 0)).isEqualTo(~0xddf2 & 0xffff);
        assertThat(InternetChecksum.of(MemorySegment.ofArray(b), 0, b.length)).isEqualTo(~0xddf2 & 0xffff);
    }

    @Test
    void anOddLastByteIsPaddedWithZero() {
        byte[] b = {0x12, 0x34, 0x56};
        assertThat(InternetChecksum.sum(b, 0, 3, 0)).isEqualTo(0x1234 + 0x5600);
        assertThat(InternetChecksum.sum(MemorySegment.ofArray(b), 0, 3, 0)).isEqualTo(0x1234 + 0x5600);
    }

    @Test
    void anIpv4AddressIsItsV4MappedGid() {
        IpAddress a = IpAddress.parse("192.168.7.2");
        assertThat(a.isIpv4()).isTrue();
        assertThat(a.ipv4()).isEqualTo(0xc0a8_0702);
        assertThat(a.gid()).containsExactly(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -64, -88, 7, 2);
        assertThat(a).isEqualTo(IpAddress.ofIpv4(0xc0a8_0702)).isEqualTo(IpAddress.parse("::ffff:192.168.7.2"));
        assertThat(a.isGid(IpAddress.ofIpv4(0xc0a8_0702).gid())).isTrue();
        assertThat(a).hasToString("192.168.7.2");
    }

    @Test
    void ipv6FormsParse() {
        assertThat(IpAddress.parse("fe80::1").gid()).containsExactly(0xfe - 256, 0x80 - 256, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 1);
        assertThat(IpAddress.parse("1:2:3:4:5:6:7:8")).hasToString("1:2:3:4:5:6:7:8");
        assertThat(IpAddress.parse("::")).isEqualTo(IpAddress.ofGid(new byte[16]));
    }

    @Test
    void badAddressesAreRefusedWithWhatWasGiven() {
        for (String bad : new String[] {"1.2.3", "1.2.3.256", "1.2.3.4.5", "a.b.c.d", "1..2.3", "", "1::2::3",
                "1:2:3:4:5:6:7:8:9", "12345::", "g::1"}) {
            assertThatThrownBy(() -> IpAddress.parse(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(bad);
        }
        assertThatThrownBy(() -> IpAddress.parse("fe80::1").ipv4()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aGidIsTwoBigEndianLongs() {
        byte[] gid = IpAddress.parse("fe80::1:2:3:4").gid();
        assertThat(IpAddress.high(gid)).isEqualTo(0xfe80_0000_0000_0000L);
        assertThat(IpAddress.low(gid)).isEqualTo(0x0001_0002_0003_0004L);
        assertThat(IpAddress.low(IpAddress.parse("192.168.77.1").gid())).isEqualTo(0x0000_ffff_c0a8_4d01L);
    }
}
