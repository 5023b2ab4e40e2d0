package ernic.p4;

import java.math.BigInteger;

/**
 * An action with its arguments, as a table entry, a default entry or an action profile member holds them; or, for
 * an entry of a table with an action selector, the group whose member the frame's hash picks ({@link #ofGroup}).
 */
record ActionData(Action action, long[] args, byte[][] wide, Table.Group group) {

    /** An entry that points at an action selector group. */
    static ActionData ofGroup(Table.Group g) {
        return new ActionData(null, null, null, g);
    }

    /** Encodes argument values for an action; refuses a value that does not fit its parameter. */
    static ActionData of(Action a, BigInteger[] values) {
        if (values.length != a.paramWidths.length) {
            throw new IllegalArgumentException("action " + a.name + " takes " + a.paramWidths.length
                    + " parameters, got " + values.length);
        }
        long[] args = new long[values.length];
        byte[][] wide = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            int w = a.paramWidths[i];
            BigInteger v = values[i];
            if (v.signum() < 0 || v.bitLength() > w) {
                throw new IllegalArgumentException("value " + v + " does not fit parameter " + a.paramNames[i]
                        + " of " + w + " bits");
            }
            if (w > HeaderType.NARROW) {
                wide[i] = toBytes(v, (w + 7) / 8);
            } else {
                args[i] = v.longValue();
            }
        }
        return new ActionData(a, args, wide, null);
    }

    /** The value as exactly {@code n} big-endian bytes (it must fit). */
    static byte[] toBytes(BigInteger v, int n) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[n];
        int k = Math.min(n, raw.length);
        System.arraycopy(raw, raw.length - k, out, n - k, k);
        return out;
    }

    /**
     * True for an entry pointing at a selector group. (A test of its own: {@link #group()}'s signature names a class
     * that may never be loaded, and the JIT would then call it on every hit instead of inlining it.)
     */
    boolean hasGroup() {
        return group != null;
    }

    void run(Packet p) {
        action.run(p, args, wide);
    }
}
