package ernic.p4;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Loads a bmv2 JSON program (format 2.x, minor at most 24, or without {@code __meta__}) and compiles it.
 * Anything the engine does not run is refused here, with the feature and its JSON path ({@link P4Refusal}):
 * nothing is ignored.
 */
public final class Loader {
    static final int MAX_MINOR = 24;
    private static final Set<String> TOP_LEVEL = Set.of("__meta__", "program", "header_types", "headers",
            "header_stacks", "header_union_types", "header_unions", "header_union_stacks", "errors", "enums",
            "parsers", "parse_vsets", "deparsers", "meter_arrays", "counter_arrays", "register_arrays",
            "calculations", "learn_lists", "actions", "pipelines", "checksums", "force_arith", "extern_instances",
            "field_aliases", "field_lists", "config_options");

    private Loader() {
    }

    /** Loads a program from its JSON text; throws {@link P4Refusal} for anything the engine cannot run. */
    public static P4Engine load(String json) {
        return new P4Engine(compile(json));
    }

    /**
     * The built-in pass-through program ({@code ernic serve --p4} without {@code --p4-program}): no headers parsed,
     * every frame goes to the other side (egress_spec = ingress_port ^ 1: from the guest to the TAP, from the TAP
     * to the guest), unchanged.
     */
    public static P4Engine passThrough() {
        try (var in = Loader.class.getResourceAsStream("pass_through.json")) {
            if (in == null) {
                throw new IllegalStateException("pass_through.json is missing from the build");
            }
            return load(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static Program compile(String json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (JsonProcessingException e) {
            throw P4Refusal.malformed("not JSON: " + e.getOriginalMessage().lines().findFirst().orElse(""), "$");
        }
        if (root == null || !root.isObject()) {
            throw P4Refusal.malformed("the program is not a JSON object", "$");
        }
        return new Loader().program(new J(root, "$"));
    }

    private Program program(J r) {
        for (Iterator<String> it = r.node().fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!TOP_LEVEL.contains(k)) {
                throw P4Refusal.unsupported("top-level attribute '" + k + "'", "$." + k);
            }
        }
        Program p = new Program();
        J meta = r.opt("__meta__");
        if (meta != null) {
            J v = meta.get("version");
            int major = v.at(0).integer();
            int minor = v.at(1).integer();
            if (major != 2 || minor > MAX_MINOR) {
                throw v.unsupported("bmv2 JSON format version " + major + "." + minor + " (2.0 to 2." + MAX_MINOR
                        + " are supported)");
            }
            J c = meta.opt("compiler");
            p.compiler = c == null ? null : c.text();
        }
        p.configOptions = configOptions(r.opt("config_options"));
        J prog = r.opt("program");
        p.name = prog == null ? "(unnamed)" : prog.text();
        List<J> externs = r.list("extern_instances");
        if (!externs.isEmpty()) {
            throw externs.get(0).get("type").unsupported("extern type '" + externs.get(0).str("type")
                    + "' (v1model programs have no extern instances: a bmv2 test extern or another architecture's)");
        }
        layout(r, p);
        externs(r, p);
        ExprCompiler ec = new ExprCompiler(p.layout, p.externs, null, false);
        p.std = stdMeta(r, ec);
        p.errors = errors(r);
        p.fieldLists = fieldLists(r.list("field_lists"), ec);
        p.learnLists = fieldLists(r.list("learn_lists"), ec);
        ParserLoader parsers = new ParserLoader(p, ec);
        parsers.loadDeparser(r);
        p.calcs = new LinkedHashMap<>();
        PipelineLoader pl = new PipelineLoader(p, ec);
        for (J c : r.list("calculations")) {
            p.calcs.put(c.str("name"), pl.calculation(c));
        }
        p.actions = new LinkedHashMap<>();
        Map<Integer, Action> byId = new HashMap<>();
        for (J a : r.list("actions")) {
            Action act = pl.action(a);
            p.actions.put(act.name, act);
            byId.put(act.id, act);
        }
        pl.actionsById = byId;
        parsers.load(r);
        pl.pipelines(r.list("pipelines"));
        pl.checksums(r.list("checksums"));
        return p;
    }

    /** {@code config_options}: target options as names and scalar values, kept for whoever asks (bmv2 does the same). */
    private static Map<String, String> configOptions(J c) {
        Map<String, String> out = new LinkedHashMap<>();
        if (c == null) {
            return out;
        }
        if (!c.node().isObject()) {
            throw c.malformed("config_options is not an object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = c.node().fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                throw c.get(e.getKey()).malformed("config option '" + e.getKey() + "' is not a string, number or boolean");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private void layout(J r, Program p) {
        Map<String, HeaderType> types = new HashMap<>();
        for (J t : r.list("header_types")) {
            if (t.str("name").startsWith("psa_")) {
                throw t.get("name").unsupported("another architecture's program: header type '" + t.str("name")
                        + "' is PSA's (v1model programs are run)");
            }
            HeaderType ht = headerType(t);
            types.put(ht.name(), ht);
        }
        p.headerTypes = types.size();
        List<String> names = new ArrayList<>();
        List<HeaderType> htypes = new ArrayList<>();
        List<Boolean> meta = new ArrayList<>();
        Map<Integer, Integer> byId = new HashMap<>();
        for (J h : r.list("headers")) {
            String tn = h.str("header_type");
            HeaderType t = types.get(tn);
            if (t == null) {
                throw h.get("header_type").malformed("no header type '" + tn + "'");
            }
            byId.put(h.num("id"), names.size());
            names.add(h.str("name"));
            htypes.add(t);
            meta.add(h.boolOr("metadata", false));
        }
        List<String> stacks = new ArrayList<>();
        List<int[]> stackHeaders = new ArrayList<>();
        for (J s : r.list("header_stacks")) {
            stacks.add(s.str("name"));
            stackHeaders.add(members(s.get("header_ids"), byId));
            if (stackHeaders.getLast().length == 0) {
                throw s.malformed("a header stack without headers");
            }
        }
        List<String> unions = new ArrayList<>();
        List<int[]> unionHeaders = new ArrayList<>();
        Map<Integer, Integer> unionById = new HashMap<>();
        for (J u : r.list("header_unions")) {
            unionById.put(u.num("id"), unions.size());
            unions.add(u.str("name"));
            unionHeaders.add(members(u.get("header_ids"), byId));
        }
        // A header union stack is kept as one header stack per member of its union type (element i of the
        // stack for member m is member m of union i), the stacks sharing one next index: what is extracted,
        // read through union_stack_field and emitted is then what header stacks already do.
        Map<String, Map<String, Integer>> unionStacks = new LinkedHashMap<>();
        for (J us : r.list("header_union_stacks")) {
            int[] elems = members(us.get("header_union_ids"), unionById);
            if (elems.length == 0) {
                throw us.malformed("a header union stack without unions");
            }
            Map<String, Integer> byMember = new LinkedHashMap<>();
            List<J> memberNames = unionTypeMembers(r, us);
            for (int m = 0; m < memberNames.size(); m++) {
                int[] hs = new int[elems.length];
                for (int i = 0; i < elems.length; i++) {
                    int[] uh = unionHeaders.get(elems[i]);
                    if (uh.length != memberNames.size()) {
                        throw us.malformed("union " + unions.get(elems[i]) + " is not of the stack's union type");
                    }
                    hs[i] = uh[m];
                }
                byMember.put(memberNames.get(m).at(0).text(), stacks.size());
                stacks.add(us.str("name") + "." + memberNames.get(m).at(0).text());
                stackHeaders.add(hs);
            }
            unionStacks.put(us.str("name"), byMember);
        }
        p.layout = new Layout(names, htypes, meta, stacks, stackHeaders, unions, unionHeaders, unionStacks);
    }

    /** The members ([name, header type]) of the union type of a header union stack. */
    private static List<J> unionTypeMembers(J r, J us) {
        String tn = us.str("union_type");
        for (J t : r.list("header_union_types")) {
            if (t.str("name").equals(tn)) {
                return t.get("headers").items();
            }
        }
        throw us.get("union_type").malformed("no header union type '" + tn + "'");
    }

    private static int[] members(J ids, Map<Integer, Integer> byId) {
        List<J> l = ids.items();
        int[] out = new int[l.size()];
        for (int i = 0; i < out.length; i++) {
            Integer h = byId.get(l.get(i).integer());
            if (h == null) {
                throw l.get(i).malformed("no header with id " + l.get(i).integer());
            }
            out[i] = h;
        }
        return out;
    }

    private static HeaderType headerType(J t) {
        List<J> fs = t.get("fields").items();
        String[] names = new String[fs.size()];
        int[] widths = new int[fs.size()];
        boolean[] signed = new boolean[fs.size()];
        int var = -1;
        for (int i = 0; i < fs.size(); i++) {
            J f = fs.get(i);
            names[i] = f.at(0).text();
            J w = f.at(1);
            if (w.node().isTextual() && w.text().equals("*")) {
                if (var >= 0) {
                    throw w.unsupported("more than one variable-length field in a header type");
                }
                var = i;
                continue;
            }
            widths[i] = w.integer();
            if (widths[i] <= 0) {
                throw w.malformed("field width " + widths[i]);
            }
            signed[i] = f.size() > 2 && f.at(2).bool();
            if (signed[i] && widths[i] < 2) {
                throw f.malformed("a signed field of fewer than 2 bits");
            }
            if (signed[i] && widths[i] > HeaderType.NARROW) {
                throw f.unsupported("a signed field wider than 64 bits");
            }
        }
        int max = 0;
        if (var >= 0) {
            if (t.has("length_exp")) {
                throw t.get("length_exp").unsupported("header length_exp (P4_14 variable-length headers; P4_16 extract_VL is supported)");
            }
            max = t.num("max_length");
        }
        return new HeaderType(t.str("name"), names, widths, signed, var, max);
    }

    private void externs(J r, Program p) {
        List<J> regs = r.list("register_arrays");
        String[] rn = new String[regs.size()];
        int[] rw = new int[regs.size()];
        int[] rs = new int[regs.size()];
        for (int i = 0; i < rn.length; i++) {
            J g = regs.get(i);
            rn[i] = g.str("name");
            rw[i] = g.num("bitwidth");
            rs[i] = g.num("size");
            if (rw[i] < 1 || rw[i] > HeaderType.NARROW) {
                throw g.get("bitwidth").unsupported("a register of " + rw[i] + " bits (1 to 64 are supported)");
            }
            if (rs[i] < 0) {
                throw g.get("size").malformed("negative size");
            }
        }
        List<J> ctrs = r.list("counter_arrays");
        String[] cn = new String[ctrs.size()];
        int[] cs = new int[ctrs.size()];
        for (int i = 0; i < cn.length; i++) {
            J c = ctrs.get(i);
            cn[i] = c.str("name");
            // A direct counter lives on its table's entries; it has no cells of its own.
            cs[i] = c.boolOr("is_direct", false) ? 0 : c.num("size");
            if (c.boolOr("is_direct", false) && c.has("binding")) {
                p.directCounters.put(cn[i], c.str("binding"));
            }
            if (cs[i] < 0) {
                throw c.get("size").malformed("negative size");
            }
        }
        p.externs = new Externs(rn, rw, rs, cn, cs);
        meters(r, p);
    }

    /** meter_arrays: indirect ones get their cells here; direct ones are attached to their table's entries. */
    private static void meters(J r, Program p) {
        List<Meter.Spec> specs = new ArrayList<>();
        p.directMeters = new HashMap<>();
        for (J m : r.list("meter_arrays")) {
            String type = m.str("type");
            if (!type.equals("packets") && !type.equals("bytes")) {
                throw m.get("type").malformed("meter type '" + type + "' (packets or bytes)");
            }
            int rc = m.has("rate_count") ? m.num("rate_count") : 2;
            if (rc < 1 || rc > 8) {
                throw m.get("rate_count").unsupported("a meter with " + rc + " rates");
            }
            boolean direct = m.boolOr("is_direct", false);
            int size = direct ? 0 : m.num("size");
            if (size < 0) {
                throw m.get("size").malformed("negative size");
            }
            Meter.Spec s = new Meter.Spec(m.str("name"), type.equals("bytes"), rc, size);
            if (direct) {
                p.directMeters.put(s.name(), m);
            } else {
                specs.add(s);
            }
        }
        Externs x = p.externs;
        x.meterSpecs = specs.toArray(Meter.Spec[]::new);
        x.meters = new Meter[specs.size()][];
        for (int i = 0; i < specs.size(); i++) {
            x.meters[i] = new Meter[specs.get(i).size()];
            for (int c = 0; c < x.meters[i].length; c++) {
                x.meters[i][c] = new Meter(specs.get(i).rateCount());
            }
        }
    }

    /** field_lists or learn_lists by id: their elements must be fields. */
    private static Map<Integer, FieldList> fieldLists(List<J> lists, ExprCompiler ec) {
        Map<Integer, FieldList> out = new HashMap<>();
        for (J l : lists) {
            List<J> el = l.get("elements").items();
            Expr.Field[] fs = new Expr.Field[el.size()];
            String[] names = new String[el.size()];
            for (int i = 0; i < fs.length; i++) {
                J e = el.get(i);
                if (!e.str("type").equals("field") || !(ec.field(e.get("value")) instanceof Expr.Field f) || f.var) {
                    throw e.unsupported("a " + e.str("type") + " in a field list (fields of fixed width are supported)");
                }
                fs[i] = f;
                names[i] = e.get("value").at(0).text() + "." + e.get("value").at(1).text();
            }
            int id = l.num("id");
            if (id == 0 || out.put(id, new FieldList(l.str("name"), fs, names)) != null) {
                throw l.get("id").malformed("field list id " + id + " is 0 or used twice");
            }
        }
        return out;
    }

    private static StdMeta stdMeta(J r, ExprCompiler ec) {
        Map<String, J> aliases = new HashMap<>();
        for (J a : r.list("field_aliases")) {
            aliases.put(a.at(0).text(), a.at(1));
        }
        String[] names = {"ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
            "parser_error", "checksum_error", "mcast_grp", "egress_rid"};
        Expr.Field[] f = new Expr.Field[names.length];
        int sm = ec.layout.header("standard_metadata");
        for (int i = 0; i < names.length; i++) {
            J target = aliases.get("standard_metadata." + names[i]);
            if (target == null) {
                target = aliases.get("intrinsic_metadata." + names[i]);
            }
            if (target != null) {
                f[i] = (Expr.Field) ec.field(target);
            } else if (sm >= 0 && ec.layout.typeOf[sm].fieldIndex(names[i]) >= 0) {
                f[i] = new Expr.Field(new Expr.HeaderRef(ec.layout, sm),
                        ec.layout.typeOf[sm].fieldIndex(names[i]));
            }
            if (f[i] != null && f[i].kind != Expr.Kind.DATA) {
                throw P4Refusal.unsupported("standard_metadata." + names[i] + " wider than 64 bits", "$.field_aliases");
            }
        }
        return new StdMeta(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
    }

    private static Parser.Errors errors(J r) {
        Map<String, Integer> e = new HashMap<>();
        for (J x : r.list("errors")) {
            e.put(x.at(0).text(), x.at(1).integer());
        }
        // p4c's numbering of core.p4's errors, for programs whose JSON leaves them out.
        return new Parser.Errors(e.getOrDefault("NoError", 0), e.getOrDefault("PacketTooShort", 1),
                e.getOrDefault("NoMatch", 2), e.getOrDefault("StackOutOfBounds", 3),
                e.getOrDefault("HeaderTooShort", 4), e.getOrDefault("ParserTimeout", 5),
                e.getOrDefault("ParserInvalidArgument", 6));
    }
}
