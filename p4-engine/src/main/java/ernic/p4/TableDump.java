package ernic.p4;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * {@code table_dump TABLE}: simple_switch_CLI's dump, one line per entry and one for the default entry, with its
 * pieces as it prints them (the handle in hex; each key field's name, match kind and value in hex: exact
 * {@code V}, lpm {@code V/LEN}, ternary {@code V &&& MASK}, range {@code LO -> HI}; the priority; the action and its
 * arguments in hex, or an action profile's member or group):
 * <pre>
 * MyIngress.dmac entry 0x0: ethernet.dstAddr EXACT 000000000001 => MyIngress.forward - 0001
 * MyIngress.dmac default: MyIngress.broadcast - 0001
 * </pre>
 */
final class TableDump {
    private static final HexFormat HEX = HexFormat.of();

    private TableDump() {
    }

    static List<String> dump(Table t) {
        List<String> out = new ArrayList<>();
        List<Table.Entry> entries = new ArrayList<>(t.entries()); // in precedence order: dumped by handle
        entries.sort(java.util.Comparator.comparingInt(e -> e.handle));
        for (Table.Entry e : entries) {
            StringBuilder b = new StringBuilder(t.name).append(" entry 0x").append(Integer.toHexString(e.handle))
                    .append(':');
            for (int i = 0; i < t.keys.length; i++) {
                Table.Key k = t.keys[i];
                b.append(i == 0 ? " " : ", ").append(k.name()).append(' ').append(k.kind().name()).append(' ')
                        .append(match(t, k, e));
            }
            if (t.usesPriority()) {
                b.append(" priority ").append(e.priority);
            }
            out.add(b.append(" => ").append(action(t, e.data)).toString());
        }
        out.add(t.name + " default: " + (t.defaultEntry == null ? "none" : action(t, t.defaultEntry)));
        return out;
    }

    private static String match(Table t, Table.Key k, Table.Entry e) {
        String v = hex(e.value, k);
        return switch (k.kind()) {
            case LPM -> v + "/" + e.prefix;
            case TERNARY, OPTIONAL -> v + " &&& " + hex(e.mask, k);
            case RANGE -> hex(e.lo, k) + " -> " + hex(e.hi, k);
            default -> v;
        };
    }

    private static String hex(byte[] key, Table.Key k) {
        return key == null ? "" : HEX.formatHex(key, k.offset(), k.offset() + k.bytes());
    }

    /** "ACTION - ARG, ARG" (each argument in hex over its parameter's bytes), or an action profile's member/group. */
    private static String action(Table t, ActionData d) {
        if (d.group() != null) {
            return "group(" + d.group().handle + ")";
        }
        if (t.profile != null) {
            int m = t.profile.members.indexOf(d);
            if (m >= 0) {
                return "member(" + m + ")";
            }
        }
        StringBuilder b = new StringBuilder(d.action().name).append(" -");
        for (int i = 0; i < d.action().paramWidths.length; i++) {
            int bytes = (d.action().paramWidths[i] + 7) / 8;
            byte[] v = d.wide()[i] != null ? d.wide()[i]
                    : ActionData.toBytes(java.math.BigInteger.valueOf(d.args()[i]), bytes);
            b.append(i == 0 ? " " : ", ").append(HEX.formatHex(v));
        }
        return b.toString();
    }
}
