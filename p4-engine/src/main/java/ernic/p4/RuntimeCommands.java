package ernic.p4;

import ernic.common.IpAddress;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Runtime entries in the syntax of bmv2's simple_switch_CLI, one command a line ({@code #} starts a comment):
 * <pre>
 * table_add TABLE ACTION KEY... =&gt; ARG... [PRIORITY]    table_set_default TABLE ACTION ARG...
 * table_delete TABLE HANDLE    table_modify TABLE ACTION HANDLE =&gt; ARG...    table_clear TABLE
 * act_prof_create_member PROFILE ACTION ARG...    act_prof_delete_member PROFILE MEMBER
 * act_prof_create_group PROFILE    act_prof_delete_group PROFILE GROUP
 * act_prof_add_member_to_group PROFILE MEMBER GROUP    act_prof_remove_member_from_group PROFILE MEMBER GROUP
 * table_indirect_add TABLE KEY... =&gt; MEMBER [PRIORITY]    table_indirect_add_with_group TABLE KEY... =&gt; GROUP [PRIORITY]
 * table_indirect_set_default TABLE MEMBER    table_indirect_set_default_with_group TABLE GROUP
 * (and the older table_indirect_create_member... forms, naming the table for its profile)
 * register_write REGISTER INDEX VALUE    register_reset REGISTER
 * counter_reset COUNTER    pvs_add VSET VALUE    pvs_clear VSET
 * counter_read COUNTER INDEX    register_read REGISTER [INDEX]    meter_get_rates METER INDEX    table_dump TABLE
 * </pre>
 * The reads add simple_switch_CLI's output lines to {@link #output}.
 * Keys: exact {@code V}, lpm {@code V/LEN}, ternary {@code V&&&MASK}, range {@code LO->HI}; values are
 * decimal, 0x hex, 0b binary, dotted IPv4, colon MAC or IPv6. Table and action names may be given in full
 * or by a unique dotted suffix. Handles count from 0 per table, in the order entries were added.
 * {@code mirroring_add SESSION PORT}, {@code mirroring_add_mc SESSION MGID} and {@code mirroring_delete SESSION} manage
 * mirror sessions; the {@code mc_*} commands multicast groups ({@link Multicast});
 * {@code meter_array_set_rates}, {@code meter_set_rates} and {@code meter_reset} set meters.
 */
final class RuntimeCommands {
    /** The commands a guest given the {@code tables} scope may send (devcmd 71). */
    static final java.util.Set<String> TABLE_COMMANDS = java.util.Set.of("table_add", "table_set_default",
            "table_delete", "table_modify", "table_clear", "table_reset_default", "act_prof_create_member",
            "act_prof_modify_member", "act_prof_delete_member",
            "act_prof_create_group", "act_prof_delete_group", "act_prof_add_member_to_group",
            "act_prof_remove_member_from_group", "table_indirect_add", "table_indirect_add_with_group",
            "table_indirect_set_default", "table_indirect_set_default_with_group", "table_indirect_create_member",
            "table_indirect_modify_member", "table_indirect_delete_member", "table_indirect_create_group", "table_indirect_delete_group",
            "table_indirect_add_member_to_group", "table_indirect_remove_member_from_group");
    /** simple_switch_CLI's older per-table names of the action profile commands (the table names its profile). */
    private static final Map<String, String> TABLE_INDIRECT_ALIASES = Map.of(
            "table_indirect_create_member", "act_prof_create_member",
            "table_indirect_modify_member", "act_prof_modify_member",
            "table_indirect_delete_member", "act_prof_delete_member",
            "table_indirect_create_group", "act_prof_create_group",
            "table_indirect_delete_group", "act_prof_delete_group",
            "table_indirect_add_member_to_group", "act_prof_add_member_to_group",
            "table_indirect_remove_member_from_group", "act_prof_remove_member_from_group");

    private final Program p;
    private final boolean tablesOnly;
    /** What the read commands print, a line each (simple_switch_CLI's output). */
    final List<String> output = new ArrayList<>();

    RuntimeCommands(Program p, boolean tablesOnly) {
        this.p = p;
        this.tablesOnly = tablesOnly;
    }

    void apply(String text, String source) {
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int hash = line.indexOf('#');
            if (hash >= 0) {
                line = line.substring(0, hash);
            }
            line = line.trim();
            if (line.isEmpty()) {
                continue;
            }
            try {
                command(line.split("\\s+"));
            } catch (IllegalArgumentException e) {
                throw new P4EntryError(source, i + 1, e.getMessage());
            }
        }
    }

    private void command(String[] w) {
        String cmd = w[0];
        if (tablesOnly && !TABLE_COMMANDS.contains(cmd)) {
            throw new IllegalArgumentException("'" + cmd + "' is not a table command");
        }
        String alias = TABLE_INDIRECT_ALIASES.get(cmd);
        if (alias != null) {
            Table t = table(arg(w, 1));
            if (t.profile == null) {
                throw new IllegalArgumentException("table " + t.name + " has no action profile");
            }
            String[] v = w.clone();
            v[0] = alias;
            v[1] = t.profile.name;
            command(v);
            return;
        }
        switch (cmd) {
            case "table_add" -> {
                Table t = table(arg(w, 1));
                Action a = action(t, arg(w, 2));
                int arrow = arrow(w);
                MatchParam[] key = keys(t, Arrays.copyOfRange(w, 3, arrow));
                String[] rest = Arrays.copyOfRange(w, arrow + 1, w.length);
                int prio = -1;
                if (rest.length == a.paramWidths.length + 1) {
                    prio = (int) parseNumber(rest[rest.length - 1], 31).longValue();
                    rest = Arrays.copyOf(rest, rest.length - 1);
                }
                if (t.profile != null) {
                    throw new IllegalArgumentException("table " + t.name + " is indirect: use table_indirect_add");
                }
                MatchParam.addTo(t, key, prio, data(a, rest), false);
            }
            case "table_set_default" -> {
                Table t = table(arg(w, 1));
                Action a = action(t, arg(w, 2));
                t.setDefault(data(a, Arrays.copyOfRange(w, 3, w.length)));
            }
            case "table_delete" -> table(arg(w, 1)).delete(handle(arg(w, 2)));
            case "table_clear" -> table(arg(w, 1)).clear();
            case "table_reset_default" -> {
                Table t = table(arg(w, 1));
                t.defaultEntry = t.programDefault;
            }
            case "table_modify" -> {
                Table t = table(arg(w, 1));
                Action a = action(t, arg(w, 2));
                int arrow = arrow(w);
                t.modify(handle(arg(w, 3)), data(a, Arrays.copyOfRange(w, arrow + 1, w.length)));
            }
            case "act_prof_create_member" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                Action a = action(prof, arg(w, 2));
                if (prof.members.size() >= prof.maxSize) {
                    throw new IllegalArgumentException("action profile " + prof.name + " is full");
                }
                prof.members.add(data(a, Arrays.copyOfRange(w, 3, w.length)));
            }
            case "act_prof_modify_member" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                Action a = action(prof, arg(w, 2));
                int m = handle(arg(w, 3));
                ActionData old = prof.member(m);
                ActionData now = data(a, Arrays.copyOfRange(w, 4, w.length));
                prof.members.set(m, now);
                // Entries hold the member itself (groups hold its handle): they follow it to its new action.
                for (Table t : p.tables) {
                    if (t.profile == prof) {
                        t.replaceData(old, now);
                    }
                }
            }
            case "act_prof_delete_member" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                int m = handle(arg(w, 2));
                ActionData d = prof.member(m);
                for (Table.Group g : prof.groups) {
                    if (g != null && Arrays.stream(g.members).anyMatch(x -> x == m)) {
                        throw new IllegalArgumentException("member " + m + " is in group " + g.handle);
                    }
                }
                if (usedByAnEntry(prof, d)) {
                    throw new IllegalArgumentException("member " + m + " is used by a table entry");
                }
                prof.members.set(m, null);
            }
            case "act_prof_create_group" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                if (prof.selector == null) {
                    throw new IllegalArgumentException("action profile " + prof.name + " has no selector: no groups");
                }
                prof.groups.add(new Table.Group(prof, prof.groups.size()));
            }
            case "act_prof_delete_group" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                Table.Group g = prof.group(handle(arg(w, 2)));
                if (usedByAnEntry(prof, ActionData.ofGroup(g))) {
                    throw new IllegalArgumentException("group " + g.handle + " is used by a table entry");
                }
                prof.groups.set(g.handle, null);
            }
            case "act_prof_add_member_to_group", "act_prof_remove_member_from_group" -> {
                Table.Profile prof = byName(p.profiles, arg(w, 1), "action profile");
                int m = handle(arg(w, 2));
                prof.member(m);
                Table.Group g = prof.group(handle(arg(w, 3)));
                boolean in = Arrays.stream(g.members).anyMatch(x -> x == m);
                boolean add = cmd.equals("act_prof_add_member_to_group");
                if (in == add) {
                    throw new IllegalArgumentException("member " + m + (add ? " is already" : " is not") + " in group "
                            + g.handle);
                }
                g.members = add ? java.util.stream.IntStream.concat(Arrays.stream(g.members), java.util.stream.IntStream.of(m))
                        .sorted().toArray() : Arrays.stream(g.members).filter(x -> x != m).toArray();
            }
            case "table_indirect_add", "table_indirect_add_with_group" -> {
                Table t = table(arg(w, 1));
                int arrow = arrow(w);
                MatchParam[] key = keys(t, Arrays.copyOfRange(w, 2, arrow));
                String[] rest = Arrays.copyOfRange(w, arrow + 1, w.length);
                if (rest.length < 1 || rest.length > 2) {
                    throw new IllegalArgumentException("table_indirect_add needs a member handle (and a priority)");
                }
                int prio = rest.length == 2 ? (int) parseNumber(rest[1], 31).longValue() : -1;
                MatchParam.addTo(t, key, prio, cmd.endsWith("group") ? group(t, rest[0]) : member(t, rest[0]), false);
            }
            case "table_indirect_set_default" -> {
                Table t = table(arg(w, 1));
                t.setDefault(member(t, arg(w, 2)));
            }
            case "table_indirect_set_default_with_group" -> {
                Table t = table(arg(w, 1));
                t.setDefault(group(t, arg(w, 2)));
            }
            case "register_write" -> {
                int r = index(p.externs.registerNames, arg(w, 1), "register");
                long[] cells = p.externs.registers[r];
                int i = cell(arg(w, 2), cells.length);
                cells[i] = parseNumber(arg(w, 3), p.externs.registerWidths[r]).longValue();
            }
            case "register_reset" -> Arrays.fill(p.externs.registers[index(p.externs.registerNames, arg(w, 1),
                    "register")], 0);
            case "counter_reset" -> {
                int c = index(p.externs.counterNames, arg(w, 1), "counter");
                Arrays.fill(p.externs.counterPackets[c], 0);
                Arrays.fill(p.externs.counterBytes[c], 0);
                for (Table t : p.tables) {
                    for (Table.Entry e : t.entries()) {
                        e.packets = 0;
                        e.bytes = 0;
                    }
                }
            }
            case "pvs_add" -> {
                Parser.ParseVset vs = byName(p.vsets, arg(w, 1), "parse value set");
                if (vs.uses.isEmpty()) {
                    throw new IllegalArgumentException("parse value set " + vs.name + " is used by no parse state");
                }
                if (vs.values.size() >= vs.maxSize) {
                    throw new IllegalArgumentException("parse value set " + vs.name + " is full");
                }
                vs.add(parseNumber(arg(w, 2), vs.compressedBits));
            }
            case "meter_array_set_rates" -> {
                int m = meterArray(arg(w, 1));
                Rates r = rates(w, 2, p.externs.meterSpecs[m].rateCount());
                for (Meter cell : p.externs.meters[m]) {
                    cell.setRates(r.rates, r.bursts);
                }
            }
            case "meter_set_rates" -> {
                String name = arg(w, 1);
                Table direct = directMeterTable(name);
                if (direct != null) {
                    Rates r = rates(w, 3, direct.directMeter.rateCount());
                    direct.entry(handle(arg(w, 2))).meter.setRates(r.rates, r.bursts);
                } else {
                    int m = meterArray(name);
                    Meter[] cells = p.externs.meters[m];
                    Rates r = rates(w, 3, p.externs.meterSpecs[m].rateCount());
                    cells[cell(arg(w, 2), cells.length)].setRates(r.rates, r.bursts);
                }
            }
            case "meter_reset" -> {
                Table direct = directMeterTable(arg(w, 1));
                if (direct != null) {
                    for (Table.Entry e : direct.entries()) {
                        e.meter.reset();
                    }
                } else {
                    for (Meter cell : p.externs.meters[meterArray(arg(w, 1))]) {
                        cell.reset();
                    }
                }
            }
            case "pvs_clear" -> byName(p.vsets, arg(w, 1), "parse value set").clear();
            case "mirroring_add" -> {
                int session = (int) parseNumber(arg(w, 1), 15).longValue();
                int port = (int) parseNumber(arg(w, 2), 9).longValue();
                if (w.length > 3) {
                    throw new IllegalArgumentException("mirroring_add takes a session and a port");
                }
                p.mirrorSessions.put(session, new Program.Mirror(port, -1));
            }
            case "counter_read" -> {
                words(w, 3);
                String binding = p.directCounters.get(counterName(w[1]));
                long bytes, packets;
                if (binding != null) {
                    Table.Entry e = table(binding).entry(handle(w[2]));
                    bytes = e.bytes;
                    packets = e.packets;
                } else {
                    int c = index(p.externs.counterNames, w[1], "counter");
                    int i = cell(w[2], p.externs.counterPackets[c].length);
                    bytes = p.externs.counterBytes[c][i];
                    packets = p.externs.counterPackets[c][i];
                }
                output.add(w[1] + "[" + parseNumber(w[2], 32) + "]= (" + bytes + " bytes, " + packets + " packets)");
            }
            case "register_read" -> {
                int r = index(p.externs.registerNames, arg(w, 1), "register");
                long[] cells = p.externs.registers[r];
                if (w.length == 2) {
                    java.util.StringJoiner j = new java.util.StringJoiner(", ", w[1] + "= ", "");
                    for (long v : cells) {
                        j.add(Long.toUnsignedString(v));
                    }
                    output.add(j.toString());
                } else {
                    words(w, 3);
                    int i = cell(w[2], cells.length);
                    output.add(w[1] + "[" + i + "]= " + Long.toUnsignedString(cells[i]));
                }
            }
            case "meter_get_rates" -> {
                words(w, 3);
                Table direct = directMeterTable(w[1]);
                Meter m;
                if (direct != null) {
                    m = direct.entry(handle(w[2])).meter;
                } else {
                    Meter[] cells = p.externs.meters[meterArray(w[1])];
                    m = cells[cell(w[2], cells.length)];
                }
                output.addAll(m.describeRates());
            }
            case "table_dump" -> {
                words(w, 2);
                output.addAll(TableDump.dump(table(w[1])));
            }
            case "mirroring_add_mc" -> {
                int session = (int) parseNumber(arg(w, 1), 15).longValue();
                p.mirrorSessions.put(session, new Program.Mirror(-1, Multicast.mgid(w, 2, 3)));
            }
            case "mirroring_delete" -> {
                int session = (int) parseNumber(arg(w, 1), 15).longValue();
                if (p.mirrorSessions.remove(session) == null) {
                    throw new IllegalArgumentException("no mirror session " + session);
                }
            }
            default -> {
                if (!p.multicast.command(w)) {
                    throw new IllegalArgumentException("unknown or unsupported command '" + cmd + "'");
                }
            }
        }
    }

    private record Rates(double[] rates, long[] bursts) {
    }

    /** RATE:BURST pairs from word {@code from} on: rates in units per microsecond, bursts in units. */
    private static Rates rates(String[] w, int from, int count) {
        int n = w.length - from;
        if (n != count) {
            throw new IllegalArgumentException(w[0] + ": expected " + count + " RATE:BURST pairs, got " + Math.max(0, n));
        }
        double[] r = new double[n];
        long[] b = new long[n];
        for (int i = 0; i < n; i++) {
            String s = w[from + i];
            int colon = separator(s, s.indexOf(':'), "meter rate", "RATE:BURST");
            try {
                r[i] = Double.parseDouble(s.substring(0, colon));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a rate: '" + s.substring(0, colon) + "'");
            }
            b[i] = parseNumber(s.substring(colon + 1), 32).longValue();
        }
        return new Rates(r, b);
    }

    private int meterArray(String name) {
        if (directMeterTable(name) != null) {
            throw new IllegalArgumentException("meter " + name + " is direct: set its rates per entry with meter_set_rates");
        }
        return index(java.util.Arrays.stream(p.externs.meterSpecs).map(Meter.Spec::name).toArray(String[]::new),
                name, "meter array");
    }

    /** The table whose direct meter has this name (in full or by a unique suffix), or null. */
    private Table directMeterTable(String name) {
        Map<String, Table> m = new java.util.LinkedHashMap<>();
        for (Table t : p.tables) {
            if (t.directMeter != null) {
                m.put(t.directMeter.name(), t);
            }
        }
        try {
            return byName(m, name, "direct meter");
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The full name of a counter array given in full or by a unique dotted suffix. */
    private String counterName(String name) {
        return p.externs.counterNames[index(p.externs.counterNames, name, "counter")];
    }

    private static void words(String[] w, int n) {
        if (w.length != n) {
            throw new IllegalArgumentException(w[0] + " takes " + (n - 1) + " argument" + (n == 2 ? "" : "s") + ", got "
                    + (w.length - 1));
        }
    }

    private static String arg(String[] w, int i) {
        if (i >= w.length) {
            throw new IllegalArgumentException(w[0] + ": missing argument " + i);
        }
        return w[i];
    }

    private static int arrow(String[] w) {
        for (int i = 0; i < w.length; i++) {
            if (w[i].equals("=>")) {
                return i;
            }
        }
        throw new IllegalArgumentException(w[0] + ": missing '=>'");
    }

    private static int handle(String s) {
        return (int) parseNumber(s, 31).longValue();
    }

    private static int cell(String s, int size) {
        long i = parseNumber(s, 32).longValue();
        if (i >= size) {
            throw new IllegalArgumentException("index " + i + " out of 0.." + (size - 1));
        }
        return (int) i;
    }

    private Table table(String name) {
        Map<String, Table> m = new java.util.LinkedHashMap<>();
        for (Table t : p.tables) {
            m.put(t.name, t);
        }
        return byName(m, name, "table");
    }

    /**
     * An action of table {@code t} by name (in full or by a unique suffix). p4c may emit one action under one name
     * several times, once per table, so the name is looked up among the table's actions, as simple_switch_CLI does.
     */
    private Action action(Table t, String name) {
        Map<String, Action> own = new java.util.LinkedHashMap<>();
        for (Action a : t.actions) {
            own.put(a.name, a);
        }
        try {
            return byName(own, name, "action");
        } catch (IllegalArgumentException e) {
            Action a = byName(p.actions, name, "action");
            throw new IllegalArgumentException("action " + a.name + " is not an action of table " + t.name);
        }
    }

    /** An action of a table over action profile {@code prof} (the first such table's), by name. */
    private Action action(Table.Profile prof, String name) {
        for (Table t : p.tables) {
            if (t.profile == prof) {
                return action(t, name);
            }
        }
        return byName(p.actions, name, "action");
    }

    private ActionData member(Table t, String handle) {
        if (t.profile == null) {
            throw new IllegalArgumentException("table " + t.name + " has no action profile");
        }
        return t.profile.member(handle(handle));
    }

    private ActionData group(Table t, String handle) {
        if (t.profile == null) {
            throw new IllegalArgumentException("table " + t.name + " has no action profile");
        }
        return ActionData.ofGroup(t.profile.group(handle(handle)));
    }

    /** True when an entry or default entry of a table over {@code prof} holds {@code d} (a member or a group). */
    private boolean usedByAnEntry(Table.Profile prof, ActionData d) {
        for (Table t : p.tables) {
            if (t.profile != prof) {
                continue;
            }
            if (same(t.defaultEntry, d)) {
                return true;
            }
            for (Table.Entry e : t.entries()) {
                if (same(e.data, d)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean same(ActionData a, ActionData b) {
        return a != null && (a == b || (a.group() != null && a.group() == b.group()));
    }

    /** A name in full, or a unique suffix after a dot ("ipv4_lpm" for "MyIngress.ipv4_lpm"). */
    static <T> T byName(Map<String, T> m, String name, String what) {
        T exact = m.get(name);
        if (exact != null) {
            return exact;
        }
        List<String> hits = new ArrayList<>();
        for (String k : m.keySet()) {
            if (k.endsWith("." + name)) {
                hits.add(k);
            }
        }
        if (hits.size() == 1) {
            return m.get(hits.getFirst());
        }
        throw new IllegalArgumentException(hits.isEmpty() ? "no " + what + " '" + name + "'"
                : what + " '" + name + "' is ambiguous: " + hits);
    }

    private static int index(String[] names, String name, String what) {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            m.put(names[i], i);
        }
        return byName(m, name, what);
    }

    private static ActionData data(Action a, String[] args) {
        if (args.length != a.paramWidths.length) {
            throw new IllegalArgumentException("action " + a.name + " takes " + a.paramWidths.length
                    + " parameters, got " + args.length);
        }
        BigInteger[] v = new BigInteger[args.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = parseNumber(args[i], a.paramWidths[i]);
        }
        return ActionData.of(a, v);
    }

    private static MatchParam[] keys(Table t, String[] k) {
        if (k.length != t.keys.length) {
            throw new IllegalArgumentException("table " + t.name + " has " + t.keys.length + " key fields, got "
                    + k.length);
        }
        MatchParam[] out = new MatchParam[k.length];
        for (int i = 0; i < k.length; i++) {
            Table.Key key = t.keys[i];
            String s = k[i];
            int bits = key.bits();
            out[i] = switch (key.kind()) {
                case EXACT, VALID -> MatchParam.exact(parseNumber(s, bits));
                case OPTIONAL -> s.equals("*") ? new MatchParam(Table.MatchKind.EXACT, BigInteger.ZERO,
                        BigInteger.ZERO, -1, null, null) : MatchParam.exact(parseNumber(s, bits));
                case LPM -> {
                    int slash = separator(s, s.lastIndexOf('/'), "lpm", "/PREFIX_LENGTH");
                    yield MatchParam.lpm(parseNumber(s.substring(0, slash), bits),
                            (int) parseNumber(s.substring(slash + 1), 16).longValue());
                }
                case TERNARY -> {
                    int amp = separator(s, s.indexOf("&&&"), "ternary", "VALUE&&&MASK");
                    yield MatchParam.ternary(parseNumber(s.substring(0, amp), bits),
                            parseNumber(s.substring(amp + 3), bits));
                }
                case RANGE -> {
                    int arrow = separator(s, s.indexOf("->"), "range", "START->END");
                    yield MatchParam.range(parseNumber(s.substring(0, arrow), bits),
                            parseNumber(s.substring(arrow + 2), bits));
                }
            };
        }
        return out;
    }

    /** {@code at}, where the separator of a {@code kind} key {@code s} stands; a key without it is refused. */
    private static int separator(String s, int at, String kind, String form) {
        if (at < 0) {
            throw new IllegalArgumentException(kind + " key '" + s + "' needs " + form);
        }
        return at;
    }

    /** A value in CLI syntax that must fit {@code bits} bits (decimal, 0x, 0b, IPv4, MAC, IPv6). */
    static BigInteger parseNumber(String s, int bits) {
        BigInteger v;
        try {
            if (s.matches("\\d+\\.\\d+\\.\\d+\\.\\d+")) {
                v = BigInteger.valueOf(Integer.toUnsignedLong(IpAddress.parseIpv4(s)));
            } else if (s.matches("([0-9a-fA-F]{1,2}:){5}[0-9a-fA-F]{1,2}") && bits == 48) {
                v = new BigInteger(s.replace(":", "").length() == 12 ? s.replace(":", "") : macHex(s), 16);
            } else if (s.contains(":")) {
                byte[] a = java.net.InetAddress.ofLiteral(s).getAddress();
                v = new BigInteger(1, a);
            } else if (s.startsWith("0x") || s.startsWith("0X")) {
                v = new BigInteger(s.substring(2), 16);
            } else if (s.startsWith("0b") || s.startsWith("0B")) {
                v = new BigInteger(s.substring(2), 2);
            } else {
                v = new BigInteger(s);
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a value: '" + s + "'");
        }
        if (v.signum() < 0 || v.bitLength() > bits) {
            throw new IllegalArgumentException("value '" + s + "' does not fit " + bits + " bits");
        }
        return v;
    }

    private static String macHex(String s) {
        StringBuilder b = new StringBuilder();
        for (String part : s.split(":")) {
            b.append(part.length() == 1 ? "0" + part : part);
        }
        return b.toString();
    }
}
