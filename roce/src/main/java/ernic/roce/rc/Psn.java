package ernic.roce.rc;

/**
 * 24-bit packet sequence numbers (IBTA vol. 1, 9.7.1): arithmetic modulo 2^24, and comparison in a window of
 * 2^23 either side, so that a PSN "behind" another is one at most 2^23 - 1 steps back.
 */
public final class Psn {
    public static final int MASK = 0xff_ffff;
    /** Half the PSN space: the largest distance two comparable PSNs may have. */
    public static final int WINDOW = 1 << 23;

    private Psn() {
    }

    /** {@code psn + n} modulo 2^24 ({@code n} may be negative). */
    public static int add(int psn, int n) {
        return (psn + n) & MASK;
    }

    /** The signed distance {@code a - b} in the window: in [-2^23, 2^23). */
    public static int diff(int a, int b) {
        int d = (a - b) & MASK;
        return d >= WINDOW ? d - (1 << 24) : d;
    }

    /** Negative, zero or positive as {@code a} is before, equal to or after {@code b}. */
    public static int compare(int a, int b) {
        return Integer.signum(diff(a, b));
    }

    /** {@code a} is at or before {@code b}. */
    public static boolean le(int a, int b) {
        return diff(a, b) <= 0;
    }

    /** {@code a} is strictly before {@code b}. */
    public static boolean lt(int a, int b) {
        return diff(a, b) < 0;
    }
}
