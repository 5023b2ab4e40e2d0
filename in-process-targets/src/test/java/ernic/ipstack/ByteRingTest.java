package ernic.ipstack;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class ByteRingTest {
    @Test
    void growsAcrossTheWrapKeepingOrderUpToItsLimit() {
        ByteRing r = new ByteRing(4 * ByteRing.INITIAL);
        byte[] data = new byte[5 * ByteRing.INITIAL];
        new Random(1).nextBytes(data);
        // wrap the small array first, then make it grow while wrapped
        assertThat(r.write(data, 0, ByteRing.INITIAL - 100)).isEqualTo(ByteRing.INITIAL - 100);
        byte[] out = new byte[data.length];
        assertThat(r.read(out, 0, ByteRing.INITIAL - 200)).isEqualTo(ByteRing.INITIAL - 200);
        int written = ByteRing.INITIAL - 100;
        int read = ByteRing.INITIAL - 200;
        int n = r.write(data, written, data.length - written);
        assertThat(n).isEqualTo(4 * ByteRing.INITIAL - 100); // up to the limit, not beyond
        written += n;
        assertThat(r.free()).isZero();
        assertThat(r.capacity()).isEqualTo(4 * ByteRing.INITIAL);
        read += r.read(out, read, written - read);
        assertThat(read).isEqualTo(written);
        assertThat(java.util.Arrays.copyOf(out, read)).isEqualTo(java.util.Arrays.copyOf(data, written));
    }
}
