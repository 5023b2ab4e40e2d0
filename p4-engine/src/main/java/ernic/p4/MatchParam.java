package ernic.p4;

import java.math.BigInteger;

/**
 * One key field of an entry as the control plane or the JSON gives it: a value with a prefix (lpm), a mask
 * (ternary) or bounds (range). {@link #addTo} turns a full key into a table entry.
 */
record MatchParam(Table.MatchKind kind, BigInteger value, BigInteger mask, int prefix, BigInteger lo, BigInteger hi) {

    static MatchParam exact(BigInteger v) {
        return new MatchParam(Table.MatchKind.EXACT, v, null, -1, null, null);
    }

    static MatchParam lpm(BigInteger v, int prefix) {
        return new MatchParam(Table.MatchKind.LPM, v, null, prefix, null, null);
    }

    static MatchParam ternary(BigInteger v, BigInteger mask) {
        return new MatchParam(Table.MatchKind.TERNARY, v, mask, -1, null, null);
    }

    static MatchParam range(BigInteger lo, BigInteger hi) {
        return new MatchParam(Table.MatchKind.RANGE, null, null, -1, lo, hi);
    }

    /** Adds the entry to {@code t}; {@code fromJson} entries may go into a table that is otherwise const. */
    static int addTo(Table t, MatchParam[] params, int priority, ActionData data, boolean fromJson) {
        if (params.length != t.keys.length) {
            throw new IllegalArgumentException("table " + t.name + " has " + t.keys.length + " key fields, got "
                    + params.length);
        }
        byte[] value = new byte[t.keyBytes];
        byte[] mask = new byte[t.keyBytes];
        byte[] lo = new byte[t.keyBytes];
        byte[] hi = new byte[t.keyBytes];
        int prefix = 0;
        boolean anyRange = false;
        for (int i = 0; i < params.length; i++) {
            Table.Key k = t.keys[i];
            MatchParam m = params[i];
            int bits = k.bits();
            Table.MatchKind want = k.kind() == Table.MatchKind.VALID || k.kind() == Table.MatchKind.OPTIONAL
                    ? null : k.kind();
            if (want != null && m.kind != want) {
                throw new IllegalArgumentException("key field " + k.name() + " of table " + t.name + " is "
                        + k.kind().name().toLowerCase() + ", got a " + m.kind.name().toLowerCase() + " value");
            }
            BigInteger all = BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE);
            switch (m.kind) {
                case EXACT -> {
                    put(value, k, fit(m.value, bits, k));
                    BigInteger mk = k.kind() == Table.MatchKind.OPTIONAL && m.mask != null ? m.mask : all;
                    put(mask, k, mk);
                }
                case LPM -> {
                    if (m.prefix < 0 || m.prefix > bits) {
                        throw new IllegalArgumentException("prefix length " + m.prefix + " out of 0.." + bits
                                + " for key field " + k.name());
                    }
                    put(value, k, fit(m.value, bits, k));
                    put(mask, k, all.xor(BigInteger.ONE.shiftLeft(bits - m.prefix).subtract(BigInteger.ONE)));
                    prefix = m.prefix;
                }
                case TERNARY -> {
                    put(value, k, fit(m.value, bits, k));
                    put(mask, k, fit(m.mask, bits, k));
                }
                case RANGE -> {
                    BigInteger l = fit(m.lo, bits, k);
                    BigInteger h = fit(m.hi, bits, k);
                    if (l.compareTo(h) > 0) {
                        throw new IllegalArgumentException("range start above its end for key field " + k.name());
                    }
                    put(lo, k, l);
                    put(hi, k, h);
                    anyRange = true;
                }
                default -> throw new IllegalArgumentException("match kind " + m.kind);
            }
        }
        if (t.usesPriority() && priority < 0) {
            throw new IllegalArgumentException("table " + t.name + " is " + t.matchKind.name().toLowerCase()
                    + ": entries need a priority");
        }
        return fromJson ? t.addEntry(value, mask, anyRange ? lo : null, anyRange ? hi : null, prefix, priority, data)
                : t.add(value, mask, anyRange ? lo : null, anyRange ? hi : null, prefix, priority, data);
    }

    private static BigInteger fit(BigInteger v, int bits, Table.Key k) {
        if (v.signum() < 0 || v.bitLength() > bits) {
            throw new IllegalArgumentException("value " + v.toString(16) + " does not fit key field " + k.name()
                    + " of " + bits + " bits");
        }
        return v;
    }

    private static void put(byte[] dst, Table.Key k, BigInteger v) {
        byte[] b = ActionData.toBytes(v, k.bytes());
        System.arraycopy(b, 0, dst, k.offset(), k.bytes());
    }
}
