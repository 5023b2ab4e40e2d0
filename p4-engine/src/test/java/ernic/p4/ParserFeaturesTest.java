package ernic.p4;

import org.junit.jupiter.api.Test;


import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Parser features: stacks, stack_field keys, lookahead, value/mask transitions, extract_VL, verify,
 *  advance, parse value sets and the parser errors, each worked by hand from the P4 and bmv2 specs. */
class ParserFeaturesTest {
    static final String META = "{\"name\":\"meta_t\",\"id\":9,\"fields\":[[\"n\",8,false]]}";
    static final String META_H = "{\"name\":\"meta\",\"id\":9,\"header_type\":\"meta_t\",\"metadata\":true}";

    static P4Engine stacks() {
        String types = "{\"name\":\"tag_t\",\"id\":1,\"fields\":[[\"bos\",1,false],[\"val\",7,false]]},"
                + "{\"name\":\"data_t\",\"id\":2,\"fields\":[[\"x\",8,false]]}," + META;
        String headers = "{\"name\":\"tags[0]\",\"id\":1,\"header_type\":\"tag_t\",\"metadata\":false},"
                + "{\"name\":\"tags[1]\",\"id\":2,\"header_type\":\"tag_t\",\"metadata\":false},"
                + "{\"name\":\"tags[2]\",\"id\":3,\"header_type\":\"tag_t\",\"metadata\":false},"
                + "{\"name\":\"data\",\"id\":4,\"header_type\":\"data_t\",\"metadata\":false}," + META_H;
        String states = state("start", 0, "{\"op\":\"extract\",\"parameters\":[{\"type\":\"stack\",\"value\":\"tags\"}]}",
                "{\"type\":\"stack_field\",\"value\":[\"tags\",\"bos\"]}", value("0x01", null, "look") + "," + dflt("start"))
                + "," + state("look", 1, "", "{\"type\":\"lookahead\",\"value\":[0,8]}",
                value("0xa0", "0xf0", "get") + "," + dflt(null))
                + "," + state("get", 2, extract("data"), "", dflt(null));
        String size = "{\"type\":\"expression\",\"value\":{\"op\":\"size_stack\",\"left\":null,"
                + "\"right\":{\"type\":\"header_stack\",\"value\":\"tags\"}}}";
        String actions = action("count", 0, "", assign(field("meta", "n"), size));
        String extra = "\"header_stacks\":[{\"name\":\"tags\",\"id\":0,\"header_type\":\"tag_t\",\"size\":3,\"header_ids\":[1,2,3]}]";
        return Loader.load(program(extra, types, headers, states, actions, always("t", 0, "count", 0, null), "", "t",
                "\"tags[0]\",\"tags[1]\",\"tags[2]\",\"data\""));
    }

    static long parserError(P4Engine e) {
        return e.program.std.parserError().num(e.packet());
    }

    @Test
    void stacksLookaheadAndMaskedTransitions() {
        P4Engine e = stacks();
        byte[] f = bytes(0x00, 0x00, 0x81, 0xa5, 0x11);
        assertThat(e.process(f, 0, f.length, 0)).isEqualTo(0);
        assertThat(parserError(e)).isZero();
        assertThat(e.packet().phv.val[e.program.layout.first[e.program.layout.header("meta")]]).isEqualTo(3);
        assertThat(Progs.out(e)).isEqualTo(f);
        byte[] g = bytes(0x80, 0x55);
        e.process(g, 0, g.length, 0);
        assertThat(parserError(e)).isZero();
        assertThat(e.packet().phv.valid[e.program.layout.header("data")]).isFalse();
        assertThat(Progs.out(e)).isEqualTo(g);
    }

    @Test
    void stackOverflowAndShortFramesAreParserErrors() {
        P4Engine e = stacks();
        byte[] four = bytes(0, 0, 0, 0);
        e.process(four, 0, 4, 0);
        assertThat(parserError(e)).isEqualTo(3);
        byte[] one = bytes(0);
        e.process(one, 0, 1, 0);
        assertThat(parserError(e)).isEqualTo(1);
        byte[] noLookahead = bytes(0x80);
        e.process(noLookahead, 0, 1, 0);
        assertThat(parserError(e)).isEqualTo(1);
        assertThat(e.counters().get(P4Counter.PARSER_ERRORS)).isEqualTo(3);
    }

    static P4Engine varLen() {
        String types = "{\"name\":\"len_t\",\"id\":1,\"fields\":[[\"len\",8,false]]},"
                + "{\"name\":\"opt_t\",\"id\":2,\"fields\":[[\"data\",\"*\"]],\"max_length\":8},"
                + "{\"name\":\"h2_t\",\"id\":3,\"fields\":[[\"k\",12,false],[\"j\",4,false]]}," + META;
        String headers = "{\"name\":\"len\",\"id\":1,\"header_type\":\"len_t\",\"metadata\":false},"
                + "{\"name\":\"opt\",\"id\":2,\"header_type\":\"opt_t\",\"metadata\":false},"
                + "{\"name\":\"h2\",\"id\":3,\"header_type\":\"h2_t\",\"metadata\":false}," + META_H;
        String bits = "{\"type\":\"expression\",\"value\":{\"op\":\"&\",\"left\":{\"type\":\"expression\",\"value\":"
                + "{\"op\":\"<<\",\"left\":" + field("len", "len") + ",\"right\":" + hex("0x3") + "}},\"right\":"
                + hex("0xffffffff") + "}}";
        String notFive = "{\"type\":\"expression\",\"value\":{\"op\":\"!=\",\"left\":" + field("len", "len")
                + ",\"right\":" + hex("0x05") + "}}";
        String states = state("start", 0, extract("len") + ",{\"op\":\"extract_VL\",\"parameters\":[{\"type\":\"regular\","
                        + "\"value\":\"opt\"}," + bits + "]},{\"op\":\"verify\",\"parameters\":[" + notFive + ","
                        + hex("0x7") + "]},{\"op\":\"advance\",\"parameters\":[" + hex("0x8") + "]}," + extract("h2"),
                field("h2", "k"), "{\"type\":\"parse_vset\",\"value\":\"pvs\",\"mask\":null,\"next_state\":\"marked\"},"
                        + dflt(null))
                + "," + state("marked", 1, "{\"op\":\"set\",\"parameters\":[" + field("meta", "n") + "," + hex("0x1")
                + "]}", "", dflt(null));
        String extra = "\"parse_vsets\":[{\"name\":\"pvs\",\"id\":0,\"compressed_bitwidth\":12}]";
        return Loader.load(program(extra, types, headers, states, action("nop", 0, "", ""),
                always("t", 0, "nop", 0, null), "", "t", "\"len\",\"opt\",\"h2\""));
    }

    static long metaN(P4Engine e) {
        return e.packet().phv.val[e.program.layout.first[e.program.layout.header("meta")]];
    }

    @Test
    void variableLengthVerifyAdvanceAndParseValueSets() {
        P4Engine e = varLen();
        byte[] f = bytes(2, 0xaa, 0xbb, 0xff, 0x12, 0x34, 0x99);
        assertThat(e.process(f, 0, f.length, 0)).isEqualTo(0);
        assertThat(parserError(e)).isZero();
        assertThat(metaN(e)).isZero();
        // The advanced-over byte is not part of any header, so it does not leave.
        assertThat(Progs.out(e)).isEqualTo(bytes(2, 0xaa, 0xbb, 0x12, 0x34, 0x99));
        e.applyEntries("pvs_add pvs 0x123\n", "entries");
        e.process(f, 0, f.length, 0);
        assertThat(metaN(e)).isEqualTo(1);
        byte[] five = bytes(5, 1, 2, 3, 4, 5, 0, 0, 0);
        e.process(five, 0, five.length, 0);
        assertThat(parserError(e)).isEqualTo(7);
        byte[] nine = bytes(9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0);
        e.process(nine, 0, nine.length, 0);
        assertThat(parserError(e)).isEqualTo(4);
    }

    @Test
    void aParserThatLoopsWithoutConsumingTimesOut() {
        P4Engine e = Loader.load(program("", "", "", state("start", 0, "", "", dflt("start")),
                action("nop", 0, "", ""), always("t", 0, "nop", 0, null), "", "t", ""));
        byte[] f = bytes(1, 2, 3);
        assertThat(e.process(f, 0, 3, 0)).isEqualTo(0);
        assertThat(parserError(e)).isEqualTo(5);
        assertThat(Progs.out(e)).isEqualTo(f);
    }
}
