package ernic.p4;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Loads calculations, actions, the ingress and egress pipelines (tables, conditionals) and checksums. */
final class PipelineLoader {
    private final Program p;
    private final ExprCompiler ec;
    Map<Integer, Action> actionsById;

    PipelineLoader(Program p, ExprCompiler ec) {
        this.p = p;
        this.ec = ec;
        p.tables = new ArrayList<>();
        p.profiles = new LinkedHashMap<>();
        p.checksums = new ArrayList<>();
    }

    Calc calculation(J c) {
        return calculation(c, c.str("name"));
    }

    /** A calculation ({@code calculations}, or an action selector's {@code selector}, which has no name). */
    Calc calculation(J c, String name) {
        String algo = c.str("algo");
        if (!Calc.ALGORITHMS.contains(algo)) {
            throw c.get("algo").unsupported("hash algorithm '" + algo + "'");
        }
        List<J> in = c.list("input");
        Calc.Input[] inputs = new Calc.Input[in.size()];
        int maxBits = 0;
        boolean payload = false;
        int lastHeader = -1;
        for (int i = 0; i < inputs.length; i++) {
            J x = in.get(i);
            String type = x.str("type");
            switch (type) {
                case "field" -> {
                    Expr e = ec.expr(x);
                    if (!(e instanceof Expr.Field f)) {
                        throw x.unsupported("a calculation input that is not a field");
                    }
                    inputs[i] = new Calc.FieldIn(f);
                    maxBits += f.var ? f.header.type.storageBytes(f.field) * 8 : f.width;
                    if (f.header instanceof Expr.HeaderRef hr) {
                        lastHeader = hr.h;
                    }
                }
                case "hexstr" -> {
                    BigInteger v = x.get("value").hex();
                    int bits = x.num("bitwidth");
                    if (bits > HeaderType.NARROW && v.bitLength() > HeaderType.NARROW) {
                        throw x.unsupported("a calculation constant wider than 64 bits");
                    }
                    inputs[i] = new Calc.ConstIn(v.longValue(), bits);
                    maxBits += bits;
                }
                case "header" -> {
                    Expr.HeaderRef h = ec.header(x.get("value"));
                    inputs[i] = new Calc.HeaderIn(h);
                    maxBits += headerMaxBits(h.h);
                    lastHeader = h.h;
                }
                case "payload" -> {
                    int[] order = p.deparser == null ? null : p.deparser.order;
                    inputs[i] = new Calc.PayloadIn(order == null ? new int[0] : after(order, lastHeader));
                    payload = true;
                }
                default -> throw x.get("type").unsupported("calculation input type '" + type + "'");
            }
        }
        int maxBytes = (maxBits + 7) / 8 + (payload ? Packet.MAX_FRAME + Packet.HEADROOM : 0);
        return new Calc(name, algo, inputs, maxBytes);
    }

    /** Header instances after {@code h} in deparser order. */
    private static int[] after(int[] order, int h) {
        for (int i = 0; i < order.length; i++) {
            if (order[i] == h) {
                return java.util.Arrays.copyOfRange(order, i + 1, order.length);
            }
        }
        return new int[0];
    }

    private int headerMaxBits(int h) {
        HeaderType t = p.layout.typeOf[h];
        return t.fixedBits() + (t.varField() >= 0 ? t.storageBytes(t.varField()) * 8 : 0);
    }

    Action action(J a) {
        List<J> rd = a.list("runtime_data");
        String[] names = new String[rd.size()];
        int[] widths = new int[rd.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = rd.get(i).str("name");
            widths[i] = rd.get(i).num("bitwidth");
        }
        Action act = new Action(a.str("name"), a.num("id"), names, widths);
        act.prims = new PrimCompiler(ec.forAction(widths), p).compileAll(a.list("primitives"));
        return act;
    }

    private Action actionById(J id) {
        Action a = actionsById.get(id.integer());
        if (a == null) {
            throw id.malformed("no action with id " + id.integer());
        }
        return a;
    }

    private ActionData actionData(Action a, J data) {
        List<J> d = data == null ? List.of() : data.items();
        BigInteger[] v = new BigInteger[d.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = d.get(i).hex();
        }
        try {
            return ActionData.of(a, v);
        } catch (IllegalArgumentException e) {
            throw P4Refusal.malformed(e.getMessage(), data == null ? "(no action_data)" : data.path());
        }
    }

    void pipelines(List<J> pipelines) {
        for (J pl : pipelines) {
            String name = pl.str("name");
            if (!name.equals("ingress") && !name.equals("egress")) {
                throw pl.get("name").unsupported("another architecture's program: pipeline '" + name
                        + "' (v1model has ingress and egress)");
            }
            Node init = pipeline(pl);
            if (name.equals("ingress")) {
                p.ingress = init;
            } else {
                p.egress = init;
            }
        }
    }

    private Node pipeline(J pl) {
        for (J ap : pl.list("action_profiles")) {
            J sel = ap.opt("selector");
            addProfile(ap.get("name"), ap.has("max_size") ? ap.num("max_size") : 1024, sel);
        }
        Map<String, Node> nodes = new HashMap<>();
        Map<Node, J> json = new LinkedHashMap<>();
        for (J t : pl.list("tables")) {
            Table tab = table(t);
            nodes.put(tab.name, tab);
            json.put(tab, t);
            p.tables.add(tab);
        }
        for (J c : pl.list("conditionals")) {
            J e = c.get("expression");
            Node.Conditional n = new Node.Conditional(c.str("name"), ec.bool(ec.expr(e), e));
            nodes.put(n.name, n);
            json.put(n, c);
            p.conditionals++;
        }
        for (J ac : pl.list("action_calls")) {
            Action a = actionById(ac.get("action_id"));
            if (a.paramWidths.length != 0) {
                throw ac.unsupported("an action call of an action with parameters");
            }
            Node.ActionCall n = new Node.ActionCall(ac.str("name"), a);
            nodes.put(n.name, n);
            json.put(n, ac);
        }
        for (Map.Entry<Node, J> e : json.entrySet()) {
            J j = e.getValue();
            switch (e.getKey()) {
                case Table t -> links(t, j, nodes);
                case Node.Conditional c -> {
                    c.ifTrue = next(nodes, j.opt("true_next"));
                    c.ifFalse = next(nodes, j.opt("false_next"));
                }
                case Node.ActionCall a -> a.next = next(nodes, j.opt("next_node"));
                default -> throw new IllegalStateException();
            }
        }
        return next(nodes, pl.opt("init_table"));
    }

    private static Node next(Map<String, Node> nodes, J name) {
        if (name == null) {
            return null;
        }
        Node n = nodes.get(name.text());
        if (n == null) {
            throw name.malformed("no table, conditional or action call '" + name.text() + "' in this pipeline");
        }
        return n;
    }

    private Table.Profile addProfile(J name, int maxSize, J selector) {
        String n = name.text();
        Calc sel = selector == null || selector.node().isNull() ? null : calculation(selector, n + " selector");
        Table.Profile prof = new Table.Profile(n, maxSize, sel);
        if (p.profiles.put(n, prof) != null) {
            throw name.malformed("a second action profile named '" + n + "'");
        }
        return prof;
    }

    private Table table(J t) {
        String type = t.has("type") ? t.str("type") : "simple";
        Table.Profile profile = null;
        switch (type) {
            case "simple" -> {
            }
            case "indirect", "indirect_ws" -> {
                J ap = t.opt("action_profile");
                if (ap != null && !ap.node().isNull()) {
                    profile = p.profiles.get(ap.text());
                    if (profile == null) {
                        throw ap.malformed("no action profile '" + ap.text() + "'");
                    }
                } else if (t.has("act_prof_name")) {
                    // bmv2's older form: the table names its own profile, and an indirect_ws table carries the selector.
                    profile = addProfile(t.get("act_prof_name"), t.has("max_size") ? t.num("max_size") : 1024,
                            type.equals("indirect_ws") ? t.get("selector") : null);
                } else {
                    throw t.malformed("an indirect table without action_profile or act_prof_name");
                }
                if (type.equals("indirect_ws") && profile.selector == null) {
                    throw t.get("type").malformed("an indirect_ws table whose action profile has no selector");
                }
            }
            default -> throw t.get("type").unsupported("table type '" + type + "'");
        }
        // support_timeout: bmv2 ages entries only when a controller sets a TTL and listens for the notices; the
        // engine has no such controller, so its entries never age (table_set_timeout is not a command here).
        Meter.Spec direct = null;
        Expr.Field directTarget = null;
        J dm = t.opt("direct_meters");
        if (dm != null && !dm.node().isNull()) {
            J m = p.directMeters.get(dm.text());
            if (m == null) {
                throw dm.malformed("no direct meter '" + dm.text() + "'");
            }
            direct = new Meter.Spec(m.str("name"), m.str("type").equals("bytes"),
                    m.has("rate_count") ? m.num("rate_count") : 2, 0);
            if (!(ec.field(m.get("result_target")) instanceof Expr.Field f) || f.kind != Expr.Kind.DATA) {
                throw m.get("result_target").unsupported("a direct meter's result in something but a field of at most 64 bits");
            }
            directTarget = f;
        }
        Table.MatchKind mk = matchKind(t.get("match_type"), false);
        List<J> kj = t.list("key");
        Table.Key[] keys = new Table.Key[kj.size()];
        int off = 0;
        int lpm = 0;
        for (int i = 0; i < keys.length; i++) {
            J k = kj.get(i);
            Table.MatchKind kk = matchKind(k.get("match_type"), true);
            Expr src;
            int bits;
            if (kk == Table.MatchKind.VALID) {
                J target = k.get("target");
                src = new Ops.Valid(ec.header(target.node().isArray() ? target.at(0) : target), Expr.Kind.DATA);
                bits = 1;
            } else {
                J target = k.get("target");
                src = ec.field(target);
                if (src instanceof Expr.Field f && f.var) {
                    throw target.unsupported("a variable-length field in a table key");
                }
                bits = src instanceof Expr.Field f ? f.width : 1;
            }
            if (kk == Table.MatchKind.LPM && ++lpm > 1) {
                throw k.unsupported("more than one lpm key field in a table");
            }
            int bytes = (bits + 7) / 8;
            J mj = k.opt("mask");
            byte[] mask = null;
            if (mj != null) {
                BigInteger m = mj.hex();
                if (m.signum() < 0 || m.bitLength() > bytes * 8) {
                    throw mj.malformed("key mask wider than its field");
                }
                mask = ActionData.toBytes(m, bytes);
            }
            String name = k.has("name") ? k.str("name") : k.get("target").node().toString();
            keys[i] = new Table.Key(name, kk, src, off, bytes, bits, mask);
            off += bytes;
        }
        List<J> an = t.get("actions").items();
        List<J> ids = t.list("action_ids");
        Action[] actions = new Action[an.size()];
        for (int i = 0; i < actions.length; i++) {
            actions[i] = ids.isEmpty() ? p.actions.get(an.get(i).text()) : actionById(ids.get(i));
            if (actions[i] == null) {
                throw an.get(i).malformed("no action '" + an.get(i).text() + "'");
            }
        }
        int max = t.has("max_size") ? t.num("max_size") : 1024;
        Table tab = new Table(t.str("name"), mk, keys, actions, max, t.boolOr("with_counters", false), profile);
        tab.directMeter = direct;
        tab.directMeterTarget = directTarget;
        J de = t.opt("default_entry");
        if (de != null) {
            Action a = actionById(de.get("action_id"));
            tab.defaultEntry = actionData(a, de.opt("action_data"));
            tab.defaultActionConst = de.boolOr("action_const", false);
            tab.defaultEntryConst = de.boolOr("action_entry_const", false) && de.has("action_data");
            tab.programDefault = tab.defaultEntry;
        }
        List<J> entries = t.list("entries");
        for (J e : entries) {
            entry(tab, e);
        }
        tab.immutable = !entries.isEmpty();
        return tab;
    }

    private static Table.MatchKind matchKind(J m, boolean key) {
        return switch (m.text()) {
            case "exact" -> Table.MatchKind.EXACT;
            case "lpm" -> Table.MatchKind.LPM;
            case "ternary" -> Table.MatchKind.TERNARY;
            case "range" -> Table.MatchKind.RANGE;
            case "valid" -> {
                if (!key) {
                    throw m.malformed("table match_type 'valid'");
                }
                yield Table.MatchKind.VALID;
            }
            case "optional" -> {
                if (!key) {
                    throw m.malformed("table match_type 'optional'");
                }
                yield Table.MatchKind.OPTIONAL;
            }
            default -> throw m.unsupported("match type '" + m.text() + "'");
        };
    }

    private void entry(Table t, J e) {
        List<J> mk = e.get("match_key").items();
        MatchParam[] params = new MatchParam[mk.size()];
        for (int i = 0; i < params.length; i++) {
            J m = mk.get(i);
            params[i] = switch (m.str("match_type")) {
                case "exact" -> MatchParam.exact(m.get("key").hex());
                case "valid" -> MatchParam.exact(m.get("key").bool() ? BigInteger.ONE : BigInteger.ZERO);
                case "optional" -> MatchParam.exact(m.get("key").hex());
                case "lpm" -> MatchParam.lpm(m.get("key").hex(), m.num("prefix_length"));
                case "ternary" -> MatchParam.ternary(m.get("key").hex(), m.get("mask").hex());
                case "range" -> MatchParam.range(m.get("start").hex(), m.get("end").hex());
                default -> throw m.get("match_type").unsupported("match type '" + m.str("match_type") + "'");
            };
        }
        J ae = e.get("action_entry");
        ActionData d = actionData(actionById(ae.get("action_id")), ae.opt("action_data"));
        int prio = e.has("priority") ? e.num("priority") : -1;
        try {
            MatchParam.addTo(t, params, prio, d, true);
        } catch (IllegalArgumentException x) {
            throw e.malformed(x.getMessage());
        }
    }

    private void links(Table t, J j, Map<String, Node> nodes) {
        J nt = j.opt("next_tables");
        t.baseDefaultNext = next(nodes, j.opt("base_default_next"));
        if (nt == null) {
            return;
        }
        if (nt.node().has("__HIT__") || nt.node().has("__MISS__")) {
            t.hitMiss = true;
            t.nextHit = next(nodes, nt.opt("__HIT__"));
            t.nextMiss = next(nodes, nt.opt("__MISS__"));
            return;
        }
        for (Iterator<String> it = nt.node().fieldNames(); it.hasNext(); ) {
            String an = it.next();
            int idx = -1;
            for (int i = 0; i < t.actions.length; i++) {
                if (t.actions[i].name.equals(an)) {
                    idx = i;
                }
            }
            if (idx < 0) {
                throw nt.get(an).malformed("next_tables names '" + an + "', not an action of table " + t.name);
            }
            t.nextByAction[idx] = next(nodes, nt.opt(an));
            t.explicitNext[idx] = true;
        }
    }

    void checksums(List<J> list) {
        for (J c : list) {
            String type = c.has("type") ? c.str("type") : "generic";
            if (!type.equals("generic")) {
                throw c.get("type").unsupported("checksum type '" + type + "'");
            }
            J target = c.get("target");
            Expr.Field f = (Expr.Field) ec.field(target);
            if (f.kind != Expr.Kind.DATA) {
                throw target.unsupported("a checksum field wider than 64 bits");
            }
            String cn = c.str("calculation");
            Calc calc = p.calcs.get(cn);
            if (calc == null) {
                throw c.get("calculation").malformed("no calculation '" + cn + "'");
            }
            J cond = c.opt("if_cond");
            Expr ifc = cond == null ? null : ec.bool(ec.expr(cond), cond);
            p.checksums.add(new Program.Checksum(c.str("name"), f, calc, c.boolOr("verify", true),
                    c.boolOr("update", true), ifc));
        }
    }
}
