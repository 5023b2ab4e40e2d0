package ernic.p4;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The frame out without copies: the deparser writes the headers and leaves the payload in the input, so
 * {@link P4Engine#outputIsInput()} can tell a caller to send its own input on and {@link P4Engine#writeOutput}
 * writes headers and payload with one copy. Both must give what {@link P4Engine#output()} gives.
 */
class OutputTest {
    static final Arena ARENA = Arena.ofAuto();

    /** writeOutput's bytes, which must be taken before output() (that one copies the payload into the array). */
    static byte[] written(P4Engine e) {
        MemorySegment dst = ARENA.allocate(e.outputLength() + 1);
        e.writeOutput(dst);
        return dst.asSlice(0, e.outputLength()).toArray(ValueLayout.JAVA_BYTE);
    }

    @ParameterizedTest
    @CsvSource({"l2_switch, 3", "ipv4_router, 0", "acl, 3", "v1model_features, -1"})
    void writeOutputAndOutputIsInputSayWhatOutputSays(String name, int unchanged) throws IOException {
        P4Engine e = ProgramsTest.load(name);
        int same = 0;
        for (Pcap.Frame f : ProgramsTest.input(name)) {
            if (ProgramsTest.process(e, f, P4Engine.PORT_TAP) < 0) {
                continue;
            }
            boolean isInput = e.outputIsInput();
            byte[] w = written(e);
            byte[] out = Progs.out(e);
            assertThat(w).as("writeOutput").isEqualTo(out);
            if (isInput) {
                assertThat(out).as("a frame said to leave as it came in").isEqualTo(f.data());
                same++;
            } else if (e.copyCount() == 0 && !name.equals("v1model_features")) {
                assertThat(out).as("a frame said to be changed").isNotEqualTo(f.data());
            }
        }
        if (unchanged >= 0) {
            // l2_switch forwards without a rewrite; the router rewrites MACs and the TTL; acl passes three unchanged.
            assertThat(same).as("frames out as they came in").isEqualTo(unchanged);
        }
    }

    /** Header h (one byte, x), metadata-free; the table's action is {@code prims}; the deparser emits h. */
    static P4Engine oneHeader(String prims) {
        String types = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false]]}";
        String headers = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false}";
        return Loader.load(program("", types, headers, state("start", 0, extract("h"), "", dflt(null)),
                action("a", 0, "", egressSpec("0x0") + (prims.isEmpty() ? "" : "," + prims)),
                always("t", 0, "a", 0, null), "", "t", "\"h\""));
    }

    static String truncate(String n) {
        return "{\"op\":\"truncate\",\"parameters\":[" + hex(n) + "]}";
    }

    @Test
    void aHeaderWrittenBackToItsOwnValueLeavesTheFrameAsItCameIn() {
        P4Engine e = oneHeader(assign(field("h", "x"), hex("0x07")));
        byte[] f = bytes(0x07, 1, 2, 3);
        assertThat(e.process(f, 0, f.length, 1)).isZero();
        assertThat(e.outputIsInput()).isTrue();
        byte[] g = bytes(0x08, 1, 2, 3);
        e.process(g, 0, g.length, 1);
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(0x07, 1, 2, 3));
    }

    /** Headers a (x) and b (y), one byte each; the parser's states and the deparser's order as given. */
    static P4Engine twoHeaders(String states, String order) {
        String types = "{\"name\":\"a_t\",\"id\":1,\"fields\":[[\"x\",8,false]]},"
                + "{\"name\":\"b_t\",\"id\":2,\"fields\":[[\"y\",8,false]]}";
        String headers = "{\"name\":\"a\",\"id\":1,\"header_type\":\"a_t\",\"metadata\":false},"
                + "{\"name\":\"b\",\"id\":2,\"header_type\":\"b_t\",\"metadata\":false}";
        return Loader.load(program("", types, headers, states, action("a", 0, "", egressSpec("0x0")),
                always("t", 0, "a", 0, null), "", "t", order));
    }

    @Test
    void headersEmittedInAnotherOrderThanParsedAreWritten() {
        P4Engine e = twoHeaders(state("start", 0, extract("a") + "," + extract("b"), "", dflt(null)), "\"b\",\"a\"");
        byte[] f = bytes(1, 2, 9);
        assertThat(e.process(f, 0, f.length, 1)).isZero();
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(2, 1, 9)).isEqualTo(Progs.out(e));
        P4Engine same = twoHeaders(state("start", 0, extract("a") + "," + extract("b"), "", dflt(null)),
                "\"a\",\"b\"");
        same.process(f, 0, f.length, 1);
        assertThat(same.outputIsInput()).isTrue();
        assertThat(written(same)).isEqualTo(f);
    }

    @Test
    void aHeaderExtractedTwiceLeavesOnceWithItsSecondValue() {
        String states = state("start", 0, extract("a"), field("a", "x"), value("0x01", null, "again") + "," + dflt(null))
                + "," + state("again", 1, extract("a"), "", dflt(null));
        P4Engine e = twoHeaders(states, "\"a\",\"b\"");
        byte[] f = bytes(1, 5, 9);
        assertThat(e.process(f, 0, f.length, 1)).isZero();
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(5, 9)).isEqualTo(Progs.out(e));
    }

    @Test
    void truncateIntoThePayloadOrTheHeadersIsNotTheInput() {
        byte[] f = bytes(0x07, 1, 2, 3);
        P4Engine e = oneHeader(truncate("0x3"));
        e.process(f, 0, f.length, 1);
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(0x07, 1, 2)).isEqualTo(Progs.out(e));
        P4Engine cut = oneHeader(truncate("0x0"));
        cut.process(f, 0, f.length, 1);
        assertThat(cut.outputIsInput()).isFalse();
        assertThat(written(cut)).isEmpty();
        P4Engine all = oneHeader(truncate("0x9"));
        all.process(f, 0, f.length, 1);
        assertThat(all.outputIsInput()).as("truncate to more than the frame cuts nothing").isTrue();
    }

    @Test
    void aRecirculatedFrameIsComparedWithTheFrameThatCameInNotWithItsSecondPass() {
        // x 1: x = 2 and recirculate; x 2 (the second pass): out unchanged. The output equals the second pass's
        // input, not the frame that came in.
        String types = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false]]}";
        String headers = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false}";
        String lists = "\"field_lists\":[{\"id\":1,\"name\":\"fl\",\"elements\":[]}]";
        String actions = action("again", 0, "", assign(field("h", "x"), hex("0x02")) + "," + egressSpec("0x0")
                + ",{\"op\":\"recirculate\",\"parameters\":[" + hex("0x1") + "]}") + ","
                + action("out", 1, "", egressSpec("0x0"));
        String table = """
                {"name":"t","id":0,"key":[{"match_type":"exact","target":["h","x"],"mask":null}],"match_type":"exact",
                 "type":"simple","max_size":4,"with_counters":false,"support_timeout":false,"direct_meters":null,
                 "action_ids":[0,1],"actions":["again","out"],"base_default_next":null,"next_tables":{},
                 "default_entry":{"action_id":1,"action_const":false,"action_data":[],"action_entry_const":false}}""";
        P4Engine e = Loader.load(program(lists, types, headers, state("start", 0, extract("h"), "", dflt(null)),
                actions, table, "", "t", "\"h\""));
        e.applyEntries("table_add t again 1 =>", "entries");
        byte[] f = bytes(1, 0x55, 0x66);
        assertThat(e.process(f, 0, f.length, 1)).isZero();
        assertThat(e.counters().get(P4Counter.RECIRCULATIONS)).isOne();
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(2, 0x55, 0x66)).isEqualTo(Progs.out(e));
    }

    @Test
    void aFrameThatMadeACloneIsNeverSaidToBeTheInput() {
        P4Engine e = ReplicationTest.engine();
        e.applyEntries("mirroring_add 5 0", "entries");
        byte[] f = ReplicationTest.frame(1);
        assertThat(e.process(f, 0, f.length, 1)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(e.copyCount()).isOne();
        assertThat(e.outputIsInput()).isFalse();
        assertThat(written(e)).isEqualTo(bytes(1, 0xaa, 0, 0x55, 0x66)).isEqualTo(Progs.out(e));
    }

    @Test
    void aFrameFromAMemorySegmentIsCopiedInOnceAndComesOutTheSame() {
        P4Engine e = oneHeader("");
        byte[] f = new byte[1514];
        Arrays.fill(f, (byte) 0x5a);
        MemorySegment in = ARENA.allocate(f.length);
        in.copyFrom(MemorySegment.ofArray(f));
        assertThat(e.process(in, 1)).isZero();
        assertThat(e.outputIsInput()).isTrue();
        assertThat(written(e)).isEqualTo(f).isEqualTo(Progs.out(e));
    }

    /**
     * {@code frames} through two engines of one program, one given each frame in an array, the other in a memory
     * segment (whose bytes the engine copies only as the program reads them): the same verdicts, outputs (as
     * writeOutput and output() give them), parser errors and copies.
     */
    static void sameFromASegment(Supplier<P4Engine> program, List<byte[]> frames) {
        P4Engine array = program.get();
        P4Engine segment = program.get();
        for (byte[] f : frames) {
            MemorySegment in = ARENA.allocate(Math.max(1, f.length));
            in.copyFrom(MemorySegment.ofArray(f));
            int want = array.process(f, 0, f.length, P4Engine.PORT_TAP);
            int got = segment.process(in.asSlice(0, f.length), P4Engine.PORT_TAP);
            String what = "frame " + java.util.HexFormat.of().formatHex(f);
            assertThat(got).as(what).isEqualTo(want);
            assertThat(ParserFeaturesTest.parserError(segment)).as(what).isEqualTo(ParserFeaturesTest.parserError(array));
            if (want >= 0) {
                assertThat(segment.outputIsInput()).as(what).isEqualTo(array.outputIsInput());
                assertThat(written(segment)).as(what).isEqualTo(Progs.out(array));
                assertThat(Progs.out(segment)).as(what).isEqualTo(Progs.out(array));
            }
            assertThat(segment.copies()).as(what).usingRecursiveFieldByFieldElementComparator()
                    .isEqualTo(array.copies());
        }
    }

    static List<byte[]> frames(String fixture) throws IOException {
        List<byte[]> l = new ArrayList<>();
        for (Pcap.Frame f : ProgramsTest.input(fixture)) {
            l.add(f.data());
        }
        return l;
    }

    @ParameterizedTest
    @CsvSource({"l2_switch", "ipv4_router", "acl", "v1model_features"})
    void aFrameInASegmentGivesWhatItGivesInAnArray(String name) throws IOException {
        sameFromASegment(() -> {
            try {
                P4Engine e = ProgramsTest.load(name);
                e.applyEntries("mirroring_add 5 0", "entries");
                e.clock(() -> 0);
                return e;
            } catch (IOException x) {
                throw new java.io.UncheckedIOException(x);
            }
        }, frames(name));
    }

    @Test
    void lookaheadVariableLengthAdvanceAndPayloadHashesReadTheSegment() {
        sameFromASegment(ParserFeaturesTest::stacks, List.of(bytes(0x00, 0x00, 0x81, 0xa5, 0x11), bytes(0x80, 0x55),
                bytes(0, 0, 0, 0), bytes(0x00)));
        sameFromASegment(ParserFeaturesTest::varLen, List.of(bytes(2, 0xaa, 0xbb, 0xff, 0x12, 0x34, 0x99),
                bytes(5, 1, 2, 3, 4, 5, 0, 0, 0), bytes(9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0), bytes(1)));
        byte[] big = new byte[1514];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 7);
        }
        sameFromASegment(OutputTest::payloadHash, List.of(big, bytes(1, 2, 3), bytes(9)));
        sameFromASegment(ReplicationTest::engine, List.of(ReplicationTest.frame(1), ReplicationTest.frame(2),
                ReplicationTest.frame(3), ReplicationTest.frame(8), ReplicationTest.frame(9)));
    }

    /** Header h (x, 8 bits) gets the low 8 bits of crc32 over [h.x, payload]: the whole frame is read. */
    static P4Engine payloadHash() {
        String types = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false]]}";
        String headers = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false}";
        String calc = "\"calculations\":[{\"name\":\"c\",\"id\":0,\"algo\":\"crc32\",\"input\":["
                + field("h", "x") + ",{\"type\":\"payload\",\"value\":null}]}]";
        String hash = "{\"op\":\"modify_field_with_hash_based_offset\",\"parameters\":[" + field("h", "x") + ","
                + hex("0x0") + ",{\"type\":\"calculation\",\"value\":\"c\"}," + hex("0x100") + "]}";
        return Loader.load(program(calc, types, headers, state("start", 0, extract("h"), "", dflt(null)),
                action("a", 0, "", egressSpec("0x0") + "," + hash), always("t", 0, "a", 0, null), "", "t", "\"h\""));
    }
}
