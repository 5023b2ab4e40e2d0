package ernic.p4;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * A field list (clone, resubmit and recirculate: the metadata a copy keeps) or a learn list (a digest's fields).
 * {@link #capture} takes the fields' values from a frame; {@link #apply} writes them into another.
 */
final class FieldList {
    final String name;
    final Expr.Field[] fields;
    final String[] fieldNames;

    FieldList(String name, Expr.Field[] fields, String[] fieldNames) {
        this.name = name;
        this.fields = fields;
        this.fieldNames = fieldNames;
    }

    /** The values of the fields, in order: a long for a field of at most 64 bits, the bytes of a wider one. */
    record Values(long[] narrow, byte[][] wide) {
    }

    Values capture(Packet p) {
        long[] n = new long[fields.length];
        byte[][] w = new byte[fields.length][];
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].kind == Expr.Kind.WIDE) {
                w[i] = fields[i].wide(p).clone();
            } else {
                n[i] = fields[i].num(p);
            }
        }
        return new Values(n, w);
    }

    void apply(Packet p, Values v) {
        for (int i = 0; i < fields.length; i++) {
            if (v.wide[i] != null) {
                fields[i].setBytes(p, v.wide[i], v.wide[i].length);
            } else {
                fields[i].set(p, v.narrow[i]);
            }
        }
    }

    /** The values as unsigned integers, for a digest's reader. */
    List<BigInteger> numbers(Values v) {
        List<BigInteger> out = new ArrayList<>(fields.length);
        for (int i = 0; i < fields.length; i++) {
            out.add(v.wide[i] != null ? new BigInteger(1, v.wide[i])
                    : new BigInteger(Long.toUnsignedString(v.narrow[i])));
        }
        return out;
    }
}
