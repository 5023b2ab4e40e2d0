package ernic.p4;

/**
 * A header type: named fields of fixed bit widths, at most one of them variable-length ({@code "*"}).
 * Fields wider than 64 bits and the variable-length field are held as bytes; the others as a long.
 * {@code fixedBits} is the sum of the fixed-width fields' widths.
 */
record HeaderType(String name, String[] fields, int[] widths, boolean[] signed, int varField, int maxBytes,
                  int fixedBits) {
    static final int NARROW = 64;

    /** A header type; {@code fixedBits}, the bits of its fixed-width fields, is worked out once here. */
    HeaderType(String name, String[] fields, int[] widths, boolean[] signed, int varField, int maxBytes) {
        this(name, fields, widths, signed, varField, maxBytes, fixedBits(widths, varField));
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
