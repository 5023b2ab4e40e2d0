package ernic.p4;

/**
 * A compiled bmv2 expression. bmv2 computes with unbounded integers and truncates on assignment; the
 * engine computes in 64-bit longs and proves at load that this gives the same result: every DATA node
 * carries the range its value can take (unsigned {@code [0, 2^bits)} or signed two's complement of
 * {@code bits}), and an operation whose result depends on more than the value mod 2^64 (comparisons,
 * right shifts, d2b, casts, indexes) is only built over operands whose range a long holds exactly.
 * The ring operations (+ - * << & | ^ ~) are exact mod 2^64, which is all a field of at most 64 bits keeps.
 */
abstract class Expr {
    enum Kind { DATA, BOOL, HEADER, STACK, UNION, WIDE }

    /** The width standing for "unbounded" (a shift by a runtime amount). */
    static final int UNBOUNDED = 1 << 20;

    final Kind kind;
    /** DATA: the value's range, {@link #signed} two's complement of this many bits, or unsigned. */
    final int bits;
    final boolean signed;

    Expr(Kind kind) {
        this(kind, 0, false);
    }

    Expr(Kind kind, int bits, boolean signed) {
        this.kind = kind;
        this.bits = Math.min(bits, UNBOUNDED);
        this.signed = signed;
    }

    long num(Packet p) {
        throw new IllegalStateException(kind + " expression read as data");
    }

    boolean test(Packet p) {
        throw new IllegalStateException(kind + " expression read as a boolean");
    }

    /** HEADER: the header instance index. STACK: the stack index. UNION: the union index. */
    int ref(Packet p) {
        throw new IllegalStateException(kind + " expression read as a reference");
    }

    /** WIDE: the value's big-endian bytes (an array owned by the engine, not to be kept). */
    byte[] wide(Packet p) {
        throw new IllegalStateException(kind + " expression read as wide data");
    }

    /** True when a long holds the exact value (signed compare is right). */
    final boolean exactLong() {
        return signed ? bits <= 64 : bits <= 63;
    }

    /** True when the value is non-negative and fits 64 bits (unsigned compare is right). */
    final boolean exactUnsigned() {
        return !signed && bits <= 64;
    }

    /** Bits needed to hold the value as signed. */
    final int signedBits() {
        return signed ? bits : bits + 1;
    }

    // ---- leaves ----

    static final class Const extends Expr {
        final long v;

        Const(long v, int bits, boolean signed) {
            super(Kind.DATA, bits, signed);
            this.v = v;
        }

        static Const of(long v) {
            return v >= 0 ? new Const(v, 64 - Long.numberOfLeadingZeros(v), false)
                    : new Const(v, 65 - Long.numberOfLeadingZeros(~v), true);
        }

        @Override
        long num(Packet p) {
            return v;
        }
    }

    static final class WideConst extends Expr {
        final byte[] v;

        WideConst(byte[] v) {
            super(Kind.WIDE);
            this.v = v;
        }

        @Override
        byte[] wide(Packet p) {
            return v;
        }
    }

    static final class BoolConst extends Expr {
        final boolean v;

        BoolConst(boolean v) {
            super(Kind.BOOL);
            this.v = v;
        }

        @Override
        boolean test(Packet p) {
            return v;
        }
    }

    /** Action data of the entry being executed ({@code runtime_data} / {@code local}). */
    static final class Arg extends Expr {
        final int index;

        Arg(int index, int width) {
            super(width > HeaderType.NARROW ? Kind.WIDE : Kind.DATA, width, false);
            this.index = index;
        }

        @Override
        long num(Packet p) {
            return p.args[index];
        }

        @Override
        byte[] wide(Packet p) {
            return p.wideArgs[index];
        }
    }

    /** A reference to a header instance (fixed, or resolved at run time). */
    abstract static class HeaderExpr extends Expr {
        final HeaderType type;

        HeaderExpr(HeaderType type) {
            super(Kind.HEADER);
            this.type = type;
        }
    }

    static final class HeaderRef extends HeaderExpr {
        final int h;
        /** The slot of the header's first field: a field of a named header has a slot known at load. */
        final int first;

        HeaderRef(Layout layout, int h) {
            super(layout.typeOf[h]);
            this.h = h;
            this.first = layout.first[h];
        }

        @Override
        int ref(Packet p) {
            return h;
        }
    }

    /** {@code stack[i]}; an index out of bounds lands on the stack's hidden scratch header. */
    static final class StackElem extends HeaderExpr {
        final Expr stack;
        final Expr index;

        StackElem(Expr stack, Expr index, HeaderType type) {
            super(type);
            this.stack = stack;
            this.index = index;
        }

        @Override
        int ref(Packet p) {
            Layout l = p.phv.layout;
            int s = stack.ref(p);
            long i = index.num(p);
            int[] m = l.stackMembers[s];
            return p.inBounds(i, m.length) ? m[(int) i] : l.stackScratch[s];
        }
    }

    /** The last extracted element of a stack ({@code stack.last}, {@code stack_field}). */
    static final class StackLast extends HeaderExpr {
        final int s;

        StackLast(int s, HeaderType type) {
            super(type);
            this.s = s;
        }

        @Override
        int ref(Packet p) {
            int n = p.phv.stackNext[s];
            Layout l = p.phv.layout;
            if (n == 0) {
                p.externs.counters.inc(P4Counter.OUT_OF_BOUNDS);
                return l.stackScratch[s];
            }
            return l.stackMembers[s][n - 1];
        }
    }

    static final class Ref extends Expr {
        final int index;

        Ref(Kind kind, int index) {
            super(kind);
            this.index = index;
        }

        @Override
        int ref(Packet p) {
            return index;
        }
    }

    /** A union member by position, where the union itself may be resolved at run time. */
    static final class UnionMember extends HeaderExpr {
        final Expr union;
        final int member;

        UnionMember(Expr union, int member, HeaderType type) {
            super(type);
            this.union = union;
            this.member = member;
        }

        @Override
        int ref(Packet p) {
            return p.phv.layout.unionMembers[union.ref(p)][member];
        }
    }

    /**
     * A header field: an lvalue. Narrow fields (at most 64 bits) are DATA, wide and variable-length ones WIDE.
     * The value is stored truncated and unsigned; a signed field reads sign-extended.
     */
    static final class Field extends Expr {
        final HeaderExpr header;
        final int field;
        final int width;
        final boolean var;
        /** The slot when the header is named (most fields: no lookup per access), else -1. */
        private final int fixedSlot;

        Field(HeaderExpr header, int field) {
            super(header.type.wide(field) ? Kind.WIDE : Kind.DATA, header.type.widths()[field],
                    header.type.signed()[field]);
            this.header = header;
            this.field = field;
            this.width = header.type.widths()[field];
            this.var = header.type.varField() == field;
            this.fixedSlot = header instanceof HeaderRef r ? r.first + field : -1;
        }

        int slot(Packet p) {
            return fixedSlot >= 0 ? fixedSlot : p.phv.layout.first[header.ref(p)] + field;
        }

        /** The slot when the header is named, or -1 when a stack index picks it at run time. */
        int fixedSlot() {
            return fixedSlot;
        }

        @Override
        long num(Packet p) {
            long v = p.phv.val[slot(p)];
            return signed ? Bits.signExtend(v, width) : v;
        }

        @Override
        byte[] wide(Packet p) {
            return p.phv.wide[slot(p)];
        }

        void set(Packet p, long v) {
            int s = slot(p);
            if (kind == Kind.WIDE) {
                byte[] w = p.phv.wide[s];
                Bits.longToBytes(v, w, 0, w.length);
                maskTop(w);
            } else {
                p.phv.val[s] = Bits.truncate(v, width);
            }
        }

        /** Assigns big-endian bytes, right-aligned: truncated or zero-extended to the field's width. */
        void setBytes(Packet p, byte[] src, int srcLen) {
            int s = slot(p);
            if (kind == Kind.WIDE) {
                byte[] w = p.phv.wide[s];
                copyRightAligned(src, srcLen, w);
                maskTop(w);
            } else {
                p.phv.val[s] = Bits.truncate(Bits.bytesToLong(src, 0, srcLen), width);
            }
        }

        private void maskTop(byte[] w) {
            int extra = w.length * 8 - width;
            if (extra > 0 && !var) {
                w[0] &= (byte) (0xff >>> extra);
            }
        }
    }

    static void copyRightAligned(byte[] src, int srcLen, byte[] dst) {
        int n = Math.min(srcLen, dst.length);
        java.util.Arrays.fill(dst, 0, dst.length - n, (byte) 0);
        System.arraycopy(src, srcLen - n, dst, dst.length - n, n);
    }

    /** Right-aligned big-endian equality of two byte strings of possibly different lengths. */
    static boolean wideEquals(byte[] a, byte[] b) {
        int n = Math.max(a.length, b.length);
        for (int i = 0; i < n; i++) {
            int x = i < n - a.length ? 0 : a[i - (n - a.length)];
            int y = i < n - b.length ? 0 : b[i - (n - b.length)];
            if (x != y) {
                return false;
            }
        }
        return true;
    }

    /** {@code lookahead<bit<W>>()} in a parser: bits after the cursor, not consumed. */
    static final class Lookahead extends Expr {
        final int offset;
        final int width;

        Lookahead(int offset, int width) {
            super(Kind.DATA, width, false);
            this.offset = offset;
            this.width = width;
        }

        /** True when the frame has the bits; the parser checks this before reading. */
        boolean available(Packet p) {
            return (long) p.cursor * 8 + offset + width <= (long) p.inLen * 8;
        }

        @Override
        long num(Packet p) {
            if (!available(p)) {
                return 0;
            }
            p.need((p.cursor * 8 + offset + width + 7) >> 3);
            return Bits.read(p.in, p.cursor * 8 + offset, width);
        }
    }

    /** A register cell read inside an expression ({@code "type": "register"}). */
    static final class RegisterRead extends Expr {
        final int reg;
        final Expr index;

        RegisterRead(int reg, int width, Expr index) {
            super(Kind.DATA, width, false);
            this.reg = reg;
            this.index = index;
        }

        @Override
        long num(Packet p) {
            long[] r = p.externs.registers[reg];
            long i = index.num(p);
            p.externs.counters.inc(P4Counter.REGISTER_READS);
            return p.inBounds(i, r.length) ? r[(int) i] : 0;
        }
    }
}
