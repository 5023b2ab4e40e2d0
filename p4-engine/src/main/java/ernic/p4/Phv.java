package ernic.p4;

import java.util.Arrays;

/**
 * The packet's header and metadata state, preallocated once per engine and reset per frame: a long per
 * narrow field (the unsigned truncated value), bytes for wide and variable-length fields, a valid bit per
 * header and the next index of every stack.
 */
final class Phv {
    final Layout layout;
    final long[] val;
    final byte[][] wide;
    final int[] varBits;
    final boolean[] valid;
    final int[] stackNext;
    /** The fields of the headers the parser extracted, as extracted (see {@link Packet#parsed}). */
    final long[] parsedVal;
    /** The slots of {@link #wide} that hold bytes (the others are null), so a reset visits only those. */
    private final int[] wideSlots;

    Phv(Layout l) {
        layout = l;
        val = new long[l.slots];
        wide = new byte[l.slots][];
        varBits = new int[l.slots];
        valid = new boolean[l.headers()];
        stackNext = new int[l.stackNames.length];
        parsedVal = new long[l.slots];
        for (int h = 0; h < l.headers(); h++) {
            HeaderType t = l.typeOf[h];
            for (int f = 0; f < t.fields().length; f++) {
                if (t.wide(f)) {
                    wide[l.first[h] + f] = new byte[t.storageBytes(f)];
                }
            }
        }
        int n = 0;
        for (byte[] w : wide) {
            n += w != null ? 1 : 0;
        }
        wideSlots = new int[n];
        for (int i = 0, k = 0; i < wide.length; i++) {
            if (wide[i] != null) {
                wideSlots[k++] = i;
            }
        }
    }

    /** The state a frame starts with: every field zero, only metadata valid, every stack empty. */
    void reset() {
        Arrays.fill(val, 0);
        for (int slot : wideSlots) {
            Arrays.fill(wide[slot], (byte) 0);
            varBits[slot] = 0; // only a variable-length field, which is wide, has bits here
        }
        // Loops, not System.arraycopy and Arrays.fill: a program has a few headers and stacks, too few for their
        // set-up to pay (the arraycopy was a tenth of a pass-through frame's time).
        boolean[] metadata = layout.metadata;
        for (int h = 0; h < valid.length; h++) {
            valid[h] = metadata[h];
        }
        for (int s = 0; s < stackNext.length; s++) {
            stackNext[s] = 0;
        }
    }

    /** This state becomes a copy of {@code o} (a PHV of the same layout): a clone's headers and metadata. */
    void copyFrom(Phv o) {
        System.arraycopy(o.val, 0, val, 0, val.length);
        System.arraycopy(o.varBits, 0, varBits, 0, varBits.length);
        for (int slot : wideSlots) {
            System.arraycopy(o.wide[slot], 0, wide[slot], 0, wide[slot].length);
        }
        System.arraycopy(o.valid, 0, valid, 0, valid.length);
        System.arraycopy(o.stackNext, 0, stackNext, 0, stackNext.length);
    }

    /** Zeroes every metadata header's fields (what a clone, resubmit or recirculation does before its field list). */
    void resetMetadata() {
        for (int h = 0; h < layout.headers(); h++) {
            if (layout.metadata[h]) {
                clearHeader(h);
            }
        }
    }

    /** The bytes header {@code h} takes on the wire now (its fixed fields and its variable-length field's bits). */
    int wireBytes(int h) {
        HeaderType t = layout.typeOf[h];
        int vbits = t.varField() >= 0 ? varBits[layout.first[h] + t.varField()] : 0;
        return (t.fixedBits() + vbits) / 8;
    }

    /** Zeroes the fields of one header (a header made valid starts from zero, as bmv2's add_header does). */
    void clearHeader(int h) {
        int base = layout.first[h];
        for (int f = 0; f < layout.typeOf[h].fields().length; f++) {
            val[base + f] = 0;
            varBits[base + f] = 0;
            if (wide[base + f] != null) {
                Arrays.fill(wide[base + f], (byte) 0);
            }
        }
    }

    /** Makes a header valid or invalid; a header made valid in a union invalidates the union's others. */
    void setValid(int h, boolean v) {
        if (v) {
            int u = layout.unionOf[h];
            if (u >= 0) {
                for (int o : layout.unionMembers[u]) {
                    valid[o] = false;
                }
            }
        }
        valid[h] = v;
    }

    /** Copies header {@code src} (validity and every field) onto header {@code dst} of the same type. */
    void copyHeader(int src, int dst) {
        int s = layout.first[src];
        int d = layout.first[dst];
        int n = layout.typeOf[src].fields().length;
        System.arraycopy(val, s, val, d, n);
        System.arraycopy(varBits, s, varBits, d, n);
        for (int f = 0; f < n; f++) {
            if (wide[s + f] != null) {
                System.arraycopy(wide[s + f], 0, wide[d + f], 0, wide[d + f].length);
            }
        }
        valid[dst] = valid[src];
    }

    /**
     * Writes header {@code h} at bit {@code bit} of {@code out}, as the wire has it; returns the bit after it. A
     * packable header (docs of {@link HeaderType}) starting on a byte goes out eight bytes at a time: its fields
     * are gathered into a long, which is stored whole each time the next field would not fit (the bytes it writes
     * past the header are written over by what follows, or lie past the output's length).
     */
    int emitHeader(int h, byte[] out, int bit) {
        HeaderType t = layout.typeOf[h];
        int base = layout.first[h];
        int pos = bit >> 3;
        if (!t.packable() || (bit & 7) != 0 || pos + t.fixedBits() / 8 + 8 > out.length) {
            for (int f = 0; f < t.fields().length; f++) {
                bit = emitField(t, base + f, f, out, bit);
            }
            return bit;
        }
        int[] widths = t.widths();
        long acc = 0;
        int n = 0; // bits in acc, at its low end
        for (int f = 0; f < widths.length; f++) {
            int w = widths[f];
            if (n + w > 64) {
                Bits.putLong(out, pos, acc << (64 - n));
                pos += n >> 3;
                n &= 7; // at most 7 left, and w is at most 56: they fit
            }
            acc = (acc << w) | (val[base + f] & ((1L << w) - 1));
            n += w;
        }
        if (n > 0) {
            Bits.putLong(out, pos, acc << (64 - n));
        }
        return pos * 8 + n;
    }

    /**
     * Writes field {@code f} (in {@code slot}) of a header of type {@code t} at bit {@code bit} of {@code out}, as
     * the wire has it: a varbit field its current bits, a wide one its low {@code width} bits, a narrow one its
     * value. Returns the bit after it.
     */
    int emitField(HeaderType t, int slot, int f, byte[] out, int bit) {
        if (f == t.varField()) {
            int n = varBits[slot];
            Bits.copy(wide[slot], 0, out, bit, n);
            return bit + n;
        }
        int w = t.widths()[f];
        if (t.wide(f)) {
            byte[] src = wide[slot];
            Bits.copy(src, src.length * 8 - w, out, bit, w);
        } else {
            Bits.write(out, bit, w, val[slot]);
        }
        return bit + w;
    }
}
