package ernic.p4;

/**
 * A header type: named fields of fixed bit widths, at most one of them variable-length ({@code "*"}).
 * Fields wider than 64 bits and the variable-length field are held as bytes; the others as a long.
 * {@code fixedBits} is the sum of the fixed-width fields' widths; {@code packable} says every field is at most
 * {@value #PACKABLE} bits and none is variable-length.
 */
record HeaderType(String name, String[] fields, int[] widths, boolean[] signed, int varField, int maxBytes,
                  int fixedBits, boolean packable) {
    static final int NARROW = 64;
    /** The widest field {@link Phv#emitHeader} packs into a long with what is left of the field before it. */
    static final int PACKABLE = 56;

    /** A header type; {@code fixedBits} and {@code packable} are worked out once here. */
    HeaderType(String name, String[] fields, int[] widths, boolean[] signed, int varField, int maxBytes) {
        this(name, fields, widths, signed, varField, maxBytes, fixedBits(widths, varField),
                varField < 0 && java.util.Arrays.stream(widths).allMatch(w -> w <= PACKABLE));
    }

    int fieldIndex(String field) {
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].equals(field)) {
                return i;
            }
        }
        return -1;
    }

    private static int fixedBits(int[] widths, int varField) {
        int bits = 0;
        for (int i = 0; i < widths.length; i++) {
            if (i != varField) {
                bits += widths[i];
            }
        }
        return bits;
    }

    boolean wide(int f) {
        return f == varField || widths[f] > NARROW;
    }

    /** Bytes of storage for a field held as bytes: its width, or the most a variable-length field can hold. */
    int storageBytes(int f) {
        return f == varField ? Math.max(0, maxBytes - fixedBits() / 8) : (widths[f] + 7) / 8;
    }
}
