package ernic.p4;

import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clones, resubmit, recirculate and digests as simple_switch makes them (simple_switch.cpp): what each copy starts
 * from, which metadata it keeps (its field list, the rest zero), its instance_type, and the order of outputs.
 * Header h is [x, tag, oth]; metadata m is [keep, other]; field list 1 keeps m.keep; learn list 1 is [h.x,
 * ingress_port]. The ingress table matches [h.x, instance_type], the egress one too.
 */
class ReplicationTest {
    static final String TYPES = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false],[\"tag\",8,false],[\"oth\",8,false]]},"
            + "{\"name\":\"m_t\",\"id\":2,\"fields\":[[\"keep\",8,false],[\"other\",8,false]]}";
    static final String HEADERS = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false},"
            + "{\"name\":\"m\",\"id\":2,\"header_type\":\"m_t\",\"metadata\":true}";
    static final String LISTS = "\"field_lists\":[{\"id\":1,\"name\":\"fl\",\"elements\":[" + field("m", "keep") + "]}],"
            + "\"learn_lists\":[{\"id\":1,\"name\":\"learn\",\"elements\":[" + field("h", "x") + ","
            + field("standard_metadata", "ingress_port") + "]}]";

    static String set(String h, String f, String v) {
        return assign(field(h, f), hex(v));
    }

    static String copy(String h, String f, String h2, String f2) {
        return assign(field(h, f), field(h2, f2));
    }

    static String call(String op, String... params) {
        return "{\"op\":\"" + op + "\",\"parameters\":[" + String.join(",", params) + "]}";
    }

    static String table(String name, int id, int first, int n) {
        StringBuilder ids = new StringBuilder();
        StringBuilder names = new StringBuilder();
        for (int i = first; i < first + n; i++) {
            ids.append(i == first ? "" : ",").append(i);
            names.append(i == first ? "" : ",").append("\"a").append(i).append("\"");
        }
        return """
                {"name":"%s","id":%d,"key":[{"match_type":"exact","target":["h","x"],"mask":null},
                 {"match_type":"exact","target":["standard_metadata","instance_type"],"mask":null}],"match_type":"exact",
                 "type":"simple","max_size":16,"with_counters":false,"support_timeout":false,"direct_meters":null,
                 "action_ids":[%s],"actions":[%s],"base_default_next":null,"next_tables":{},
                 "default_entry":{"action_id":%d,"action_const":false,"action_data":[],"action_entry_const":false}}"""
                .formatted(name, id, ids, names, first);
    }

    static P4Engine engine() {
        String[] a = {
            "",                                                                           // a0: nothing
            set("m", "keep", "0x42") + "," + set("m", "other", "0x99") + "," + set("h", "tag", "0xaa") + ","
                    + egressSpec("0x1") + "," + call("clone_ingress_pkt_to_egress", hex("0x5"), hex("0x1")),
            set("m", "keep", "0x7") + "," + set("m", "other", "0x9") + "," + call("resubmit", hex("0x1")),
            copy("h", "tag", "m", "keep") + "," + copy("h", "oth", "m", "other") + "," + egressSpec("0x0"),
            set("m", "keep", "0x3") + "," + set("h", "x", "0x4") + "," + egressSpec("0x0") + ","
                    + call("recirculate", hex("0x1")),
            call("resubmit", hex("0x1")),                                                 // a5: for ever
            set("m", "keep", "0x11") + "," + egressSpec("0x1"),
            egressSpec("0x0") + "," + call("generate_digest", hex("0x1"), hex("0x1")),
            // egress: a8 nothing, a9 show (tag = keep, oth = other), a10 clone at egress, a11 oth = keep
            "",
            copy("h", "tag", "m", "keep") + "," + copy("h", "oth", "m", "other"),
            set("h", "tag", "0xe0") + "," + call("clone_egress_pkt_to_egress", hex("0x6"), hex("0x1")),
            copy("h", "oth", "m", "keep"),
        };
        StringBuilder actions = new StringBuilder();
        for (int i = 0; i < a.length; i++) {
            actions.append(i == 0 ? "" : ",").append(action("a" + i, i, "", a[i]));
        }
        String prog = program(LISTS, TYPES, HEADERS, state("start", 0, extract("h"), "", dflt(null)),
                actions.toString(), table("ing", 0, 0, 8), "", "ing", "\"h\"")
                .replace("{\"name\":\"egress\",\"id\":1,\"init_table\":null,\"tables\":[]",
                        "{\"name\":\"egress\",\"id\":1,\"init_table\":\"eg\",\"tables\":[" + table("eg", 1, 8, 4) + "]");
        P4Engine e = Loader.load(prog);
        e.applyEntries("""
                table_add ing a1 1 0 =>
                table_add ing a2 2 0 =>
                table_add ing a3 2 6 =>
                table_add ing a4 3 0 =>
                table_add ing a3 4 4 =>
                table_add ing a5 5 0 =>
                table_add ing a5 5 6 =>
                table_add ing a6 9 0 =>
                table_add ing a7 8 0 =>
                table_add eg a9 1 1 =>
                table_add eg a10 9 0 =>
                table_add eg a11 9 2 =>
                """, "entries");
        return e;
    }

    static final byte[] PAYLOAD = {0x55, 0x66};

    static byte[] frame(int x) {
        return new byte[] {(byte) x, 0, 0, PAYLOAD[0], PAYLOAD[1]};
    }

    /** A new engine, given these entries, that sent frame x (entering on inPort) to this port as these bytes. */
    static P4Engine sent(String entries, int x, int inPort, int port, byte[] bytes) {
        P4Engine e = engine();
        e.applyEntries(entries, "entries");
        assertThat(e.process(frame(x), 0, 5, inPort)).isEqualTo(port);
        assertThat(out(e)).isEqualTo(bytes);
        return e;
    }

    @Test
    void ingressCloneIsTheFrameAsItEnteredWithItsFieldListAndInstanceType1() {
        P4Engine e = sent("mirroring_add 5 0", 1, 1, P4Engine.PORT_GUEST, Progs.bytes(1, 0xaa, 0, 0x55, 0x66));
        List<P4Engine.Copy> copies = e.copies();
        assertThat(copies).hasSize(1);
        // Parsed again from the original bytes (tag 0, not 0xaa); m.keep kept, m.other zero; egress saw instance 1.
        assertThat(copies.getFirst().verdict()).isEqualTo(P4Engine.PORT_TAP);
        assertThat(copies.getFirst().instanceType()).isEqualTo(1);
        assertThat(copies.getFirst().frame()).isEqualTo(Progs.bytes(1, 0x42, 0, 0x55, 0x66));
        assertThat(e.counters().get(P4Counter.CLONES)).isEqualTo(1);
        // The next frame makes no copy of its own.
        e.process(frame(2), 0, 5, 1);
        assertThat(e.copies()).isEmpty();
    }

    @Test
    void aCloneToASessionNobodyAddedIsNotMade() {
        P4Engine e = engine();
        assertThat(e.process(frame(1), 0, 5, 1)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(e.copies()).isEmpty();
        assertThat(e.counters().get(P4Counter.CLONES_NO_SESSION)).isEqualTo(1);
        e.applyEntries("mirroring_add 5 0\nmirroring_delete 5", "entries");
        e.process(frame(1), 0, 5, 1);
        assertThat(e.copies()).isEmpty();
    }

    @Test
    void egressCloneIsTheFrameAsEgressLeftIt() {
        P4Engine e = sent("mirroring_add 6 0", 9, 0, P4Engine.PORT_GUEST, Progs.bytes(9, 0xe0, 0, 0x55, 0x66));
        P4Engine.Copy c = e.copies().getFirst();
        assertThat(c.instanceType()).isEqualTo(2);
        assertThat(c.verdict()).isEqualTo(P4Engine.PORT_TAP);
        // Its headers as egress left them (tag 0xe0); m.keep (0x11) kept through the field list.
        assertThat(c.frame()).isEqualTo(Progs.bytes(9, 0xe0, 0x11, 0x55, 0x66));
    }

    @Test
    void resubmitRunsIngressAgainWithTheFieldListOnly() {
        // Second pass: instance_type 6 picked a3, which shows m.keep (7, kept) and m.other (0: not in the list).
        P4Engine e = sent("", 2, 1, P4Engine.PORT_TAP, Progs.bytes(2, 7, 0, 0x55, 0x66));
        assertThat(e.counters().get(P4Counter.RESUBMITS)).isEqualTo(1);
    }

    @Test
    void recirculateRunsIngressOnTheDeparsedFrame() {
        // The deparsed frame had x = 4; its second pass (instance_type 4) matched [4, 4] and showed m.keep 3.
        P4Engine e = sent("", 3, 1, P4Engine.PORT_TAP, Progs.bytes(4, 3, 0, 0x55, 0x66));
        assertThat(e.counters().get(P4Counter.RECIRCULATIONS)).isEqualTo(1);
    }

    @Test
    void aFrameThatResubmitsForEverIsDroppedAfter16Passes() {
        P4Engine e = engine();
        assertThat(e.process(frame(5), 0, 5, 1)).isEqualTo(P4Engine.DROPPED_LOOP);
        assertThat(e.counters().get(P4Counter.RESUBMITS)).isEqualTo(16);
        assertThat(e.counters().get(P4Counter.DROPS_LOOP)).isEqualTo(1);
    }

    @Test
    void digestsCarryTheLearnListValuesToTheListener() {
        P4Engine e = engine();
        List<P4Engine.Digest> got = new ArrayList<>();
        e.onDigest(got::add);
        assertThat(e.process(frame(8), 0, 5, 1)).isEqualTo(P4Engine.PORT_TAP);
        assertThat(got).containsExactly(new P4Engine.Digest("learn", List.of("h.x", "standard_metadata.ingress_port"),
                List.of(BigInteger.valueOf(8), BigInteger.ONE)));
        e.process(frame(2), 0, 5, 1);
        assertThat(got).hasSize(1);
        assertThat(e.counters().get(P4Counter.DIGESTS)).isEqualTo(1);
    }
}
