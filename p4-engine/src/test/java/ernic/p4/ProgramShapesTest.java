package ernic.p4;

import org.junit.jupiter.api.Test;


import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Program shapes bmv2 accepts: config_options, no parser or deparser, deparser primitives, a parse value set
 * used with two key layouts, header union stacks.
 */
class ProgramShapesTest {
    static final String T8 = "{\"name\":\"b_t\",\"id\":1,\"fields\":[[\"x\",8,false]]}";

    @Test
    void configOptionsAreKeptAndShown() {
        P4Engine e = Loader.load("{\"config_options\":{\"key1\":\"aaa\",\"key2\":12345}}");
        assertThat(e.configOptions()).containsEntry("key1", "aaa").containsEntry("key2", "12345");
        assertThat(e.summary()).contains("config options {key1=aaa, key2=12345}");
        assertThat(RefusalTest.refusalOf("{\"config_options\":{\"k\":[1]}}"))
                .isEqualTo("malformed program: config option 'k' is not a string, number or boolean (at $.config_options.k)");
    }

    @Test
    void withoutParserOrDeparserTheFrameLeavesAsItCame() {
        // bmv2's one_header.json: a header type and a header, nothing else. egress_spec stays 0: the TAP.
        P4Engine e = Loader.load("{\"header_types\":[" + T8 + "],\"headers\":[{\"name\":\"b\",\"id\":0,"
                + "\"header_type\":\"b_t\",\"metadata\":false}]}");
        byte[] f = bytes(1, 2, 3);
        assertThat(e.process(f, 0, 3, 1)).isEqualTo(P4Engine.PORT_TAP);
        assertThat(out(e)).isEqualTo(f);
        assertThat(e.summary()).contains("parser (none): 0 states").contains("deparser (none): 0 headers");
        // A parser without a deparser: the extracted header is not emitted, the rest is.
        P4Engine d = Loader.load(program("", T8, "{\"name\":\"b\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false}",
                state("start", 0, extract("b"), "", dflt(null)), action("nop", 0, "", ""),
                always("t", 0, "nop", 0, null), "", "t", "\"b\"").replace("\"deparsers\":[{\"name\":\"deparser\",\"id\":0,\"order\":[\"b\"],\"primitives\":[]}],", ""));
        d.process(f, 0, 3, 0);
        assertThat(out(d)).isEqualTo(bytes(2, 3));
    }

    @Test
    void deparserPrimitivesRunBeforeTheHeadersAreEmitted() {
        String prog = program("", T8, "{\"name\":\"b\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false}",
                state("start", 0, extract("b"), "", dflt(null)), action("nop", 0, "", ""),
                always("t", 0, "nop", 0, null), "", "t", "\"b\"")
                .replace("\"order\":[\"b\"],\"primitives\":[]", "\"order\":[\"b\"],\"primitives\":["
                        + "{\"op\":\"log_msg\",\"parameters\":[{\"type\":\"string\",\"value\":\"x {}\"},"
                        + "{\"type\":\"parameters_vector\",\"value\":[" + field("b", "x") + "]}]},"
                        + assign(field("b", "x"), hex("0x77")) + "]");
        P4Engine e = Loader.load(prog);
        byte[] f = bytes(1, 2);
        e.process(f, 0, 2, 0);
        assertThat(out(e)).isEqualTo(bytes(0x77, 2));
        assertThat(e.counters().get(P4Counter.LOG_MSGS)).isEqualTo(1);
    }

    /** bmv2's log_msg: each brace pair takes the next value in decimal, escaped braces are braces (primitives.cpp). */
    @Test
    void logMsgGoesToItsListenerFormattedAsBmv2FormatsIt() {
        String log = "{\"op\":\"log_msg\",\"parameters\":[{\"type\":\"string\",\"value\":"
                + "\"x={} \\\\{literal\\\\} y={x} extra={}\"},{\"type\":\"parameters_vector\",\"value\":["
                + field("b", "x") + "," + hex("0xff") + "]}]}";
        String b = "{\"name\":\"b\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false}";
        P4Engine e = Loader.load(program("", T8, b, state("start", 0, extract("b"), "", dflt(null)),
                action("say", 0, "", log), always("t", 0, "say", 0, null), "", "t", "\"b\""));
        byte[] f = bytes(200, 2);
        e.process(f, 0, 2, 0);
        assertThat(e.counters().get(P4Counter.LOG_MSGS)).as("counted without a listener").isEqualTo(1);
        java.util.List<String> texts = new java.util.ArrayList<>();
        e.onLogMsg(texts::add);
        e.process(f, 0, 2, 0);
        assertThat(texts).containsExactly("x=200 {literal} y=255 extra={}");
    }

    @Test
    void oneParseValueSetServesKeysOfTwoLayouts() {
        // pv is 16 bits: matched against a 16-bit field in start, and against two fields of 4 and 12 bits in next.
        String types = "{\"name\":\"w_t\",\"id\":1,\"fields\":[[\"w\",16,false]]},"
                + "{\"name\":\"s_t\",\"id\":2,\"fields\":[[\"a\",4,false],[\"b\",12,false]]},"
                + "{\"name\":\"m_t\",\"id\":3,\"fields\":[[\"n\",8,false]]}";
        String headers = "{\"name\":\"w\",\"id\":1,\"header_type\":\"w_t\",\"metadata\":false},"
                + "{\"name\":\"s\",\"id\":2,\"header_type\":\"s_t\",\"metadata\":false},"
                + "{\"name\":\"m\",\"id\":3,\"header_type\":\"m_t\",\"metadata\":true}";
        String vs = "{\"type\":\"parse_vset\",\"value\":\"pv\",\"mask\":null,\"next_state\":";
        String states = state("start", 0, extract("w"), field("w", "w"), vs + "\"next\"}," + dflt(null))
                + "," + state("next", 1, extract("s"), field("s", "a") + "," + field("s", "b"), vs + "\"hit\"}," + dflt(null))
                + "," + state("hit", 2, "{\"op\":\"set\",\"parameters\":[" + field("m", "n") + "," + hex("0x1") + "]}",
                "", dflt(null));
        P4Engine e = Loader.load(program("\"parse_vsets\":[{\"name\":\"pv\",\"id\":0,\"compressed_bitwidth\":16}]",
                types, headers, states, action("nop", 0, "", ""), always("t", 0, "nop", 0, null), "", "t", "\"w\",\"s\""));
        e.applyEntries("pvs_add pv 0x1234", "entries");
        byte[] f = bytes(0x12, 0x34, 0x12, 0x34);
        e.process(f, 0, 4, 0);
        assertThat(e.packet().phv.val[e.program.layout.first[e.program.layout.header("m")]]).isEqualTo(1);
        byte[] g = bytes(0x12, 0x34, 0x12, 0x35);
        e.process(g, 0, 4, 0);
        assertThat(e.packet().phv.val[e.program.layout.first[e.program.layout.header("m")]]).isZero();
        assertThat(e.packet().phv.valid[e.program.layout.header("s")]).isTrue();
        e.applyEntries("pvs_clear pv", "entries");
        e.process(f, 0, 4, 0);
        assertThat(e.packet().phv.valid[e.program.layout.header("s")]).isFalse();
    }

    /** bmv2's unions_e2e_options_bos: options (A: type, bos, val; B: type, bos) in a union stack of 2. */
    static P4Engine unionStack() {
        String types = "{\"name\":\"a_t\",\"id\":1,\"fields\":[[\"type\",8,false],[\"bos\",8,false],[\"v\",8,false]]},"
                + "{\"name\":\"b_t\",\"id\":2,\"fields\":[[\"type\",8,false],[\"bos\",8,false]]}";
        String headers = "{\"name\":\"a0\",\"id\":1,\"header_type\":\"a_t\",\"metadata\":false},"
                + "{\"name\":\"a1\",\"id\":2,\"header_type\":\"a_t\",\"metadata\":false},"
                + "{\"name\":\"b0\",\"id\":3,\"header_type\":\"b_t\",\"metadata\":false},"
                + "{\"name\":\"b1\",\"id\":4,\"header_type\":\"b_t\",\"metadata\":false}";
        String extra = "\"header_union_types\":[{\"name\":\"opt\",\"id\":0,\"headers\":[[\"A\",\"a_t\"],[\"B\",\"b_t\"]]}],"
                + "\"header_unions\":[{\"name\":\"u0\",\"id\":0,\"union_type\":\"opt\",\"header_ids\":[1,3]},"
                + "{\"name\":\"u1\",\"id\":1,\"union_type\":\"opt\",\"header_ids\":[2,4]}],"
                + "\"header_union_stacks\":[{\"name\":\"options\",\"id\":0,\"union_type\":\"opt\",\"header_union_ids\":[0,1]}]";
        String states = state("start", 0, "", "{\"type\":\"lookahead\",\"value\":[0,8]}",
                value("0x0a", null, "pa") + "," + value("0x0b", null, "pb"))
                + "," + unionState("pa", 1, "A") + "," + unionState("pb", 2, "B");
        return Loader.load(program(extra, types, headers, states, action("nop", 0, "", ""),
                always("t", 0, "nop", 0, null), "", "t", "\"a0\",\"b0\",\"a1\",\"b1\""));
    }

    static String unionState(String name, int id, String member) {
        return state(name, id, "{\"op\":\"extract\",\"parameters\":[{\"type\":\"union_stack\",\"value\":[\"options\",\""
                + member + "\"]}]}", "{\"type\":\"union_stack_field\",\"value\":[\"options\",\"" + member + "\",\"bos\"]}",
                value("0x00", null, "start") + "," + dflt(null));
    }

    @Test
    void headerUnionStacksExtractIntoTheNextUnionAndEmitInDeparserOrder() {
        P4Engine e = unionStack();
        Layout l = e.program.layout;
        // B (not bottom), then A (bottom of stack), then payload.
        byte[] f = bytes(0x0b, 0x00, 0x0a, 0x01, 0x55, 0x99);
        e.process(f, 0, f.length, 0);
        assertThat(ParserFeaturesTest.parserError(e)).isZero();
        boolean[] v = e.packet().phv.valid;
        assertThat(new boolean[] {v[l.header("a0")], v[l.header("b0")], v[l.header("a1")], v[l.header("b1")]})
                .containsExactly(false, true, true, false);
        assertThat(out(e)).isEqualTo(f);
        // A third option does not fit a stack of two: StackOutOfBounds.
        byte[] g = bytes(0x0b, 0x00, 0x0b, 0x00, 0x0a, 0x01, 0x55);
        e.process(g, 0, g.length, 0);
        assertThat(ParserFeaturesTest.parserError(e)).isEqualTo(3);
        assertThat(e.summary()).contains("header stacks 0, header unions 2, header union stacks 1");
    }

    /**
     * simple_switch counts add_header and remove_header into the packet length egress sees (its primitives.cpp):
     * a 4-byte frame whose 1-byte header b ingress removes shows packet_length 3 in egress.
     */
    @Test
    void egressSeesThePacketLengthAfterRemovedAndAddedHeaders() {
        String types = T8 + ",{\"name\":\"c_t\",\"id\":2,\"fields\":[[\"y\",16,false]]}";
        String headers = "{\"name\":\"a\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false},"
                + "{\"name\":\"b\",\"id\":2,\"header_type\":\"b_t\",\"metadata\":false},"
                + "{\"name\":\"c\",\"id\":3,\"header_type\":\"c_t\",\"metadata\":false}";
        String header = "{\"type\":\"header\",\"value\":\"%s\"}";
        String actions = action("shrink", 0, "", "{\"op\":\"remove_header\",\"parameters\":[" + header.formatted("b")
                + "]},{\"op\":\"remove_header\",\"parameters\":[" + header.formatted("b") + "]}")
                + "," + action("grow", 1, "", "{\"op\":\"add_header\",\"parameters\":[" + header.formatted("c") + "]}")
                + "," + action("show", 2, "", assign(field("a", "x"), field("standard_metadata", "packet_length")));
        String prog = program("", types, headers, state("start", 0, extract("a") + "," + extract("b"), "", dflt(null)),
                actions, always("t", 0, "shrink", 0, "u") + "," + always("u", 1, "grow", 1, null), "", "t", "\"a\",\"b\",\"c\"")
                .replace("\"init_table\":null,\"tables\":[]", "\"init_table\":\"e\",\"tables\":[" + always("e", 2, "show", 2, null) + "]");
        P4Engine e = Loader.load(prog);
        e.process(bytes(1, 2, 3, 4), 0, 4, 0);
        // b removed (once: removing an invalid header changes nothing), c (2 bytes) added: 4 - 1 + 2 = 5.
        assertThat(out(e)).isEqualTo(bytes(5, 0, 0, 3, 4));
    }

    /** p4c emits one action per table under one name (NoAction, _nop): the CLI finds it among the table's. */
    @Test
    void actionNamesAreLookedUpAmongTheTablesOwn() {
        String actions = action("nop", 0, "", "") + "," + action("nop", 1, "", "");
        P4Engine e = Loader.load(program("", "", "", state("start", 0, "", "", dflt(null)), actions,
                always("t", 0, "nop", 0, "u") + "," + always("u", 1, "nop", 1, null), "", "t", "")
                .replace("\"action_const\":true", "\"action_const\":false")
                .replace("\"action_entry_const\":true", "\"action_entry_const\":false"));
        e.applyEntries("table_set_default t nop\ntable_set_default u nop", "entries");
    }

    /** simple_switch starts egress with egress_spec 512, which its 9 bits keep as 0; the frame still leaves on 1. */
    @Test
    void egressStartsWithEgressSpecOnePastTheDropPort() {
        String headers = "{\"name\":\"b\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false}";
        String actions = action("out1", 0, "", egressSpec("0x1")) + ","
                + action("show", 1, "", assign(field("b", "x"), field("standard_metadata", "egress_spec")));
        String prog = program("", T8, headers, state("start", 0, extract("b"), "", dflt(null)), actions,
                always("t", 0, "out1", 0, null), "", "t", "\"b\"")
                .replace("\"init_table\":null,\"tables\":[]", "\"init_table\":\"e\",\"tables\":[" + always("e", 1, "show", 1, null) + "]");
        P4Engine e = Loader.load(prog);
        assertThat(e.process(bytes(9, 8), 0, 2, 0)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(out(e)).isEqualTo(bytes(0, 8));
    }

    /** Older p4c numbers NoError 1 (bmv2's parser_error.json): parser_error says NoError with that number. */
    @Test
    void parserErrorIsSetEvenWithoutAnError() {
        String headers = "{\"name\":\"b\",\"id\":1,\"header_type\":\"b_t\",\"metadata\":false}";
        String prog = program("", T8, headers, state("start", 0, extract("b"), "", dflt(null)),
                action("show", 0, "", assign(field("b", "x"), field("standard_metadata", "parser_error"))),
                always("t", 0, "show", 0, null), "", "t", "\"b\"")
                .replace("[\"NoError\",0],[\"PacketTooShort\",1]", "[\"NoError\",1],[\"PacketTooShort\",0]");
        P4Engine e = Loader.load(prog);
        e.process(bytes(9, 8), 0, 2, 0);
        assertThat(out(e)).isEqualTo(bytes(1, 8));
    }
}
