package ernic.p4;

/** The operator nodes of compiled expressions; see {@link Expr} for how ranges keep 64-bit arithmetic exact. */
final class Ops {
    private Ops() {
    }

    enum BinOp { ADD, SUB, MUL, DIV, MOD, SHL, SHR, AND, OR, XOR }

    static final class Bin extends Expr {
        final BinOp op;
        final Expr l;
        final Expr r;
        final boolean logicalShift;

        Bin(BinOp op, Expr l, Expr r, int bits, boolean signed) {
            super(Kind.DATA, bits, signed);
            this.op = op;
            this.l = l;
            this.r = r;
            this.logicalShift = op == BinOp.SHR && !l.exactLong();
        }

        @Override
        long num(Packet p) {
            long a = l.num(p);
            long b = r.num(p);
            return switch (op) {
                case ADD -> a + b;
                case SUB -> a - b;
                case MUL -> a * b;
                case AND -> a & b;
                case OR -> a | b;
                case XOR -> a ^ b;
                case SHL -> b < 0 || b >= 64 ? 0 : a << b;
                case SHR -> logicalShift ? (b < 0 || b >= 64 ? 0 : a >>> b)
                        : (b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b);
                case DIV, MOD -> {
                    if (b == 0) {
                        p.externs.counters.inc(P4Counter.DIVISIONS_BY_ZERO);
                        yield 0;
                    }
                    yield op == BinOp.DIV ? Long.divideUnsigned(a, b) : Long.remainderUnsigned(a, b);
                }
            };
        }
    }

    /** Unary minus and bitwise not. */
    static final class Neg extends Expr {
        final Expr e;
        final boolean bitwise;

        Neg(Expr e, boolean bitwise) {
            super(Kind.DATA, bitwise ? e.signedBits() : e.signedBits() + 1, true);
            this.e = e;
            this.bitwise = bitwise;
        }

        @Override
        long num(Packet p) {
            long v = e.num(p);
            return bitwise ? ~v : -v;
        }
    }

    enum CmpOp { EQ, NE, LT, LE, GT, GE }

    static final class Cmp extends Expr {
        final CmpOp op;
        final Expr l;
        final Expr r;
        final boolean unsigned;

        Cmp(CmpOp op, Expr l, Expr r, boolean unsigned) {
            super(Kind.BOOL);
            this.op = op;
            this.l = l;
            this.r = r;
            this.unsigned = unsigned;
        }

        @Override
        boolean test(Packet p) {
            long a = l.num(p);
            long b = r.num(p);
            int c = unsigned ? Long.compareUnsigned(a, b) : Long.compare(a, b);
            return switch (op) {
                case EQ -> c == 0;
                case NE -> c != 0;
                case LT -> c < 0;
                case LE -> c <= 0;
                case GT -> c > 0;
                case GE -> c >= 0;
            };
        }
    }

    /** == and != where one side is wider than 64 bits. */
    static final class WideCmp extends Expr {
        final Expr l;
        final Expr r;
        final boolean ne;
        private final byte[] lbuf;
        private final byte[] rbuf;

        WideCmp(Expr l, Expr r, boolean ne) {
            super(Kind.BOOL);
            this.l = l;
            this.r = r;
            this.ne = ne;
            this.lbuf = l.kind == Kind.DATA ? new byte[8] : null;
            this.rbuf = r.kind == Kind.DATA ? new byte[8] : null;
        }

        private static byte[] bytes(Expr e, byte[] buf, Packet p) {
            if (buf == null) {
                return e.wide(p);
            }
            Bits.longToBytes(e.num(p), buf, 0, 8);
            return buf;
        }

        @Override
        boolean test(Packet p) {
            return Expr.wideEquals(bytes(l, lbuf, p), bytes(r, rbuf, p)) != ne;
        }
    }

    static final class BoolEq extends Expr {
        final Expr l;
        final Expr r;
        final boolean ne;

        BoolEq(Expr l, Expr r, boolean ne) {
            super(Kind.BOOL);
            this.l = l;
            this.r = r;
            this.ne = ne;
        }

        @Override
        boolean test(Packet p) {
            return (l.test(p) == r.test(p)) != ne;
        }
    }

    static final class Logic extends Expr {
        final Expr l;
        final Expr r;
        final boolean and;

        Logic(Expr l, Expr r, boolean and) {
            super(Kind.BOOL);
            this.l = l;
            this.r = r;
            this.and = and;
        }

        @Override
        boolean test(Packet p) {
            return and ? l.test(p) && r.test(p) : l.test(p) || r.test(p);
        }
    }

    static final class Not extends Expr {
        final Expr e;

        Not(Expr e) {
            super(Kind.BOOL);
            this.e = e;
        }

        @Override
        boolean test(Packet p) {
            return !e.test(p);
        }
    }

    static final class D2B extends Expr {
        final Expr e;

        D2B(Expr e) {
            super(Kind.BOOL);
            this.e = e;
        }

        @Override
        boolean test(Packet p) {
            return e.num(p) != 0;
        }
    }

    static final class B2D extends Expr {
        final Expr e;

        B2D(Expr e) {
            super(Kind.DATA, 1, false);
            this.e = e;
        }

        @Override
        long num(Packet p) {
            return e.test(p) ? 1 : 0;
        }
    }

    /** {@code valid(header)}, also the hidden field {@code $valid$}. */
    static final class Valid extends Expr {
        final Expr h;

        Valid(Expr h, Kind kind) {
            super(kind, 1, false);
            this.h = h;
        }

        @Override
        boolean test(Packet p) {
            return p.phv.valid[h.ref(p)];
        }

        @Override
        long num(Packet p) {
            return test(p) ? 1 : 0;
        }
    }

    static final class ValidUnion extends Expr {
        final Expr u;

        ValidUnion(Expr u) {
            super(Kind.BOOL);
            this.u = u;
        }

        @Override
        boolean test(Packet p) {
            for (int h : p.phv.layout.unionMembers[u.ref(p)]) {
                if (p.phv.valid[h]) {
                    return true;
                }
            }
            return false;
        }
    }

    /** {@code cond ? left : right} over data, booleans or headers. */
    static final class Cond extends Expr {
        final Expr c;
        final Expr l;
        final Expr r;

        Cond(Expr c, Expr l, Expr r, int bits, boolean signed) {
            super(l.kind, bits, signed);
            this.c = c;
            this.l = l;
            this.r = r;
        }

        @Override
        long num(Packet p) {
            return c.test(p) ? l.num(p) : r.num(p);
        }

        @Override
        boolean test(Packet p) {
            return c.test(p) ? l.test(p) : r.test(p);
        }

        @Override
        int ref(Packet p) {
            return c.test(p) ? l.ref(p) : r.ref(p);
        }

        @Override
        byte[] wide(Packet p) {
            return c.test(p) ? l.wide(p) : r.wide(p);
        }
    }

    enum CastOp { TWO_COMP_MOD, SAT_CAST, USAT_CAST }

    /** two_comp_mod, sat_cast and usat_cast of a value to a width. */
    static final class Cast extends Expr {
        final CastOp op;
        final Expr e;
        final Expr width;

        Cast(CastOp op, Expr e, Expr width, int bits) {
            super(Kind.DATA, bits, op != CastOp.USAT_CAST);
            this.op = op;
            this.e = e;
            this.width = width;
        }

        @Override
        long num(Packet p) {
            long v = e.num(p);
            long w = width.num(p);
            if (w <= 0) {
                return 0;
            }
            return switch (op) {
                case TWO_COMP_MOD -> w >= 64 ? v : Bits.signExtend(Bits.truncate(v, (int) w), (int) w);
                case SAT_CAST -> {
                    if (w >= 64) {
                        yield v;
                    }
                    long max = (1L << (w - 1)) - 1;
                    long min = -(1L << (w - 1));
                    yield Math.max(min, Math.min(max, v));
                }
                case USAT_CAST -> {
                    if (v < 0) {
                        yield 0;
                    }
                    yield w >= 63 ? v : Math.min(v, (1L << w) - 1);
                }
            };
        }
    }

    /** last_stack_index and size_stack. */
    static final class StackCount extends Expr {
        final Expr stack;
        final boolean last;

        StackCount(Expr stack, boolean last) {
            super(Kind.DATA, 32, last);
            this.stack = stack;
            this.last = last;
        }

        @Override
        long num(Packet p) {
            int n = p.phv.stackNext[stack.ref(p)];
            return last ? n - 1 : n;
        }
    }
}
