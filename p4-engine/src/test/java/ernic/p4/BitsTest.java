package ernic.p4;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bit fields in byte arrays, against a model that reads and writes one bit at a time (the wire order of P4
 * headers: the first bit is the most significant of the first byte): every offset, every width from 1 to 64,
 * fields that span up to nine bytes.
 */
class BitsTest {
    static boolean bit(byte[] b, int i) {
        return ((b[i >> 3] >> (7 - (i & 7))) & 1) != 0;
    }

    static long modelRead(byte[] b, int at, int width) {
        long v = 0;
        for (int i = at; i < at + width; i++) {
            v = (v << 1) | (bit(b, i) ? 1 : 0);
        }
        return v;
    }

    @Property
    void readIsTheBitsInWireOrder(@ForAll long seed, @ForAll @IntRange(max = 80) int at,
                                  @ForAll @IntRange(min = 1, max = 64) int width) {
        byte[] b = new byte[20];
        new Random(seed).nextBytes(b);
        assertThat(Bits.read(b, at, width)).isEqualTo(modelRead(b, at, width));
    }

    @Property
    void writeReplacesTheFieldAndNoOtherBit(@ForAll long seed, @ForAll long v, @ForAll @IntRange(max = 80) int at,
                                           @ForAll @IntRange(min = 1, max = 64) int width) {
        byte[] b = new byte[20];
        new Random(seed).nextBytes(b);
        byte[] before = b.clone();
        Bits.write(b, at, width, v);
        assertThat(Bits.read(b, at, width)).isEqualTo(Bits.truncate(v, width));
        for (int i = 0; i < b.length * 8; i++) {
            if (i < at || i >= at + width) {
                assertThat(bit(b, i)).as("bit %d", i).isEqualTo(bit(before, i));
            }
        }
    }

    @Property
    void copyMovesAnyRunOfBits(@ForAll long seed, @ForAll @IntRange(max = 40) int from, @ForAll @IntRange(max = 40) int to,
                               @ForAll @IntRange(min = 1, max = 100) int width) {
        Random r = new Random(seed);
        byte[] src = new byte[20];
        byte[] dst = new byte[20];
        r.nextBytes(src);
        r.nextBytes(dst);
        Bits.copy(src, from, dst, to, width);
        for (int i = 0; i < width; i++) {
            assertThat(bit(dst, to + i)).as("bit %d", i).isEqualTo(bit(src, from + i));
        }
    }
}
