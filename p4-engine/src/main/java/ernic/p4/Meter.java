package ernic.p4;

import java.util.List;

/**
 * One meter cell as simple_switch runs it: a token bucket per rate (two for a trTCM: the committed rate, then the
 * peak rate), rates in units (packets or bytes) per microsecond, bursts in units. Tokens are counted from one time
 * origin rather than from the last packet, as bmv2 does, so no rounding accumulates. A packet that finds the peak
 * bucket short is RED (2) and takes nothing; else it takes from it and, if the committed bucket is short, is
 * YELLOW (1); else it takes from both and is GREEN (0). An unconfigured meter says GREEN.
 */
final class Meter {
    static final int GREEN = 0;

    private final double[] rates;
    private final long[] bursts;
    private final long[] tokens;
    private final long[] last;
    private boolean configured;

    Meter(int rateCount) {
        rates = new double[rateCount];
        bursts = new long[rateCount];
        tokens = new long[rateCount];
        last = new long[rateCount];
    }

    /**
     * Sets the rates, lowest first ({@code meter_set_rates m i CIR:CBS PIR:PBS}); the buckets start full. A rate
     * below the one before it is refused, as bmv2 refuses it.
     */
    void setRates(double[] r, long[] b) {
        if (r.length != rates.length || b.length != rates.length) {
            throw new IllegalArgumentException("expected " + rates.length + " rates, got " + r.length);
        }
        for (int i = 0; i < r.length; i++) {
            if (!(r[i] >= 0) || Double.isInfinite(r[i]) || b[i] < 0) {
                throw new IllegalArgumentException("a rate and burst must be non-negative");
            }
            if (i > 0 && r[i - 1] > r[i]) {
                throw new IllegalArgumentException("rate " + r[i] + " is below the rate before it (" + r[i - 1] + ")");
            }
        }
        System.arraycopy(r, 0, rates, 0, r.length);
        System.arraycopy(b, 0, bursts, 0, b.length);
        System.arraycopy(b, 0, tokens, 0, b.length);
        java.util.Arrays.fill(last, 0);
        configured = true;
    }

    /**
     * The rates as {@code meter_get_rates} prints them, committed first: "I: info rate = R, burst size = B", one line
     * per rate; an unconfigured meter has none, and simple_switch_CLI then warns as this does.
     */
    List<String> describeRates() {
        if (!configured) {
            return List.of("WARNING: expected " + rates.length + " rates but only received 0");
        }
        List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < rates.length; i++) {
            out.add(i + ": info rate = " + pythonFloat(rates[i]) + ", burst size = " + bursts[i]);
        }
        return out;
    }

    /** A double as Python's str() writes it (simple_switch_CLI is Python): 1e-06, 0.0001, 2.5, 1e+16. */
    static String pythonFloat(double v) {
        java.math.BigDecimal d = new java.math.BigDecimal(Double.toString(v)).stripTrailingZeros();
        int exponent = d.precision() - d.scale() - 1;
        if (v == 0 || (exponent >= -4 && exponent < 16)) {
            String plain = d.toPlainString();
            return plain.contains(".") ? plain : plain + ".0";
        }
        String digits = d.unscaledValue().abs().toString();
        String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return (v < 0 ? "-" : "") + mantissa + "e" + (exponent < 0 ? "-" : "+")
                + (Math.abs(exponent) < 10 ? "0" : "") + Math.abs(exponent);
    }

    /** Forgets the rates: the meter says GREEN until rates are set again. */
    void reset() {
        configured = false;
    }

    /** The colour of a packet of {@code units} (1, or its bytes) at {@code micros} after the time origin. */
    int execute(long micros, long units) {
        if (!configured) {
            return GREEN;
        }
        for (int i = rates.length - 1; i >= 0; i--) {
            long since = (long) (micros * rates[i]);
            long fresh = Math.max(0, since - last[i]);
            last[i] = Math.max(last[i], since);
            tokens[i] = Math.min(tokens[i] + fresh, bursts[i]);
            if (tokens[i] < units) {
                return i + 1;
            }
            tokens[i] -= units;
        }
        return GREEN;
    }

    /** A meter array (indirect, or the spec of a table's direct meter): its name, what it counts, its rates. */
    record Spec(String name, boolean bytes, int rateCount, int size) {
    }
}
