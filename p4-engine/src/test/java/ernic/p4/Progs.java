package ernic.p4;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Small bmv2 JSON programs for feature tests, in the form p4c emits (v1model's standard_metadata). */
final class Progs {
    private Progs() {
    }

    static final String STD_TYPE = """
            {"name":"standard_metadata","id":0,"fields":[["ingress_port",9,false],["egress_spec",9,false],
             ["egress_port",9,false],["instance_type",32,false],["packet_length",32,false],["mcast_grp",16,false],
             ["checksum_error",1,false],["parser_error",32,false],["egress_rid",16,false],["_padding",4,false]]}""";
    static final String STD_HEADER = """
            {"name":"standard_metadata","id":0,"header_type":"standard_metadata","metadata":true}""";

    /** A program: extra top-level attributes, header types and headers after standard_metadata, parse states,
     *  actions, ingress tables and conditionals (init_table first), deparser order. */
    static String program(String extra, String types, String headers, String states, String actions,
                          String tables, String conditionals, String init, String order) {
        return """
                {"__meta__":{"version":[2,23],"compiler":"test"},
                 "header_types":[%s%s],
                 "headers":[%s%s],
                 "errors":[["NoError",0],["PacketTooShort",1],["NoMatch",2],["StackOutOfBounds",3],["HeaderTooShort",4],
                   ["ParserTimeout",5],["ParserInvalidArgument",6],["MyError",7]],
                 "parsers":[{"name":"parser","id":0,"init_state":"start","parse_states":[%s]}],
                 "deparsers":[{"name":"deparser","id":0,"order":[%s],"primitives":[]}],
                 "actions":[%s],
                 "pipelines":[{"name":"ingress","id":0,"init_table":%s,"action_profiles":[],"tables":[%s],
                   "conditionals":[%s]},
                   {"name":"egress","id":1,"init_table":null,"tables":[],"action_profiles":[],"conditionals":[]}]
                 %s}
                """.formatted(STD_TYPE, types.isEmpty() ? "" : "," + types, STD_HEADER,
                headers.isEmpty() ? "" : "," + headers, states, order, actions,
                init == null ? "null" : "\"" + init + "\"", tables, conditionals,
                extra.isEmpty() ? "" : "," + extra);
    }

    static String field(String h, String f) {
        return "{\"type\":\"field\",\"value\":[\"" + h + "\",\"" + f + "\"]}";
    }

    static String hex(String v) {
        return "{\"type\":\"hexstr\",\"value\":\"" + v + "\"}";
    }

    static String assign(String dst, String src) {
        return "{\"op\":\"assign\",\"parameters\":[" + dst + "," + src + "]}";
    }

    static String action(String name, int id, String params, String prims) {
        return "{\"name\":\"" + name + "\",\"id\":" + id + ",\"runtime_data\":[" + params + "],\"primitives\":[" + prims + "]}";
    }

    /** A keyless table that always runs one action (p4c's form of a direct action call). */
    static String always(String name, int id, String action, int actionId, String next) {
        return """
                {"name":"%s","id":%d,"key":[],"match_type":"exact","type":"simple","max_size":1,"with_counters":false,
                 "support_timeout":false,"direct_meters":null,"action_ids":[%d],"actions":["%s"],"base_default_next":%s,
                 "next_tables":{"%s":%s},"default_entry":{"action_id":%d,"action_const":true,"action_data":[],
                 "action_entry_const":true}}""".formatted(name, id, actionId, action, q(next), action, q(next), actionId);
    }

    static String q(String s) {
        return s == null ? "null" : "\"" + s + "\"";
    }

    static String egressSpec(String v) {
        return assign(field("standard_metadata", "egress_spec"), hex(v));
    }

    static String extract(String h) {
        return "{\"op\":\"extract\",\"parameters\":[{\"type\":\"regular\",\"value\":\"" + h + "\"}]}";
    }

    static String state(String name, int id, String ops, String key, String transitions) {
        return "{\"name\":\"" + name + "\",\"id\":" + id + ",\"parser_ops\":[" + ops + "],\"transition_key\":[" + key
                + "],\"transitions\":[" + transitions + "]}";
    }

    static String dflt(String next) {
        return "{\"type\":\"default\",\"value\":null,\"mask\":null,\"next_state\":" + q(next) + "}";
    }

    static String value(String v, String mask, String next) {
        return "{\"type\":\"hexstr\",\"value\":\"" + v + "\",\"mask\":" + q(mask) + ",\"next_state\":" + q(next) + "}";
    }

    static byte[] bytes(int... b) {
        byte[] out = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = (byte) b[i];
        }
        return out;
    }

    /** The frame the engine's last run sent. */
    static byte[] out(P4Engine e) {
        return java.util.Arrays.copyOf(e.output(), e.outputLength());
    }

    /** Applying these entries as file "f" is refused with this message ("f:LINE: what", as the user sees it). */
    static void assertRefused(P4Engine e, String entries, String message) {
        assertThatThrownBy(() -> e.applyEntries(entries, "f")).isInstanceOf(P4EntryError.class).hasMessage(message);
    }
}
