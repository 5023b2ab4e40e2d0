package ernic.p4;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Loads the parser, its parse value sets and the deparser. */
final class ParserLoader {
    private final Program p;
    private final ExprCompiler ec;

    ParserLoader(Program p, ExprCompiler ec) {
        this.p = p;
        this.ec = new ExprCompiler(ec.layout, ec.externs, null, true);
    }

    void load(J r) {
        p.vsets = new LinkedHashMap<>();
        for (J v : r.list("parse_vsets")) {
            int max = v.has("max_size") ? v.num("max_size") : 64;
            p.vsets.put(v.str("name"), new Parser.ParseVset(v.str("name"), v.num("compressed_bitwidth"), max));
        }
        List<J> parsers = r.list("parsers");
        if (parsers.size() > 1) {
            throw P4Refusal.unsupported("more than one parser (v1model has one)", "$.parsers");
        }
        // Without a parser nothing is extracted: the whole frame is payload.
        p.parser = parsers.isEmpty() ? new Parser("(none)", p.errors) : parser(parsers.getFirst());
        List<J> deparsers = r.list("deparsers");
        if (!deparsers.isEmpty()) {
            PrimCompiler pc = new PrimCompiler(new ExprCompiler(ec.layout, ec.externs, null, false), p);
            p.deparser.prims = pc.compileAll(deparsers.getFirst().list("primitives"));
        }
    }

    void loadDeparser(J r) {
        List<J> deparsers = r.list("deparsers");
        if (deparsers.size() > 1) {
            throw P4Refusal.unsupported("more than one deparser (v1model has one)", "$.deparsers");
        }
        // Without a deparser no header is emitted: what leaves is the payload the parser left.
        p.deparser = deparsers.isEmpty() ? new Parser.Deparser("(none)", new int[0], p.layout) : deparser(deparsers.getFirst());
    }

    private Parser parser(J pj) {
        Parser parser = new Parser(pj.str("name"), p.errors);
        Map<String, Parser.State> states = new HashMap<>();
        List<J> sj = pj.get("parse_states").items();
        for (J s : sj) {
            states.put(s.str("name"), new Parser.State(s.str("name")));
        }
        p.parseStates = sj.size();
        for (J s : sj) {
            fill(states.get(s.str("name")), s, states);
        }
        J init = pj.opt("init_state");
        parser.init = init == null ? null : state(states, init);
        return parser;
    }

    private static Parser.State state(Map<String, Parser.State> states, J name) {
        Parser.State s = states.get(name.text());
        if (s == null) {
            throw name.malformed("no parse state '" + name.text() + "'");
        }
        return s;
    }

    private void fill(Parser.State st, J s, Map<String, Parser.State> states) {
        List<J> ops = s.list("parser_ops");
        st.ops = new Parser.Op[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            st.ops[i] = op(ops.get(i));
        }
        List<J> key = s.list("transition_key");
        st.key = new Expr[key.size()];
        st.keyBytes = new int[key.size()];
        int bytes = 0;
        int[] widths = new int[key.size()];
        for (int i = 0; i < key.size(); i++) {
            Expr k = ec.expr(key.get(i));
            if (k.kind != Expr.Kind.DATA && k.kind != Expr.Kind.WIDE) {
                throw key.get(i).unsupported("a transition key of kind " + k.kind);
            }
            int w = k instanceof Expr.Field f ? f.width : k.bits;
            if (k instanceof Expr.Field f && f.var) {
                throw key.get(i).unsupported("a variable-length field in a transition key");
            }
            widths[i] = w;
            st.key[i] = k;
            st.keyBytes[i] = (w + 7) / 8;
            bytes += st.keyBytes[i];
        }
        st.keyBuf = new byte[bytes];
        List<J> ts = s.list("transitions");
        st.transitions = new Parser.Transition[ts.size()];
        for (int i = 0; i < ts.size(); i++) {
            J t = ts.get(i);
            J next = t.opt("next_state");
            Parser.State ns = next == null ? null : state(states, next);
            String type = t.has("type") ? t.str("type") : (t.has("value") && t.get("value").node().isTextual()
                    && t.str("value").equals("default") ? "default" : "hexstr");
            J mj = t.opt("mask");
            byte[] mask = mj == null ? null : bytes(mj, bytes);
            st.transitions[i] = switch (type) {
                case "default" -> new Parser.Transition(null, null, null, ns, true);
                case "hexstr" -> new Parser.Transition(bytes(t.get("value"), bytes), mask, null, ns, false);
                case "parse_vset" -> {
                    Parser.ParseVset vs = p.vsets.get(t.str("value"));
                    if (vs == null) {
                        throw t.get("value").malformed("no parse value set '" + t.str("value") + "'");
                    }
                    Parser.VsetUse use = new Parser.VsetUse(widths);
                    vs.uses.add(use);
                    yield new Parser.Transition(null, mask, use, ns, false);
                }
                default -> throw t.get("type").unsupported("transition type '" + type + "'");
            };
        }
    }

    /** A transition value or mask: the byte-padded key, right-aligned to the key's length. */
    private static byte[] bytes(J hex, int n) {
        BigInteger v = hex.hex();
        if (v.signum() < 0 || v.bitLength() > n * 8) {
            throw hex.malformed("transition value wider than the " + n + "-byte key");
        }
        return ActionData.toBytes(v, n);
    }

    private Parser.Op op(J o) {
        String op = o.str("op");
        List<J> a = o.list("parameters");
        return switch (op) {
            case "extract", "extract_VL" -> {
                J target = a.getFirst();
                String type = target.str("type");
                int h = -1;
                int s = -1;
                HeaderType t;
                switch (type) {
                    case "regular" -> {
                        h = ec.header(target.get("value")).h;
                        t = p.layout.typeOf[h];
                    }
                    case "stack" -> {
                        s = ec.stack(target.get("value"));
                        t = p.layout.typeOf[p.layout.stackMembers[s][0]];
                    }
                    case "union_stack" -> {
                        s = ec.unionStackMember(target.get("value"));
                        t = p.layout.typeOf[p.layout.stackMembers[s][0]];
                    }
                    default -> throw target.get("type").unsupported("extract target type '" + type + "'");
                }
                checkByteAligned(t, target);
                Expr vl = null;
                if (op.equals("extract_VL")) {
                    if (t.varField() < 0) {
                        throw o.unsupported("extract_VL into a header without a variable-length field");
                    }
                    vl = ec.data(ec.expr(a.get(1)), a.get(1));
                    ExprCompiler.requireExact(vl, "extract_VL length", a.get(1));
                } else if (t.varField() >= 0) {
                    throw o.unsupported("extract of a variable-length header without extract_VL");
                }
                yield new Parser.Extract(h, s, vl, p.errors, p.layout);
            }
            case "set" -> {
                Expr.Field dst = ec.lvalue(a.get(0));
                Expr src = ec.expr(a.get(1));
                if (src.kind != Expr.Kind.DATA && src.kind != Expr.Kind.WIDE) {
                    throw a.get(1).unsupported("set from a " + src.kind);
                }
                yield new Parser.Set(dst, src, p.errors);
            }
            case "verify" -> {
                Expr cond = ec.bool(ec.expr(a.get(0)), a.get(0));
                Expr err = ec.data(ec.expr(a.get(1)), a.get(1));
                ExprCompiler.requireExact(err, "verify error", a.get(1));
                yield new Parser.Verify(cond, err);
            }
            case "advance", "shift" -> {
                J amount = a.getFirst();
                Expr e = amount.node().isInt() ? Expr.Const.of(amount.integer()) : ec.data(ec.expr(amount), amount);
                ExprCompiler.requireExact(e, op + " amount", amount);
                yield new Parser.Advance(e, op.equals("shift") ? 8 : 1, p.errors);
            }
            case "primitive" -> {
                PrimCompiler pc = new PrimCompiler(ec, p);
                yield new Parser.Primitive(pc.compile(a.getFirst()));
            }
            default -> throw o.get("op").unsupported("parser operation '" + op + "'");
        };
    }

    private static void checkByteAligned(HeaderType t, J where) {
        if (t.fixedBits() % 8 != 0) {
            throw where.unsupported("header type '" + t.name() + "' of " + t.fixedBits()
                    + " bits on the wire (headers are whole bytes)");
        }
    }

    private Parser.Deparser deparser(J d) {
        List<Integer> order = new ArrayList<>();
        for (J h : d.list("order")) {
            int idx = ec.header(h).h;
            checkByteAligned(p.layout.typeOf[idx], h);
            order.add(idx);
        }
        return new Parser.Deparser(d.str("name"), order.stream().mapToInt(Integer::intValue).toArray(), p.layout);
    }
}
