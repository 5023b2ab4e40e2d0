package ernic.p4;

/**
 * A header type: named fields of fixed bit widths, at most one of them variable-length ({@code "*"}).
 * Fields wider than 64 bits and the variable-length field are held as bytes; the others as a long.
 */
record HeaderType(String name, String[] fields, int[] widths, boolean[] signed, int varField, int maxBytes) {
    static final int NARROW = 64;

    int fieldIndex(String field) {
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].equals(field)) {
                return i;
            }
        }
        return -1;
    }

    /** Bits of the fixed-width fields. */
    int fixedBits() {
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
