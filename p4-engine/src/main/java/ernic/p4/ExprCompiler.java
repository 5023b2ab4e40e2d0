package ernic.p4;

import ernic.p4.Expr.Kind;
import ernic.p4.Ops.BinOp;
import ernic.p4.Ops.CastOp;
import ernic.p4.Ops.CmpOp;

import java.math.BigInteger;

/**
 * Turns bmv2 type-value objects and expressions into {@link Expr} trees, checking kinds and ranges at load
 * so nothing is decided per frame. {@code argWidths} are the action's runtime_data widths (null outside
 * an action); {@code parser} allows lookahead.
 */
final class ExprCompiler {
    final Layout layout;
    final Externs externs;
    final int[] argWidths;
    final boolean parser;

    ExprCompiler(Layout layout, Externs externs, int[] argWidths, boolean parser) {
        this.layout = layout;
        this.externs = externs;
        this.argWidths = argWidths;
        this.parser = parser;
    }

    ExprCompiler forAction(int[] widths) {
        return new ExprCompiler(layout, externs, widths, parser);
    }

    /** A type-value object of any kind. */
    Expr expr(J tv) {
        String type = tv.str("type");
        J v = tv.get("value");
        return switch (type) {
            case "hexstr" -> constant(v.hex(), v);
            case "bool" -> new Expr.BoolConst(v.bool());
            case "field" -> field(v);
            case "header" -> header(v);
            case "header_stack" -> new Expr.Ref(Kind.STACK, stack(v));
            case "header_union" -> new Expr.Ref(Kind.UNION, union(v));
            case "stack_field" -> {
                int s = stack(v.at(0));
                HeaderType t = layout.typeOf[layout.stackMembers[s][0]];
                yield fieldOf(new Expr.StackLast(s, t), v.at(1));
            }
            case "union_stack_field" -> {
                int s = unionStackMember(v);
                HeaderType t = layout.typeOf[layout.stackMembers[s][0]];
                yield fieldOf(new Expr.StackLast(s, t), v.at(2));
            }
            case "runtime_data", "local" -> arg(v);
            case "lookahead" -> {
                if (!parser) {
                    throw tv.unsupported("lookahead outside a parser");
                }
                int w = v.at(1).integer();
                if (w < 1 || w > HeaderType.NARROW) {
                    throw v.unsupported("lookahead of " + w + " bits (1 to 64 are supported)");
                }
                yield new Expr.Lookahead(v.at(0).integer(), w);
            }
            case "register" -> {
                int r = register(v.at(0));
                Expr idx = data(expr(v.at(1)), v.at(1));
                requireExact(idx, "register index", v.at(1));
                yield new Expr.RegisterRead(r, externs.registerWidths[r], idx);
            }
            case "expression" -> v.has("op") ? op(v) : expr(v);
            default -> throw tv.get("type").unsupported("operand type '" + type + "'");
        };
    }

    Expr constant(BigInteger b, J where) {
        if (b.bitLength() <= 63) {
            return Expr.Const.of(b.longValue());
        }
        if (b.signum() < 0) {
            throw where.unsupported("negative constant wider than 64 bits");
        }
        byte[] raw = b.toByteArray();
        int n = (b.bitLength() + 7) / 8;
        byte[] v = new byte[n];
        System.arraycopy(raw, raw.length - n, v, 0, n);
        if (b.bitLength() == 64) {
            return new Expr.Const(b.longValue(), 64, false);
        }
        return new Expr.WideConst(v);
    }

    Expr arg(J v) {
        if (argWidths == null) {
            throw v.unsupported("runtime data outside an action");
        }
        int i = v.integer();
        if (i < 0 || i >= argWidths.length) {
            throw v.malformed("runtime data index " + i + " out of the action's " + argWidths.length + " parameters");
        }
        return new Expr.Arg(i, argWidths[i]);
    }

    Expr field(J v) {
        String hname = v.at(0).text();
        String fname = v.at(1).text();
        int h = declared(layout.header(hname), v, "header instance", hname);
        Expr.HeaderRef ref = new Expr.HeaderRef(layout, h);
        if (fname.equals("$valid$")) {
            return new Ops.Valid(ref, Kind.DATA);
        }
        return fieldOf(ref, v.at(1));
    }

    Expr.Field fieldOf(Expr.HeaderExpr header, J fname) {
        int f = header.type.fieldIndex(fname.text());
        if (f < 0) {
            throw fname.malformed("header type '" + header.type.name() + "' has no field '" + fname.text() + "'");
        }
        return new Expr.Field(header, f);
    }

    /** A field lvalue: a field reference or an expression that yields one. */
    Expr.Field lvalue(J tv) {
        Expr e = expr(tv);
        if (e instanceof Expr.Field f) {
            return f;
        }
        throw tv.unsupported("assignment to something that is not a header field");
    }

    Expr.HeaderRef header(J v) {
        int h = declared(layout.header(v.text()), v, "header instance", v.text());
        return new Expr.HeaderRef(layout, h);
    }

    int stack(J v) {
        return declared(layout.stack(v.text()), v, "header stack", v.text());
    }

    /** [union stack, member]: the header stack that holds that member of every element of the union stack. */
    int unionStackMember(J v) {
        var members = layout.unionStacks.get(v.at(0).text());
        if (members == null) {
            throw v.at(0).malformed("no header union stack '" + v.at(0).text() + "'");
        }
        Integer s = members.get(v.at(1).text());
        if (s == null) {
            throw v.at(1).malformed("header union stack " + v.at(0).text() + " has no member '" + v.at(1).text() + "'");
        }
        return s;
    }

    int union(J v) {
        return declared(layout.union(v.text()), v, "header union", v.text());
    }

    int register(J v) {
        return declared(externs.register(v.text()), v, "register array", v.text());
    }

    /** {@code index}, where the program declares the {@code what} called {@code name}; below 0: it does not. */
    private static int declared(int index, J where, String what, String name) {
        if (index < 0) {
            throw where.malformed("no " + what + " '" + name + "'");
        }
        return index;
    }

    Expr data(Expr e, J where) {
        if (e.kind != Kind.DATA) {
            throw where.unsupported(e.kind == Kind.BOOL ? "a boolean where data is expected (bmv2 needs b2d)"
                    : e.kind == Kind.WIDE ? "a value wider than 64 bits in arithmetic" : e.kind + " where data is expected");
        }
        return e;
    }

    Expr bool(Expr e, J where) {
        if (e.kind != Kind.BOOL) {
            throw where.unsupported(e.kind + " where a boolean is expected (bmv2 needs d2b)");
        }
        return e;
    }

    static void requireExact(Expr e, String use, J where) {
        if (!e.exactLong() && !e.exactUnsigned()) {
            throw where.unsupported(use + " of an intermediate value that can exceed 64 bits");
        }
    }

    private Expr op(J v) {
        String op = v.str("op");
        J lj = v.opt("left");
        J rj = v.opt("right");
        switch (op) {
            case "access_field": {
                Expr h = expr(lj);
                if (!(h instanceof Expr.HeaderExpr he)) {
                    throw lj.unsupported("access_field on something that is not a header");
                }
                int f = rj.integer();
                if (f < 0 || f >= he.type.fields().length) {
                    throw rj.malformed("field offset " + f + " out of header type '" + he.type.name() + "'");
                }
                return new Expr.Field(he, f);
            }
            case "access_union_header": {
                Expr u = expr(lj);
                if (u.kind != Kind.UNION || !(u instanceof Expr.Ref ur)) {
                    throw lj.unsupported("access_union_header on something that is not a header union");
                }
                int m = rj.integer();
                int[] members = layout.unionMembers[ur.index];
                if (m < 0 || m >= members.length) {
                    throw rj.malformed("union member offset " + m + " out of range");
                }
                return new Expr.UnionMember(u, m, layout.typeOf[members[m]]);
            }
            case "dereference_header_stack": {
                Expr s = expr(lj);
                if (s.kind != Kind.STACK) {
                    throw lj.unsupported("dereference_header_stack of something that is not a header stack");
                }
                Expr i = data(expr(rj), rj);
                requireExact(i, "stack index", rj);
                int sidx = ((Expr.Ref) s).index;
                return new Expr.StackElem(s, i, layout.typeOf[layout.stackMembers[sidx][0]]);
            }
            case "last_stack_index", "size_stack": {
                Expr s = expr(rj);
                if (s.kind != Kind.STACK) {
                    throw rj.unsupported(op + " of something that is not a header stack");
                }
                return new Ops.StackCount(s, op.equals("last_stack_index"));
            }
            case "valid": {
                Expr h = expr(rj);
                if (h.kind != Kind.HEADER) {
                    throw rj.unsupported("valid() of something that is not a header");
                }
                return new Ops.Valid(h, Kind.BOOL);
            }
            case "valid_union": {
                Expr u = expr(rj);
                if (u.kind != Kind.UNION) {
                    throw rj.unsupported("valid_union() of something that is not a header union");
                }
                return new Ops.ValidUnion(u);
            }
            case "d2b": {
                Expr e = data(expr(rj), rj);
                requireExact(e, "d2b", rj);
                return new Ops.D2B(e);
            }
            case "b2d":
                return new Ops.B2D(bool(expr(rj), rj));
            case "not":
                return new Ops.Not(bool(expr(rj), rj));
            case "and", "or":
                return new Ops.Logic(bool(expr(lj), lj), bool(expr(rj), rj), op.equals("and"));
            case "~":
                return new Ops.Neg(data(expr(rj), rj), true);
            case "?": {
                J cj = v.get("cond");
                Expr c = bool(expr(cj), cj);
                Expr l = expr(lj);
                Expr r = expr(rj);
                if (l.kind != r.kind) {
                    throw v.unsupported("?: with a " + l.kind + " and a " + r.kind + " branch");
                }
                boolean unsigned = !l.signed && !r.signed;
                int bits = unsigned ? Math.max(l.bits, r.bits) : Math.max(l.signedBits(), r.signedBits());
                return new Ops.Cond(c, l, r, bits, !unsigned);
            }
            case "two_comp_mod", "sat_cast", "usat_cast": {
                Expr e = data(expr(lj), lj);
                Expr w = data(expr(rj), rj);
                if (!e.exactLong()) {
                    throw lj.unsupported(op + " of a value that can exceed a signed 64-bit integer");
                }
                requireExact(w, op + " width", rj);
                int bits = w instanceof Expr.Const c ? (int) Math.min(64, Math.max(1, c.v)) : 64;
                CastOp cop = switch (op) {
                    case "two_comp_mod" -> CastOp.TWO_COMP_MOD;
                    case "sat_cast" -> CastOp.SAT_CAST;
                    default -> CastOp.USAT_CAST;
                };
                return new Ops.Cast(cop, e, w, cop == CastOp.USAT_CAST ? Math.min(bits, 63) : bits);
            }
            case "==", "!=", "<", "<=", ">", ">=":
                return compare(op, v, lj, rj);
            case "-":
                if (lj == null) {
                    return new Ops.Neg(data(expr(rj), rj), false);
                }
                return arith(op, v, lj, rj);
            case "+", "*", "<<", ">>", "&", "|", "^", "/", "%":
                return arith(op, v, lj, rj);
            case "dereference_union_stack":
                throw v.get("op").unsupported("header union stacks");
            default:
                throw v.get("op").unsupported("expression operator '" + op + "'");
        }
    }

    private Expr compare(String op, J v, J lj, J rj) {
        Expr l = expr(lj);
        Expr r = expr(rj);
        boolean eq = op.equals("==") || op.equals("!=");
        if (eq && l.kind == Kind.BOOL && r.kind == Kind.BOOL) {
            return new Ops.BoolEq(l, r, op.equals("!="));
        }
        if (eq && (l.kind == Kind.WIDE || r.kind == Kind.WIDE)) {
            for (Expr e : new Expr[] {l, r}) {
                if (e.kind == Kind.DATA && !e.exactUnsigned()) {
                    throw v.unsupported("comparing a wide value with a value that can be negative or exceed 64 bits");
                } else if (e.kind != Kind.DATA && e.kind != Kind.WIDE) {
                    throw v.unsupported("comparing " + e.kind);
                }
            }
            return new Ops.WideCmp(l, r, op.equals("!="));
        }
        data(l, lj);
        data(r, rj);
        boolean unsigned;
        if (l.exactLong() && r.exactLong()) {
            unsigned = false;
        } else if (l.exactUnsigned() && r.exactUnsigned()) {
            unsigned = true;
        } else {
            throw v.unsupported("comparison '" + op + "' of values that do not both fit a 64-bit integer");
        }
        CmpOp c = switch (op) {
            case "==" -> CmpOp.EQ;
            case "!=" -> CmpOp.NE;
            case "<" -> CmpOp.LT;
            case "<=" -> CmpOp.LE;
            case ">" -> CmpOp.GT;
            default -> CmpOp.GE;
        };
        return new Ops.Cmp(c, l, r, unsigned);
    }

    /** Binary arithmetic with the range of its result (see {@link Expr}). */
    Expr arith(String op, J where, J lj, J rj) {
        return arith(op, data(expr(lj), lj), data(expr(rj), rj), where);
    }

    static Expr arith(String op, Expr l, Expr r, J where) {
        boolean u = !l.signed && !r.signed;
        int sb = Math.max(l.signedBits(), r.signedBits());
        return switch (op) {
            case "+" -> u ? bin(BinOp.ADD, l, r, Math.max(l.bits, r.bits) + 1, false) : bin(BinOp.ADD, l, r, sb + 1, true);
            case "-" -> bin(BinOp.SUB, l, r, sb + 1, true);
            case "*" -> u ? bin(BinOp.MUL, l, r, l.bits + r.bits, false)
                    : bin(BinOp.MUL, l, r, l.signedBits() + r.signedBits(), true);
            case "&" -> {
                if (!l.signed || !r.signed) {
                    int b = !l.signed && !r.signed ? Math.min(l.bits, r.bits) : (!l.signed ? l.bits : r.bits);
                    yield bin(BinOp.AND, l, r, b, false);
                }
                yield bin(BinOp.AND, l, r, sb, true);
            }
            case "|", "^" -> bin(op.equals("|") ? BinOp.OR : BinOp.XOR, l, r, u ? Math.max(l.bits, r.bits) : sb, !u);
            case "<<" -> {
                requireExact(r, "shift amount", where);
                int extra = r instanceof Expr.Const c ? (int) Math.max(0, Math.min(c.v, UNBOUNDED_SHIFT)) : UNBOUNDED_SHIFT;
                yield bin(BinOp.SHL, l, r, l.bits + extra, l.signed);
            }
            case ">>" -> {
                requireExact(l, "right shift", where);
                requireExact(r, "shift amount", where);
                yield bin(BinOp.SHR, l, r, l.bits, l.signed);
            }
            case "/", "%" -> {
                if (!l.exactUnsigned() || !r.exactUnsigned()) {
                    throw where.unsupported("'" + op + "' of values that can be negative or exceed 64 bits");
                }
                yield bin(op.equals("/") ? BinOp.DIV : BinOp.MOD, l, r, op.equals("/") ? l.bits : r.bits, false);
            }
            default -> throw where.unsupported("expression operator '" + op + "'");
        };
    }

    private static final int UNBOUNDED_SHIFT = Expr.UNBOUNDED;

    private static Expr bin(BinOp op, Expr l, Expr r, int bits, boolean signed) {
        return new Ops.Bin(op, l, r, bits, signed);
    }
}
