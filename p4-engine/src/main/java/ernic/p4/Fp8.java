package ernic.p4;

/**
 * OCP 8-bit floating point (OFP8, r1.0): E4M3 and E5M2. Decoding is exact (every fp8 value is a float);
 * encoding rounds to nearest, ties to even, once. Out of range:
 * <ul>
 * <li>saturating mode: a finite value beyond the largest normal, and an infinity, become the largest
 *     normal of that sign (448 for E4M3, 57344 for E5M2);</li>
 * <li>non-saturating mode: they become infinity in E5M2 and NaN in E4M3 (which has no infinity).</li>
 * </ul>
 * NaN stays NaN in both modes (E4M3 S.1111.111, E5M2 S.11111.11, keeping the sign). A value rounds past the
 * largest normal when it is at or above the midpoint to the next step, except that a tie rounds to even:
 * 464 becomes 448 in E4M3, 61440 overflows in E5M2.
 *
 * <p>Accumulate ({@code dst += src}) decodes both operands exactly, each in its own format, adds them
 * exactly (in double: a sum of two fp8 values needs at most 35 significant bits), and rounds the sum once
 * to the destination's format. So mixed operands are defined: an E5M2 source added to an E4M3 destination
 * gives an E4M3 result and the other way round; Inf + -Inf and anything + NaN give NaN.
 */
public final class Fp8 {
    public enum Format {
        E4M3(4, 3, 7, 448f),
        E5M2(5, 2, 15, 57344f);

        final int expBits;
        final int manBits;
        final int bias;
        final float maxNormal;
        final float[] decoded = new float[256];

        Format(int expBits, int manBits, int bias, float maxNormal) {
            this.expBits = expBits;
            this.manBits = manBits;
            this.bias = bias;
            this.maxNormal = maxNormal;
        }

        /** The code of the largest normal of a sign. */
        int maxCode(boolean negative) {
            int code = this == E4M3 ? 0x7e : 0x7b;
            return negative ? code | 0x80 : code;
        }

        int nanCode(boolean negative) {
            return negative ? 0xff : 0x7f;
        }

        public boolean hasInfinity() {
            return this == E5M2;
        }
    }

    static {
        for (Format f : Format.values()) {
            for (int c = 0; c < 256; c++) {
                f.decoded[c] = decodeSlow(f, c);
            }
        }
    }

    private Fp8() {
    }

    private static float decodeSlow(Format f, int code) {
        boolean neg = (code & 0x80) != 0;
        int e = (code >> f.manBits) & ((1 << f.expBits) - 1);
        int m = code & ((1 << f.manBits) - 1);
        int emax = (1 << f.expBits) - 1;
        float v;
        if (f == Format.E4M3 && e == emax && m == (1 << f.manBits) - 1) {
            return Float.NaN;
        }
        if (f == Format.E5M2 && e == emax) {
            return m == 0 ? (neg ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY) : Float.NaN;
        }
        if (e == 0) {
            v = Math.scalb((float) m, 1 - f.bias - f.manBits);
        } else {
            v = Math.scalb((float) ((1 << f.manBits) | m), e - f.bias - f.manBits);
        }
        return neg ? -v : v;
    }

    /** The exact value of an fp8 code (the low 8 bits of {@code code}). */
    public static float decode(int code, Format f) {
        return f.decoded[code & 0xff];
    }

    public static int encode(float x, Format f, boolean saturate) {
        return encode((double) x, f, saturate);
    }

    /** {@code x} rounded to nearest even, with the overflow rule of the mode; returns the code (0..255). */
    public static int encode(double x, Format f, boolean saturate) {
        boolean neg = Math.copySign(1.0, x) < 0;
        int sign = neg ? 0x80 : 0;
        if (Double.isNaN(x)) {
            return f.nanCode(neg);
        }
        if (Double.isInfinite(x)) {
            return overflow(f, neg, saturate);
        }
        double a = Math.abs(x);
        if (a == 0) {
            return sign;
        }
        int emin = 1 - f.bias;
        int e = Math.max(Math.getExponent(a), emin);
        double quantum = Math.scalb(1.0, e - f.manBits);
        double r = Math.rint(a / quantum) * quantum;
        if (r > f.maxNormal) {
            return overflow(f, neg, saturate);
        }
        if (r == 0) {
            return sign;
        }
        int re = Math.getExponent(r);
        if (re < emin) {
            return sign | (int) (r / Math.scalb(1.0, emin - f.manBits));
        }
        int mant = (int) ((r / Math.scalb(1.0, re) - 1) * (1 << f.manBits));
        return sign | ((re + f.bias) << f.manBits) | mant;
    }

    private static int overflow(Format f, boolean neg, boolean saturate) {
        if (saturate) {
            return f.maxCode(neg);
        }
        return f.hasInfinity() ? (neg ? 0xfc : 0x7c) : f.nanCode(neg);
    }

    /** {@code dst + src}, each decoded in its own format, rounded once to {@code df}. */
    public static int add(int dst, Format df, int src, Format sf, boolean saturate) {
        double sum = (double) decode(dst, df) + (double) decode(src, sf);
        return encode(sum, df, saturate);
    }

    /**
     * {@code dst[i] += src[i]} for {@code n} elements: the fp8 accumulate extern's arithmetic, {@link #add} of each
     * pair, looked up in a table of every pair's sum.
     */
    public static void accumulate(byte[] dst, int dOff, Format df, byte[] src, int sOff, Format sf, int n,
                                  boolean saturate) {
        byte[] sums = Sums.TABLES[Sums.index(df, sf, saturate)];
        for (int i = 0; i < n; i++) {
            dst[dOff + i] = sums[(dst[dOff + i] & 0xff) << 8 | (src[sOff + i] & 0xff)];
        }
    }

    /**
     * {@link #add} of every pair of codes (dst << 8 | src), for each destination format, source format and mode:
     * 8 tables of 64 KiB, computed when the first accumulate loads this class.
     */
    private static final class Sums {
        static final byte[][] TABLES = new byte[8][];

        static {
            for (Format df : Format.values()) {
                for (Format sf : Format.values()) {
                    for (boolean saturate : new boolean[] {false, true}) {
                        byte[] t = new byte[1 << 16];
                        for (int d = 0; d < 256; d++) {
                            for (int s = 0; s < 256; s++) {
                                t[d << 8 | s] = (byte) add(d, df, s, sf, saturate);
                            }
                        }
                        TABLES[index(df, sf, saturate)] = t;
                    }
                }
            }
        }

        static int index(Format df, Format sf, boolean saturate) {
            return df.ordinal() << 2 | sf.ordinal() << 1 | (saturate ? 1 : 0);
        }
    }

    public static int fromBf16(int bf16, Format f, boolean saturate) {
        return encode(Float.intBitsToFloat((bf16 & 0xffff) << 16), f, saturate);
    }

    public static int fromFp16(int fp16, Format f, boolean saturate) {
        return encode(Float.float16ToFloat((short) fp16), f, saturate);
    }

    /** An fp8 value as bf16: exact, as every fp8 value is a bf16 value. */
    public static int toBf16(int code, Format f) {
        return Float.floatToRawIntBits(decode(code, f)) >>> 16;
    }

    /** An fp8 value as fp16 (binary16): exact, as every fp8 value is an fp16 value. */
    public static int toFp16(int code, Format f) {
        return Float.floatToFloat16(decode(code, f)) & 0xffff;
    }
}
