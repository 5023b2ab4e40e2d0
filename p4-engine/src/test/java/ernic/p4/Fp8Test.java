package ernic.p4;

import ernic.p4.Fp8.Format;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * fp8 against the OCP OFP8 r1.0 definition. Expected values are derived here from the format definition
 * (sign, exponent field, mantissa field, bias; E4M3 NaN S.1111.111 and no infinities; E5M2 infinities
 * S.11111.00 and NaNs S.11111.{01,10,11}), with Math.pow, not with the code under test.
 */
class Fp8Test {
    static int expBits(Format f) {
        return f == Format.E4M3 ? 4 : 5;
    }

    static int bias(Format f) {
        return f == Format.E4M3 ? 7 : 15;
    }

    /** The value of a code per the spec: NaN, +-Inf, subnormal m * 2^(1-bias-M) or (1 + m/2^M) 2^(e-bias). */
    static double spec(Format f, int code) {
        int eb = expBits(f);
        int mb = 7 - eb;
        int s = code >> 7;
        int e = (code >> mb) & ((1 << eb) - 1);
        int m = code & ((1 << mb) - 1);
        int emax = (1 << eb) - 1;
        if (f == Format.E4M3 && e == emax && m == 7) {
            return Double.NaN;
        }
        if (f == Format.E5M2 && e == emax) {
            return m == 0 ? (s == 1 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY) : Double.NaN;
        }
        double mag = e == 0 ? m * Math.pow(2, 1 - bias(f) - mb) : (1 + m / Math.pow(2, mb)) * Math.pow(2, e - bias(f));
        return s == 1 ? -mag : mag;
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void decodesAll256ValuesExactly(Format f) {
        for (int c = 0; c < 256; c++) {
            double want = spec(f, c);
            float got = Fp8.decode(c, f);
            if (Double.isNaN(want)) {
                assertThat(got).as("code %02x", c).isNaN();
            } else {
                assertThat((double) got).as("code %02x", c).isEqualTo(want);
                assertThat(Math.copySign(1.0, got)).as("sign of %02x", c).isEqualTo(c >= 0x80 ? -1.0 : 1.0);
            }
        }
    }

    @Test
    void theSpecsLandmarks() {
        assertThat(Fp8.decode(0x7e, Format.E4M3)).isEqualTo(448f);
        assertThat(Fp8.decode(0x08, Format.E4M3)).isEqualTo(0.015625f);
        assertThat(Fp8.decode(0x01, Format.E4M3)).isEqualTo(0.001953125f);
        assertThat(Fp8.decode(0x7f, Format.E4M3)).isNaN();
        assertThat(Fp8.decode(0xff, Format.E4M3)).isNaN();
        assertThat(Fp8.decode(0x7b, Format.E5M2)).isEqualTo(57344f);
        assertThat(Fp8.decode(0x04, Format.E5M2)).isEqualTo((float) Math.pow(2, -14));
        assertThat(Fp8.decode(0x01, Format.E5M2)).isEqualTo((float) Math.pow(2, -16));
        assertThat(Fp8.decode(0x7c, Format.E5M2)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(Fp8.decode(0xfc, Format.E5M2)).isEqualTo(Float.NEGATIVE_INFINITY);
        for (int c : new int[] {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}) {
            assertThat(Fp8.decode(c, Format.E5M2)).isNaN();
        }
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void everyValueEncodesToItsOwnCode(Format f) {
        for (int c = 0; c < 256; c++) {
            double v = spec(f, c);
            if (!Double.isNaN(v) && !Double.isInfinite(v)) {
                assertThat(Fp8.encode(v, f, false)).as("value %s", v).isEqualTo(c);
                assertThat(Fp8.encode(v, f, true)).as("value %s", v).isEqualTo(c);
            }
        }
    }

    /** Between two neighbours: below the midpoint the lower, above the upper, at it the even code. */
    @ParameterizedTest
    @EnumSource(Format.class)
    void roundsToNearestTiesToEven(Format f) {
        List<Integer> codes = new ArrayList<>();
        for (int c = 0; c < 0x80; c++) {
            if (Double.isFinite(spec(f, c))) {
                codes.add(c);
            }
        }
        codes.sort((a, b) -> Double.compare(spec(f, a), spec(f, b)));
        for (int i = 0; i + 1 < codes.size(); i++) {
            int lo = codes.get(i);
            int hi = codes.get(i + 1);
            double a = spec(f, lo);
            double b = spec(f, hi);
            double mid = (a + b) / 2;
            int even = (lo & 1) == 0 ? lo : hi;
            assertThat(Fp8.encode(mid, f, false)).as("midpoint %s", mid).isEqualTo(even);
            assertThat(Fp8.encode(Math.nextDown(mid), f, false)).isEqualTo(lo);
            assertThat(Fp8.encode(Math.nextUp(mid), f, false)).isEqualTo(hi);
            assertThat(Fp8.encode(-mid, f, false)).isEqualTo(even | 0x80);
        }
        // Below half the smallest subnormal: zero; the half itself ties to even (zero).
        double tiny = spec(f, 1);
        assertThat(Fp8.encode(tiny / 2, f, false)).isEqualTo(0);
        assertThat(Fp8.encode(Math.nextUp(tiny / 2), f, false)).isEqualTo(1);
        assertThat(Fp8.encode(-tiny / 4, f, false)).isEqualTo(0x80);
    }

    @Test
    void saturationAndOverflowInE4M3() {
        Format f = Format.E4M3;
        assertThat(Fp8.encode(460f, f, false)).isEqualTo(0x7e);
        assertThat(Fp8.encode(464f, f, false)).isEqualTo(0x7e);
        assertThat(Fp8.encode(Math.nextUp(464f), f, false)).isEqualTo(0x7f);
        assertThat(Fp8.encode(Math.nextUp(464f), f, true)).isEqualTo(0x7e);
        assertThat(Fp8.encode(-1e9f, f, true)).isEqualTo(0xfe);
        assertThat(Fp8.encode(-1e9f, f, false)).isEqualTo(0xff);
        assertThat(Fp8.encode(Float.POSITIVE_INFINITY, f, true)).isEqualTo(0x7e);
        assertThat(Fp8.encode(Float.POSITIVE_INFINITY, f, false)).isEqualTo(0x7f);
        assertThat(Fp8.encode(Float.NaN, f, true)).isEqualTo(0x7f);
        assertThat(Fp8.encode(Float.NaN, f, false)).isEqualTo(0x7f);
    }

    @Test
    void saturationAndOverflowInE5M2() {
        Format f = Format.E5M2;
        assertThat(Fp8.encode(Math.nextDown(61440f), f, false)).isEqualTo(0x7b);
        assertThat(Fp8.encode(61440f, f, false)).isEqualTo(0x7c);
        assertThat(Fp8.encode(61440f, f, true)).isEqualTo(0x7b);
        assertThat(Fp8.encode(Float.NEGATIVE_INFINITY, f, false)).isEqualTo(0xfc);
        assertThat(Fp8.encode(Float.NEGATIVE_INFINITY, f, true)).isEqualTo(0xfb);
        assertThat(Fp8.decode(Fp8.encode(Float.NaN, f, true), f)).isNaN();
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void convertsToAndFromHalfAndBfloatExactly(Format f) {
        for (int c = 0; c < 256; c++) {
            double v = spec(f, c);
            float half = Float.float16ToFloat((short) Fp8.toFp16(c, f));
            float bf = Float.intBitsToFloat(Fp8.toBf16(c, f) << 16);
            if (Double.isNaN(v)) {
                assertThat(half).isNaN();
                assertThat(bf).isNaN();
                continue;
            }
            assertThat((double) half).isEqualTo(v);
            assertThat((double) bf).isEqualTo(v);
            if (Double.isFinite(v)) {
                assertThat(Fp8.fromFp16(Fp8.toFp16(c, f), f, false)).isEqualTo(c);
                assertThat(Fp8.fromBf16(Fp8.toBf16(c, f), f, false)).isEqualTo(c);
            }
        }
        // fp16 1.0 (0x3c00), bf16 -2.0 (0xc000), and an fp16 value between two fp8 values (1.0625).
        int one = f == Format.E4M3 ? 0x38 : 0x3c;
        assertThat(Fp8.fromFp16(0x3c00, f, false)).isEqualTo(one);
        assertThat(Fp8.fromBf16(0xc000, f, false)).isEqualTo((one + (1 << (7 - expBits(f)))) | 0x80);
        assertThat(Fp8.fromFp16(Float.floatToFloat16(1.0625f), f, false)).isEqualTo(one);
    }

    @Test
    void accumulateRoundsTheExactSumOnceWithTheDestinationsRules() {
        Format e4 = Format.E4M3;
        Format e5 = Format.E5M2;
        byte[] dst = {0x38, 0x7e, (byte) 0xfe, 0x7f};
        byte[] src = {0x38, 0x7e, 0x7e, 0x38};
        Fp8.accumulate(dst, 0, e4, src, 0, e4, 4, true);
        assertThat(Fp8.decode(dst[0], e4)).isEqualTo(2f);
        assertThat(dst[1]).isEqualTo((byte) 0x7e);
        assertThat(Fp8.decode(dst[2], e4)).isEqualTo(0f);
        assertThat(Fp8.decode(dst[3], e4)).isNaN();
        assertThat(Fp8.add(0x7e, e4, 0x7e, e4, false)).isEqualTo(0x7f);
        assertThat(Fp8.decode(Fp8.add(0x7c, e5, 0xfc, e5, true), e5)).isNaN();
        assertThat(Fp8.add(0x7c, e5, 0x3c, e5, false)).isEqualTo(0x7c);
        // Mixed: E4M3 1.0 += E5M2 0.5 gives E4M3 1.5; E5M2 1.0 += E4M3 0.125 gives E5M2 1.0 (1.125 rounds down).
        assertThat(Fp8.decode(Fp8.add(0x38, e4, 0x38, e5, true), e4)).isEqualTo(1.5f);
        assertThat(Fp8.decode(Fp8.add(0x3c, e5, 0x20, e4, true), e5)).isEqualTo(1.0f);
        // Infinity from an E5M2 source into an E4M3 destination: saturates, or NaN without saturation.
        assertThat(Fp8.add(0x38, e4, 0x7c, e5, true)).isEqualTo(0x7e);
        assertThat(Fp8.add(0x38, e4, 0x7c, e5, false)).isEqualTo(0x7f);
    }

    /** accumulate looks its sums up in tables: they must be add's, for every pair, both formats and both modes. */
    @Test
    void accumulateGivesAddForEveryPairOfCodes() {
        byte[] src = new byte[1 << 16];
        byte[] dst = new byte[1 << 16];
        for (Format df : Format.values()) {
            for (Format sf : Format.values()) {
                for (boolean saturate : new boolean[] {false, true}) {
                    for (int i = 0; i < dst.length; i++) {
                        dst[i] = (byte) (i >> 8);
                        src[i] = (byte) i;
                    }
                    Fp8.accumulate(dst, 0, df, src, 0, sf, dst.length, saturate);
                    for (int i = 0; i < dst.length; i++) {
                        assertThat(dst[i] & 0xff).as("%s %02x += %s %02x, saturate %s", df, i >> 8, sf, i & 0xff,
                                saturate).isEqualTo(Fp8.add(i >> 8, df, i & 0xff, sf, saturate));
                    }
                }
            }
        }
    }
}
