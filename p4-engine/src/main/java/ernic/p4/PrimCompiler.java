package ernic.p4;

import ernic.p4.Expr.Field;
import ernic.p4.Expr.Kind;

import java.util.List;
import java.util.Map;

/** Compiles bmv2 primitive calls (core and simple_switch primitives) into {@link Prim}s. */
final class PrimCompiler {
    private final ExprCompiler ec;
    private final StdMeta sm;
    private final Map<String, Calc> calcs;
    private final Program program;

    PrimCompiler(ExprCompiler ec, Program program) {
        this.ec = ec;
        this.sm = program.std;
        this.calcs = program.calcs;
        this.program = program;
    }

    Prim[] compileAll(List<J> prims) {
        Prim[] out = new Prim[prims.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = compile(prims.get(i));
            // p4c's jumps go forward; a backward one could loop for ever on the device thread.
            if (out[i] instanceof Prim.Jump j && !(j.offset() instanceof Expr.Const c && c.v > i)) {
                throw prims.get(i).get("op").unsupported("a jump that is not to a later primitive");
            }
        }
        return out;
    }

    Prim compile(J call) {
        String op = call.str("op");
        J ps = call.opt("parameters");
        List<J> a = ps == null ? List.of() : ps.items();
        J where = call.get("op");
        return switch (op) {
            case "assign", "modify_field" -> {
                need(a, op.equals("modify_field") ? 2 : 2, op, where);
                Field dst = ec.lvalue(a.get(0));
                Expr src = ec.expr(a.get(1));
                Expr mask = a.size() > 2 ? data(a.get(2)) : null;
                yield assign(dst, src, mask, a.get(1));
            }
            case "assign_VL" -> {
                need(a, 2, op, where);
                Field d = ec.lvalue(a.get(0));
                Field s = ec.lvalue(a.get(1));
                if (!d.var || !s.var) {
                    throw where.unsupported("assign_VL of a field that is not variable-length");
                }
                yield new Prim.AssignVar(d, s);
            }
            case "assign_header", "copy_header" -> {
                need(a, 2, op, where);
                Expr d = headerOf(a.get(0));
                Expr s = headerOf(a.get(1));
                if (((Expr.HeaderExpr) d).type != ((Expr.HeaderExpr) s).type) {
                    throw where.unsupported(op + " between headers of different types");
                }
                yield new Prim.AssignHeader(d, s);
            }
            case "assign_union" -> {
                need(a, 2, op, where);
                int d = ec.union(a.get(0).get("value"));
                int s = ec.union(a.get(1).get("value"));
                yield new Prim.AssignGroup(ec.layout.unionMembers[d], ec.layout.unionMembers[s], -1, -1);
            }
            case "assign_header_stack" -> {
                need(a, 2, op, where);
                int d = ec.stack(a.get(0).get("value"));
                int s = ec.stack(a.get(1).get("value"));
                if (ec.layout.stackMembers[d].length != ec.layout.stackMembers[s].length) {
                    throw where.unsupported("assign_header_stack between stacks of different sizes");
                }
                yield new Prim.AssignGroup(ec.layout.stackMembers[d], ec.layout.stackMembers[s], d, s);
            }
            case "add_header", "remove_header" -> {
                need(a, 1, op, where);
                yield new Prim.SetValid(headerOf(a.get(0)), op.equals("add_header"));
            }
            case "push", "pop" -> {
                need(a, 2, op, where);
                Expr s = ec.expr(a.get(0));
                if (s.kind != Kind.STACK) {
                    throw a.get(0).unsupported(op + " of something that is not a header stack (union stacks are not supported)");
                }
                yield new Prim.PushPop(((Expr.Ref) s).index, exact(a.get(1), op + " count"), op.equals("push"));
            }
            case "mark_to_drop", "drop" -> {
                if (sm.egressSpec() == null) {
                    throw where.unsupported(op + " without a standard_metadata.egress_spec");
                }
                yield new Prim.MarkToDrop(sm);
            }
            case "exit" -> new Prim.Exit();
            case "assert", "assume" -> {
                need(a, 1, op, where);
                yield new Prim.Assert(ec.bool(ec.expr(a.get(0)), a.get(0)));
            }
            case "log_msg" -> {
                need(a, 2, op, where);
                List<J> vs = a.get(1).get("value").items();
                Expr[] values = new Expr[vs.size()];
                for (int i = 0; i < values.length; i++) {
                    Expr e = ec.expr(vs.get(i));
                    values[i] = e.kind == Kind.WIDE ? e : exact(vs.get(i), "a log_msg value");
                }
                yield new Prim.LogMsg(a.get(0).get("value").text(), values);
            }
            case "_jump" -> {
                need(a, 1, op, where);
                yield new Prim.Jump(null, exact(a.get(0), "jump offset"));
            }
            case "_jump_if_zero" -> {
                need(a, 2, op, where);
                Expr c = ec.expr(a.get(0));
                if (c.kind == Kind.BOOL) {
                    c = new Ops.B2D(c);
                }
                ExprCompiler.requireExact(ec.data(c, a.get(0)), "jump condition", a.get(0));
                yield new Prim.Jump(c, exact(a.get(1), "jump offset"));
            }
            case "count" -> {
                need(a, 2, op, where);
                int c = ec.externs.counter(a.get(0).get("value").text());
                if (c < 0) {
                    throw a.get(0).malformed("no counter array '" + a.get(0).get("value").text() + "'");
                }
                yield new Prim.Count(c, exact(a.get(1), "counter index"));
            }
            case "register_read" -> {
                need(a, 3, op, where);
                Field dst = ec.lvalue(a.get(0));
                int r = ec.register(a.get(1).get("value"));
                yield new Prim.RegisterRead(dst, new Expr.RegisterRead(r, ec.externs.registerWidths[r],
                        exact(a.get(2), "register index")));
            }
            case "register_write" -> {
                need(a, 3, op, where);
                int r = ec.register(a.get(0).get("value"));
                yield new Prim.RegisterWrite(r, exact(a.get(1), "register index"), data(a.get(2)));
            }
            case "modify_field_with_hash_based_offset" -> {
                need(a, 4, op, where);
                Field dst = ec.lvalue(a.get(0));
                String cn = a.get(2).get("value").text();
                Calc c = calcs.get(cn);
                if (c == null) {
                    throw a.get(2).malformed("no calculation '" + cn + "'");
                }
                yield new Prim.HashOffset(dst, data(a.get(1)), c, exact(a.get(3), "hash size"));
            }
            case "truncate" -> {
                need(a, 1, op, where);
                yield new Prim.Truncate(exact(a.get(0), "truncate length"));
            }
            case "add_to_field", "subtract_from_field" -> {
                need(a, 2, op, where);
                Field dst = ec.lvalue(a.get(0));
                yield assign(dst, ExprCompiler.arith(op.startsWith("add") ? "+" : "-", ec.data(dst, a.get(0)),
                        data(a.get(1)), where), null, where);
            }
            case "add", "subtract", "bit_and", "bit_or", "bit_xor", "shift_left", "shift_right" -> {
                need(a, 3, op, where);
                String sym = switch (op) {
                    case "add" -> "+";
                    case "subtract" -> "-";
                    case "bit_and" -> "&";
                    case "bit_or" -> "|";
                    case "bit_xor" -> "^";
                    case "shift_left" -> "<<";
                    default -> ">>";
                };
                yield assign(ec.lvalue(a.get(0)), ExprCompiler.arith(sym, data(a.get(1)), data(a.get(2)), where), null, where);
            }
            case "clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress" -> {
                need(a, 1, op, where);
                int fl = a.size() > 1 ? listId(a.get(1), program.fieldLists, "field list") : 0;
                yield new Prim.Clone(exact(a.get(0), "mirror session"), fl);
            }
            case "resubmit", "recirculate" -> {
                int fl = a.isEmpty() ? 0 : listId(a.get(0), program.fieldLists, "field list");
                yield new Prim.Again(op.equals("resubmit"), fl);
            }
            case "generate_digest" -> {
                need(a, 2, op, where);
                yield new Prim.Digest(listId(a.get(1), program.learnLists, "learn list"));
            }
            case "execute_meter" -> {
                need(a, 3, op, where);
                String mn = a.get(0).get("value").text();
                int m = ec.externs.meter(mn);
                if (m < 0) {
                    throw a.get(0).malformed("no indirect meter array '" + mn + "'");
                }
                yield new Prim.ExecuteMeter(m, exact(a.get(1), "meter index"), ec.lvalue(a.get(2)));
            }
            case "modify_field_rng_uniform" -> throw where.unsupported("primitive 'modify_field_rng_uniform' (random numbers)");
            default -> throw where.unsupported(op.startsWith("_") ? "extern method '" + op + "'" : "primitive '" + op + "'");
        };
    }

    private Prim assign(Field dst, Expr src, Expr mask, J where) {
        if (src.kind == Kind.BOOL) {
            throw where.unsupported("assigning a boolean to a field (bmv2 needs b2d)");
        }
        if (src.kind != Kind.DATA && src.kind != Kind.WIDE) {
            throw where.unsupported("assigning a " + src.kind + " to a field");
        }
        if (dst.var) {
            throw where.unsupported("assign to a variable-length field (use assign_VL)");
        }
        if (mask != null && (dst.kind == Kind.WIDE || src.kind == Kind.WIDE)) {
            throw where.unsupported("modify_field with a mask on a field wider than 64 bits");
        }
        return new Prim.Assign(dst, src, mask);
    }

    /** A field or learn list id: a constant naming a list of the program (0: none, as in bmv2). */
    private static int listId(J tv, Map<Integer, FieldList> lists, String what) {
        if (!tv.str("type").equals("hexstr")) {
            throw tv.unsupported("a " + what + " id that is not a constant");
        }
        java.math.BigInteger v = tv.get("value").hex();
        if (v.signum() == 0) {
            return 0;
        }
        if (v.bitLength() > 31 || !lists.containsKey(v.intValue())) {
            throw tv.get("value").malformed("no " + what + " with id " + v);
        }
        return v.intValue();
    }

    private Expr data(J tv) {
        return ec.data(ec.expr(tv), tv);
    }

    private Expr exact(J tv, String use) {
        Expr e = data(tv);
        ExprCompiler.requireExact(e, use, tv);
        return e;
    }

    private Expr headerOf(J tv) {
        Expr e = ec.expr(tv);
        if (!(e instanceof Expr.HeaderExpr)) {
            throw tv.unsupported("a " + e.kind + " where a header is expected");
        }
        return e;
    }

    private static void need(List<J> a, int n, String op, J where) {
        if (a.size() < n) {
            throw where.malformed("primitive '" + op + "' needs " + n + " parameters, has " + a.size());
        }
    }
}
