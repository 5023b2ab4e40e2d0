package ernic.p4;

import org.junit.jupiter.api.Test;


import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Header unions, stack push, add_header/remove_header and fields wider than 64 bits, worked by hand. */
class HeaderOpsTest {
    @Test
    void aMemberMadeValidInvalidatesTheOtherMembersOfItsUnion() {
        String types = "{\"name\":\"a_t\",\"id\":1,\"fields\":[[\"x\",8,false]]},"
                + "{\"name\":\"b_t\",\"id\":2,\"fields\":[[\"y\",16,false]]}";
        String headers = "{\"name\":\"u.a\",\"id\":1,\"header_type\":\"a_t\",\"metadata\":false},"
                + "{\"name\":\"u.b\",\"id\":2,\"header_type\":\"b_t\",\"metadata\":false}";
        String extra = "\"header_union_types\":[{\"name\":\"u_t\",\"id\":0,\"headers\":[[\"a\",\"a_t\"],[\"b\",\"b_t\"]]}],"
                + "\"header_unions\":[{\"name\":\"u\",\"id\":0,\"union_type\":\"u_t\",\"header_ids\":[1,2]}]";
        String prims = "{\"op\":\"add_header\",\"parameters\":[{\"type\":\"header\",\"value\":\"u.b\"}]},"
                + assign(field("u.b", "y"), hex("0x1234"));
        String cond = "{\"name\":\"c\",\"id\":0,\"expression\":{\"type\":\"expression\",\"value\":{\"op\":\"valid_union\","
                + "\"left\":null,\"right\":{\"type\":\"header_union\",\"value\":\"u\"}}},\"true_next\":\"t\",\"false_next\":null}";
        P4Engine e = Loader.load(program(extra, types, headers, state("start", 0, extract("u.a"), "", dflt(null)),
                action("swap", 0, "", prims), always("t", 0, "swap", 0, null), cond, "c", "\"u.a\",\"u.b\""));
        byte[] f = bytes(0x01, 0xaa, 0xbb);
        assertThat(e.process(f, 0, 3, 0)).isEqualTo(0);
        assertThat(out(e)).isEqualTo(bytes(0x12, 0x34, 0xaa, 0xbb));
    }

    @Test
    void pushMovesElementsUpAndAddHeaderStartsFromZero() {
        String types = "{\"name\":\"a_t\",\"id\":1,\"fields\":[[\"x\",8,false],[\"z\",8,false]]}";
        String headers = "{\"name\":\"s[0]\",\"id\":1,\"header_type\":\"a_t\",\"metadata\":false},"
                + "{\"name\":\"s[1]\",\"id\":2,\"header_type\":\"a_t\",\"metadata\":false}";
        String extra = "\"header_stacks\":[{\"name\":\"s\",\"id\":0,\"header_type\":\"a_t\",\"size\":2,\"header_ids\":[1,2]}]";
        String prims = "{\"op\":\"push\",\"parameters\":[{\"type\":\"header_stack\",\"value\":\"s\"}," + hex("0x1") + "]},"
                + "{\"op\":\"add_header\",\"parameters\":[{\"type\":\"header\",\"value\":\"s[0]\"}]},"
                + assign(field("s[0]", "x"), hex("0x55"));
        P4Engine e = Loader.load(program(extra, types, headers,
                state("start", 0, "{\"op\":\"extract\",\"parameters\":[{\"type\":\"stack\",\"value\":\"s\"}]}", "", dflt(null)),
                action("push", 0, "", prims), always("t", 0, "push", 0, null), "", "t", "\"s[0]\",\"s[1]\""));
        byte[] f = bytes(0x01, 0x02, 0x99);
        e.process(f, 0, 3, 0);
        assertThat(out(e)).isEqualTo(bytes(0x55, 0x00, 0x01, 0x02, 0x99));
    }

    @Test
    void removeHeaderLeavesItOutOfTheFrame() {
        String types = "{\"name\":\"a_t\",\"id\":1,\"fields\":[[\"x\",8,false]]}";
        String headers = "{\"name\":\"a\",\"id\":1,\"header_type\":\"a_t\",\"metadata\":false}";
        P4Engine e = Loader.load(program("", types, headers, state("start", 0, extract("a"), "", dflt(null)),
                action("strip", 0, "", "{\"op\":\"remove_header\",\"parameters\":[{\"type\":\"header\",\"value\":\"a\"}]}"),
                always("t", 0, "strip", 0, null), "", "t", "\"a\""));
        byte[] f = bytes(0x01, 0x02);
        e.process(f, 0, 2, 0);
        assertThat(out(e)).isEqualTo(bytes(0x02));
    }

    @Test
    void fieldsWiderThan64BitsMatchAndAssign() {
        String types = "{\"name\":\"w_t\",\"id\":1,\"fields\":[[\"addr\",128,false]]}";
        String headers = "{\"name\":\"w\",\"id\":1,\"header_type\":\"w_t\",\"metadata\":false}";
        String table = """
                {"name":"rewrite","id":0,"key":[{"match_type":"exact","target":["w","addr"],"mask":null}],
                 "match_type":"exact","type":"simple","max_size":4,"with_counters":false,"support_timeout":false,
                 "direct_meters":null,"action_ids":[0],"actions":["set"],"base_default_next":null,
                 "next_tables":{"set":null},"default_entry":null}""";
        P4Engine e = Loader.load(program("", types, headers, state("start", 0, extract("w"), "", dflt(null)),
                action("set", 0, "{\"name\":\"a\",\"bitwidth\":128}",
                        assign(field("w", "addr"), "{\"type\":\"runtime_data\",\"value\":0}")),
                table, "", "rewrite", "\"w\""));
        e.applyEntries("table_add rewrite set 2001:db8::1 => 2001:db8::2", "entries");
        byte[] f = new byte[17];
        f[0] = 0x20;
        f[1] = 0x01;
        f[2] = 0x0d;
        f[3] = (byte) 0xb8;
        f[15] = 1;
        f[16] = 0x77;
        e.process(f, 0, 17, 0);
        byte[] want = f.clone();
        want[15] = 2;
        assertThat(out(e)).isEqualTo(want);
        f[15] = 3;
        e.process(f, 0, 17, 0);
        assertThat(out(e)).as("no entry: unchanged").isEqualTo(f);
    }
}
