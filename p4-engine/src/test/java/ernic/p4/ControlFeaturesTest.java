package ernic.p4;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.zip.CRC32;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tables, actions, calculations and the port model, worked by hand. */
class ControlFeaturesTest {
    static final String K = "{\"name\":\"k_t\",\"id\":1,\"fields\":[[\"a\",8,false],[\"b\",16,false]]}";
    static final String K_H = "{\"name\":\"k\",\"id\":1,\"header_type\":\"k_t\",\"metadata\":false}";
    static final String START = state("start", 0, extract("k"), "", dflt(null));

    static String table(String name, int id, String matchType, String keys, String actions, String ids,
                        String nextTables, String dflt, String extra) {
        return """
                {"name":"%s","id":%d,"key":[%s],"match_type":"%s","type":"simple","max_size":16,"with_counters":false,
                 "support_timeout":false,"direct_meters":null,"action_ids":[%s],"actions":[%s],"base_default_next":null,
                 "next_tables":{%s},"default_entry":%s %s}""".formatted(name, id, keys, matchType, ids, actions,
                nextTables, dflt, extra);
    }

    static P4Engine tables() {
        String actions = action("setout", 0, "{\"name\":\"v\",\"bitwidth\":8}",
                assign(field("k", "a"), "{\"type\":\"runtime_data\",\"value\":0}"))
                + "," + action("to_guest", 1, "", egressSpec("0x0001"));
        String keys = "{\"match_type\":\"ternary\",\"name\":\"k.a\",\"target\":[\"k\",\"a\"],\"mask\":null},"
                + "{\"match_type\":\"range\",\"name\":\"k.b\",\"target\":[\"k\",\"b\"],\"mask\":null}";
        String tern = table("tern", 0, "range", keys, "\"setout\"", "0", "\"__HIT__\":\"hit\",\"__MISS__\":null",
                "{\"action_id\":0,\"action_const\":false,\"action_data\":[\"0xee\"],\"action_entry_const\":false}", "");
        return Loader.load(program("", K, K_H, START, actions, tern + "," + always("hit", 1, "to_guest", 1, null), "",
                "tern", "\"k\""));
    }

    static int run(P4Engine e, int a, int b) {
        byte[] f = bytes(a, b >> 8, b & 0xff);
        int port = e.process(f, 0, f.length, P4Engine.PORT_TAP);
        return port < 0 ? port : (e.output()[0] & 0xff) | (port << 8);
    }

    @Test
    void ternaryAndRangeWithPrioritiesHitMissAndDelete() {
        P4Engine e = tables();
        e.applyEntries("""
                table_add tern setout 0x10&&&0xf0 0->100 => 1 10
                table_add tern setout 0x12&&&0xff 0->0xffff => 2 5   # handle 1: the lower number wins
                """, "entries");
        assertThat(run(e, 0x12, 50)).isEqualTo(0x102);
        assertThat(run(e, 0x15, 50)).isEqualTo(0x101);
        assertThat(run(e, 0x15, 200)).as("miss: default, and __MISS__ ends the pipeline").isEqualTo(0xee);
        e.applyEntries("table_delete tern 1", "entries");
        assertThat(run(e, 0x12, 50)).isEqualTo(0x101);
        assertThat(e.tableHits()[0]).isEqualTo(3);
        assertThat(e.tableMisses()[0]).isEqualTo(1);
        assertThatThrownBy(() -> e.applyEntries("\n\ntable_add tern setout 0x10&&&0xf0 0->100 => 1", "f.txt"))
                .isInstanceOf(P4EntryError.class).hasMessage("f.txt:3: table tern is range: entries need a priority");
        assertThatThrownBy(() -> e.applyEntries("table_add tern setout 0x100&&&0xff 0->1 => 1 1", "f.txt"))
                .hasMessageContaining("does not fit 8 bits");
        e.applyEntries("table_set_default tern setout 0x33\ntable_reset_default tern", "entries");
        assertThat(run(e, 0x15, 200)).as("the program's default again").isEqualTo(0xee);
        assertThatThrownBy(() -> e.applyEntries("mc_node_create 1 0 | 3", "f.txt"))
                .hasMessage("f.txt:1: mc_node_create: LAGs are not supported (the list after '|')");
    }

    @Test
    void lpmExactAndActionProfiles() {
        String actions = action("setout", 0, "{\"name\":\"v\",\"bitwidth\":8}",
                assign(field("k", "a"), "{\"type\":\"runtime_data\",\"value\":0}"));
        String lpm = table("route", 0, "lpm", "{\"match_type\":\"exact\",\"target\":[\"k\",\"a\"],\"mask\":null},"
                        + "{\"match_type\":\"lpm\",\"target\":[\"k\",\"b\"],\"mask\":null}", "\"setout\"", "0",
                "\"setout\":\"prof\"", "null", "");
        String prof = table("prof", 1, "exact", "{\"match_type\":\"exact\",\"target\":[\"k\",\"b\"],\"mask\":\"0x00ff\"}",
                "\"setout\"", "0", "\"setout\":null", "null", ",\"action_profile\":\"ap\"").replace("\"simple\"", "\"indirect\"");
        String json = program("", K, K_H, START, actions, lpm + "," + prof, "", "route", "\"k\"")
                .replaceFirst("\"action_profiles\":\\[]", "\"action_profiles\":[{\"name\":\"ap\",\"id\":0,\"max_size\":4}]");
        P4Engine e = Loader.load(json);
        e.applyEntries("""
                table_add route setout 1 0x1200/8 => 0x20
                table_add route setout 1 0x1230/12 => 0x30
                act_prof_create_member ap setout 0x77
                table_indirect_add prof 0x34 => 0
                """, "entries");
        assertThat(run(e, 1, 0x1234) & 0xff).as("longest prefix, then the profile member (b & 0xff == 0x34)")
                .isEqualTo(0x77);
        assertThat(run(e, 1, 0x1299) & 0xff).isEqualTo(0x20);
        assertThat(run(e, 2, 0x1234) & 0xff).as("exact part differs: miss, no default").isEqualTo(2);
    }

    @Test
    void calculationsGiveTheKnownVectors() {
        String types = K + ",{\"name\":\"s_t\",\"id\":2,\"fields\":[[\"s\",72,false]]},"
                + "{\"name\":\"m_t\",\"id\":3,\"fields\":[[\"h\",64,false]]}";
        String headers = K_H + ",{\"name\":\"s\",\"id\":2,\"header_type\":\"s_t\",\"metadata\":false},"
                + "{\"name\":\"m\",\"id\":3,\"header_type\":\"m_t\",\"metadata\":true}";
        String states = state("start", 0, extract("s"), "", dflt(null));
        StringBuilder calcs = new StringBuilder();
        StringBuilder actions = new StringBuilder();
        StringBuilder tables = new StringBuilder();
        String[] algos = {"crc16", "crc32", "crcCCITT", "csum16", "identity", "xor16", "const_identity"};
        for (int i = 0; i < algos.length; i++) {
            String algo = algos[i].equals("const_identity") ? "identity" : algos[i];
            String input = algos[i].equals("const_identity")
                    ? "{\"type\":\"hexstr\",\"value\":\"0x0102030405\",\"bitwidth\":40}" : field("s", "s");
            calcs.append(i > 0 ? "," : "").append("{\"name\":\"c").append(i).append("\",\"id\":").append(i)
                    .append(",\"algo\":\"").append(algo).append("\",\"input\":[").append(input).append("]}");
            actions.append(i > 0 ? "," : "").append(action("a" + i, i, "", "{\"op\":\"modify_field_with_hash_based_offset\","
                    + "\"parameters\":[" + field("m", "h") + "," + hex("0x0") + ",{\"type\":\"calculation\",\"value\":\"c" + i
                    + "\"}," + hex("0xffffffffffffffff") + "]}"));
            tables.append(i > 0 ? "," : "").append(always("t" + i, i, "a" + i, i, null));
        }
        byte[] digits = "123456789".getBytes();
        long csum = 0;
        long xor = 0;
        for (int i = 0; i < 9; i += 2) {
            long w = ((digits[i] & 0xff) << 8) | (i + 1 < 9 ? digits[i + 1] & 0xff : 0);
            csum += w;
            xor ^= w;
        }
        csum = (csum & 0xffff) + (csum >> 16);
        CRC32 crc = new CRC32();
        crc.update(digits);
        long[] want = {0xbb3d, 0xcbf43926L, 0x29b1, ~csum & 0xffff, 0x3132333435363738L, xor, 0x0102030405L};
        assertThat(crc.getValue()).isEqualTo(0xcbf43926L);
        for (int i = 0; i < algos.length; i++) {
            P4Engine e = Loader.load(program("\"calculations\":[" + calcs + "]", types, headers, states,
                    actions.toString(), tables.toString(), "", "t" + i, "\"s\""));
            e.process(digits, 0, digits.length, 0);
            long got = e.packet().phv.val[e.program.layout.first[e.program.layout.header("m")]];
            assertThat(got).as(algos[i]).isEqualTo(want[i]);
        }
    }

    static P4Engine ports(String prims, String egressPrims) {
        String actions = action("act", 0, "", prims) + "," + action("eg", 1, "", egressPrims) + ","
                + action("later", 2, "", assign(field("k", "a"), hex("0x99")));
        String json = program("", K, K_H, START, actions, always("t", 0, "act", 0, "t2") + ","
                + always("t2", 2, "later", 2, null), "", "t", "\"k\"");
        json = json.replace("{\"name\":\"egress\",\"id\":1,\"init_table\":null,\"tables\":[]",
                "{\"name\":\"egress\",\"id\":1,\"init_table\":\"e\",\"tables\":[" + always("e", 1, "eg", 1, null) + "]");
        return Loader.load(json);
    }

    @Test
    void thePortModel() {
        byte[] f = bytes(1, 2, 3, 4);
        assertThat(ports(egressSpec("0x0001"), "").process(f, 0, 4, 0)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(ports(egressSpec("0x0000"), "").process(f, 0, 4, 1)).isEqualTo(P4Engine.PORT_TAP);
        String back = assign(field("standard_metadata", "egress_spec"), field("standard_metadata", "ingress_port"));
        assertThat(ports(back, "").process(f, 0, 4, 1)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(ports(egressSpec("0x01ff"), "").process(f, 0, 4, 0)).isEqualTo(P4Engine.DROPPED);
        assertThat(ports(egressSpec("0x0005"), "").process(f, 0, 4, 0)).isEqualTo(P4Engine.DROPPED_NO_SUCH_PORT);
        assertThat(ports(assign(field("standard_metadata", "mcast_grp"), hex("0x1")), "").process(f, 0, 4, 0))
                .isEqualTo(P4Engine.DROPPED_MULTICAST);
        String dropInEgress = "{\"op\":\"mark_to_drop\",\"parameters\":[{\"type\":\"header\",\"value\":\"standard_metadata\"}]}";
        assertThat(ports(egressSpec("0x0001"), dropInEgress).process(f, 0, 4, 0)).isEqualTo(P4Engine.DROPPED);
        String fail = "{\"op\":\"assert\",\"parameters\":[{\"type\":\"bool\",\"value\":false}]}";
        assertThat(ports(fail, "").process(f, 0, 4, 0)).isEqualTo(P4Engine.DROPPED_ASSERT);
        // egress_port is egress_spec when egress runs: egress copies it into the frame.
        P4Engine e = ports(egressSpec("0x0001"), assign(field("k", "b"), field("standard_metadata", "egress_port")));
        assertThat(e.process(f, 0, 4, 0)).isEqualTo(1);
        assertThat(Arrays.copyOf(e.output(), 4)).isEqualTo(bytes(0x99, 0, 1, 4));
    }

    @Test
    void exitSkipsTheRestOfThePipeline() {
        P4Engine e = ports(egressSpec("0x0001") + ",{\"op\":\"exit\",\"parameters\":[]}", "");
        byte[] f = bytes(1, 2, 3);
        assertThat(e.process(f, 0, 3, 0)).isEqualTo(1);
        assertThat(e.output()[0]).as("table t2 did not run").isEqualTo((byte) 1);
    }
}
