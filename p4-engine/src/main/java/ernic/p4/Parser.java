package ernic.p4;

import java.util.ArrayList;
import java.util.List;

/** A compiled parser: its states, their operations, transition keys and transitions. */
final class Parser {
    /** The parser's error values (from the program's {@code errors}, or p4c's core numbering). */
    record Errors(int noError, int packetTooShort, int noMatch, int stackOutOfBounds, int headerTooShort,
                  int timeout, int invalidArgument) {
    }

    /** Parse states one frame may visit: a program looping without consuming ends with ParserTimeout. */
    static final int MAX_STATES = 4096;

    interface Op {
        /** Runs the operation; returns false after setting {@link Run#error}. */
        boolean run(Packet p, Run r);
    }

    /** The outcome of one parse. */
    static final class Run {
        int error;
    }

    static final class State {
        final String name;
        Op[] ops;
        Expr[] key;
        int[] keyBytes;
        byte[] keyBuf;
        Transition[] transitions;

        State(String name) {
            this.name = name;
        }
    }

    record Transition(byte[] value, byte[] mask, VsetUse vset, State next, boolean isDefault) {
    }

    /**
     * A parse value set: values the control plane adds (pvs_add), kept as given (its compressed width) and spread,
     * for each transition that uses it, over that transition's key fields, as bmv2 keeps one copy per use. So one
     * set may serve keys of different layouts.
     */
    static final class ParseVset {
        final String name;
        final int compressedBits;
        final int maxSize;
        final List<java.math.BigInteger> values = new ArrayList<>();
        final List<VsetUse> uses = new ArrayList<>();

        ParseVset(String name, int compressedBits, int maxSize) {
            this.name = name;
            this.compressedBits = compressedBits;
            this.maxSize = maxSize;
        }

        void add(java.math.BigInteger v) {
            values.add(v);
            for (VsetUse u : uses) {
                u.values.add(u.expand(v));
            }
        }

        void clear() {
            values.clear();
            for (VsetUse u : uses) {
                u.values.clear();
            }
        }
    }

    /** One transition's view of a parse value set: the values laid out as its key (each field byte-padded). */
    static final class VsetUse {
        final int[] partWidths;
        final List<byte[]> values = new ArrayList<>();

        VsetUse(int[] partWidths) {
            this.partWidths = partWidths;
        }

        /** A compressed value spread over the byte-padded key fields, the last field taking the low bits. */
        byte[] expand(java.math.BigInteger v) {
            int total = 0;
            for (int w : partWidths) {
                total += (w + 7) / 8;
            }
            byte[] out = new byte[total];
            int off = total;
            for (int i = partWidths.length - 1; i >= 0; i--) {
                int w = partWidths[i];
                int n = (w + 7) / 8;
                off -= n;
                java.math.BigInteger part = v.and(java.math.BigInteger.ONE.shiftLeft(w).subtract(java.math.BigInteger.ONE));
                System.arraycopy(ActionData.toBytes(part, n), 0, out, off, n);
                v = v.shiftRight(w);
            }
            return out;
        }
    }

    final String name;
    final Errors errors;
    State init;

    Parser(String name, Errors errors) {
        this.name = name;
        this.errors = errors;
    }

    /** Parses the frame in {@code p}; returns the parser error value (errors.noError on success). */
    int parse(Packet p, Run r) {
        r.error = errors.noError;
        State s = init;
        int visits = 0;
        while (s != null) {
            if (++visits > MAX_STATES) {
                r.error = errors.timeout;
                return r.error;
            }
            for (Op op : s.ops) {
                // Most operations are extracts: a type check first makes this call one the JIT can inline.
                if (!(op instanceof Extract x ? x.run(p, r) : op.run(p, r))) {
                    return r.error;
                }
            }
            if (s.transitions.length == 0) {
                return r.error;
            }
            if (!buildKey(s, p, r)) {
                return r.error;
            }
            Transition t = select(s);
            if (t == null) {
                r.error = errors.noMatch;
                return r.error;
            }
            s = t.next;
        }
        return r.error;
    }

    private boolean buildKey(State s, Packet p, Run r) {
        int off = 0;
        for (int i = 0; i < s.key.length; i++) {
            Expr k = s.key[i];
            int n = s.keyBytes[i];
            if (k instanceof Expr.Lookahead la && !la.available(p)) {
                r.error = errors.packetTooShort;
                return false;
            }
            if (k.kind == Expr.Kind.WIDE) {
                byte[] w = k.wide(p);
                System.arraycopy(w, w.length - n, s.keyBuf, off, n);
            } else {
                Bits.longToBytes(k.num(p), s.keyBuf, off, n);
            }
            off += n;
        }
        return true;
    }

    private static Transition select(State s) {
        byte[] key = s.keyBuf;
        for (Transition t : s.transitions) {
            if (t.isDefault) {
                return t;
            }
            if (t.vset != null) {
                for (byte[] v : t.vset.values) {
                    if (matches(key, v, t.mask)) {
                        return t;
                    }
                }
            } else if (matches(key, t.value, t.mask)) {
                return t;
            }
        }
        return null;
    }

    private static boolean matches(byte[] key, byte[] value, byte[] mask) {
        for (int i = 0; i < key.length; i++) {
            int m = mask == null ? 0xff : mask[i] & 0xff;
            if (((key[i] ^ value[i]) & m) != 0) {
                return false;
            }
        }
        return true;
    }

    /** extract / extract_VL into a header, or into the next element of a stack. */
    static final class Extract implements Op {
        final int header;
        final int stack;
        final Expr varBits;
        final Errors errors;
        /**
         * A header named (not a stack's next element) of a packable type, worked out once: its type, first slot, field
         * widths and bytes, and whether it is in a union; the extract every frame of most programs runs.
         */
        private final HeaderType fixedType;
        private final int fixedBase;
        private final int[] fixedWidths;
        private final int fixedBytes;
        private final boolean fixedInUnion;

        Extract(int header, int stack, Expr varBits, Errors errors, Layout layout) {
            this.header = header;
            this.stack = stack;
            this.varBits = varBits;
            this.errors = errors;
            HeaderType t = stack < 0 ? layout.typeOf[header] : null;
            boolean fixed = t != null && t.packable() && varBits == null;
            this.fixedType = fixed ? t : null;
            this.fixedBase = fixed ? layout.first[header] : -1;
            this.fixedWidths = fixed ? t.widths() : null;
            this.fixedBytes = fixed ? t.fixedBits() / 8 : 0;
            this.fixedInUnion = fixed && layout.unionOf[header] >= 0;
        }

        @Override
        public boolean run(Packet p, Run r) {
            // Small, so that the parser's loop can inline it; each path is a method of its own.
            return fixedType != null ? runFixed(p, r) : runAny(p, r);
        }

        private boolean runAny(Packet p, Run r) {
            Phv phv = p.phv;
            int h = header;
            if (stack >= 0) {
                int next = phv.stackNext[stack];
                int[] m = phv.layout.stackMembers[stack];
                if (next >= m.length) {
                    r.error = errors.stackOutOfBounds;
                    return false;
                }
                h = m[next];
            }
            HeaderType t = phv.layout.typeOf[h];
            long vbits = 0;
            if (varBits != null) {
                vbits = varBits.num(p);
                if (vbits < 0 || (vbits & 7) != 0) {
                    r.error = errors.invalidArgument;
                    return false;
                }
                if (vbits > t.storageBytes(t.varField()) * 8L) {
                    r.error = errors.headerTooShort;
                    return false;
                }
            }
            long bit = (long) p.cursor * 8;
            if (bit + t.fixedBits() + vbits > (long) p.inLen * 8) {
                r.error = errors.packetTooShort;
                return false;
            }
            int b = (int) bit;
            p.need((int) ((bit + t.fixedBits() + vbits + 7) >> 3));
            int base = phv.layout.first[h];
            notePacked(p, h, t, b);
            if (t.packable()) {
                // Fixed fields of at most 56 bits (most headers): no variable-length or wide field to look for;
                // the values are also kept as parsed (Packet.parsed).
                int[] widths = t.widths();
                for (int f = 0; f < widths.length; f++) {
                    long v = Bits.read(p.in, b, widths[f]);
                    phv.val[base + f] = v;
                    phv.parsedVal[base + f] = v;
                    b += widths[f];
                }
            } else {
                for (int f = 0; f < t.fields().length; f++) {
                    int slot = base + f;
                    if (f == t.varField()) {
                        java.util.Arrays.fill(phv.wide[slot], (byte) 0);
                        Bits.copy(p.in, b, phv.wide[slot], 0, (int) vbits);
                        phv.varBits[slot] = (int) vbits;
                        b += (int) vbits;
                        continue;
                    }
                    int w = t.widths()[f];
                    if (t.wide(f)) {
                        byte[] dst = phv.wide[slot];
                        java.util.Arrays.fill(dst, (byte) 0);
                        Bits.copy(p.in, b, dst, dst.length * 8 - w, w);
                    } else {
                        phv.val[slot] = Bits.read(p.in, b, w);
                    }
                    b += w;
                }
            }
            phv.setValid(h, true);
            if (stack >= 0) {
                for (int sib : phv.layout.siblings[stack]) {
                    phv.stackNext[sib]++;
                }
            }
            p.cursor = b >> 3;
            if (p.asParsed) {
                p.parsedEnd = p.cursor;
            }
            return true;
        }

        /** {@link #run} for a named header of a packable type: the same steps, with what they look up known. */
        private boolean runFixed(Packet p, Run r) {
            int at = p.cursor;
            int end = at + fixedBytes;
            if (end > p.inLen) {
                r.error = errors.packetTooShort;
                return false;
            }
            p.need(end);
            Phv phv = p.phv;
            notePacked(p, header, fixedType, at * 8);
            long[] val = phv.val;
            long[] parsed = phv.parsedVal;
            byte[] in = p.in;
            int b = at * 8;
            for (int f = 0, slot = fixedBase; f < fixedWidths.length; f++, slot++) {
                int w = fixedWidths[f];
                long v = Bits.read(in, b, w);
                val[slot] = v;
                parsed[slot] = v;
                b += w;
            }
            if (fixedInUnion) {
                phv.setValid(header, true);
            } else {
                phv.valid[header] = true;
            }
            p.cursor = end;
            if (p.asParsed) {
                p.parsedEnd = end;
            }
            return true;
        }

        /** Keeps {@link Packet#parsed} (before the header is extracted): this one, or the end of the list. */
        private static void notePacked(Packet p, int h, HeaderType t, int bit) {
            if (p.asParsed && t.packable() && !p.phv.valid[h] && bit == p.parsedEnd * 8
                    && p.parsedCount < Packet.MAX_PARSED) {
                p.parsed[p.parsedCount++] = h;
            } else {
                p.asParsed = false;
            }
        }
    }

    record Set(Expr.Field dst, Expr src, Errors errors) implements Op {
        @Override
        public boolean run(Packet p, Run r) {
            if (src instanceof Expr.Lookahead la && !la.available(p)) {
                r.error = errors.packetTooShort;
                return false;
            }
            if (src.kind == Expr.Kind.WIDE) {
                byte[] w = src.wide(p);
                dst.setBytes(p, w, w.length);
            } else {
                dst.set(p, src.num(p));
            }
            return true;
        }
    }

    record Verify(Expr cond, Expr error) implements Op {
        @Override
        public boolean run(Packet p, Run r) {
            if (cond.test(p)) {
                return true;
            }
            r.error = (int) error.num(p);
            return false;
        }
    }

    /** advance (bits) and the deprecated shift (bytes). */
    record Advance(Expr amount, int unit, Errors errors) implements Op {
        @Override
        public boolean run(Packet p, Run r) {
            long bits = amount.num(p) * unit;
            if (bits < 0 || (bits & 7) != 0) {
                r.error = errors.invalidArgument;
                return false;
            }
            if ((long) p.cursor * 8 + bits > (long) p.inLen * 8) {
                r.error = errors.packetTooShort;
                return false;
            }
            p.cursor += (int) (bits >> 3);
            if (bits != 0) {
                p.asParsed = false; // the bytes advanced over are not emitted
            }
            return true;
        }
    }

    record Primitive(Prim prim) implements Op {
        @Override
        public boolean run(Packet p, Run r) {
            prim.exec(p, 0);
            return true;
        }
    }

    /** The deparser: valid headers in order, then the payload the parser did not consume. */
    static final class Deparser {
        /**
         * True when the valid headers in deparser order are exactly those the parser extracted end to end from the
         * first byte up to the payload, in that order, with the values they were extracted with.
         */
        boolean unchanged(Packet p) {
            if (!p.asParsed || p.parsedEnd != p.cursor) {
                return false;
            }
            boolean[] valid = p.phv.valid;
            long[] val = p.phv.val;
            long[] parsedVal = p.phv.parsedVal;
            int k = 0;
            for (int i = 0; i < order.length; i++) {
                int h = order[i];
                if (!valid[h]) {
                    continue;
                }
                if (k == p.parsedCount || p.parsed[k] != h) {
                    return false;
                }
                k++;
                for (int s = orderFirst[i], end = s + orderFields[i]; s < end; s++) {
                    if (val[s] != parsedVal[s]) {
                        return false;
                    }
                }
            }
            return k == p.parsedCount;
        }

        final String name;
        final int[] order;
        /** The first slot and the number of fields of each header of {@link #order}, looked up once. */
        private final int[] orderFirst;
        private final int[] orderFields;
        /** Primitives bmv2 runs in the deparser (any action primitive), before the headers are emitted. */
        Prim[] prims = new Prim[0];

        Deparser(String name, int[] order, Layout layout) {
            this.name = name;
            this.order = order;
            this.orderFirst = new int[order.length];
            this.orderFields = new int[order.length];
            for (int i = 0; i < order.length; i++) {
                orderFirst[i] = layout.first[order[i]];
                orderFields[i] = layout.typeOf[order[i]].fields().length;
            }
        }

        /** Writes the headers into {@code p.out} and notes where the payload is; false when the frame would not fit. */
        boolean deparse(Packet p) {
            if (prims.length != 0) {
                Prim.runAll(prims, p);
                p.exit = false;
            }
            if (unchanged(p)) {
                // The headers to emit are those parsed, unchanged: the output is the frame as it is in the input.
                p.headLen = 0;
                p.payloadAt = 0;
                p.outLen = p.inLen;
                p.payloadOut = p.inLen == 0;
                return true;
            }
            Phv phv = p.phv;
            int bit = 0;
            byte[] out = p.out;
            long room = (long) out.length * 8;
            for (int h : order) {
                if (!phv.valid[h]) {
                    continue;
                }
                HeaderType t = phv.layout.typeOf[h];
                int base = phv.layout.first[h];
                int vbits = t.varField() >= 0 ? phv.varBits[base + t.varField()] : 0;
                if (bit + (long) t.fixedBits() + vbits > room) {
                    return false;
                }
                bit = phv.emitHeader(h, out, bit);
            }
            int pos = bit >> 3;
            int payload = p.inLen - p.cursor;
            if (pos + payload > out.length) {
                return false;
            }
            // The payload stays in the input until the whole output is asked for (Packet.completeOutput).
            p.headLen = pos;
            p.payloadAt = p.cursor;
            p.outLen = pos + payload;
            p.payloadOut = payload == 0;
            return true;
        }
    }
}
