package ernic.server;

import ernic.p4.Pcap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ernic p4 check} and {@code ernic p4 run} on the engine's test programs; the expected frames are the
 * fixtures p4-engine's make_fixtures.py built without the engine.
 */
class P4CommandTest {
    static final Path P4 = Path.of("../p4-engine/src/test/resources/p4");

    record Result(int status, String out, String err) {
    }

    static Result ernic(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = Main.commandLine(null);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int status = cmd.execute(args);
        return new Result(status, out.toString(), err.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"l2_switch", "ipv4_router", "acl"})
    void runReproducesTheExpectedFrames(String name, @TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out.pcap");
        Result r = runExample(name, out);
        List<Pcap.Frame> got = Pcap.read(out);
        List<Pcap.Frame> want = Pcap.read(P4.resolve(name + ".out.pcap"));
        assertThat(got).hasSameSizeAs(want);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).data()).isEqualTo(want.get(i).data());
        }
        List<String> ports = Files.readAllLines(P4.resolve(name + ".ports"));
        List<String> lines = r.out().lines().filter(l -> l.startsWith("frame ")).toList();
        assertThat(lines).hasSameSizeAs(ports);
        for (int i = 0; i < ports.size(); i++) {
            String p = ports.get(i);
            assertThat(lines.get(i)).contains(p.equals("drop") ? "-> dropped" : "-> port " + p);
        }
        assertThat(r.out()).containsPattern("(?m)^table \\S+: \\d+ hits, \\d+ misses$");
    }

    /** {@code p4 run} over example {@code name}'s input (with its entries, when it has some), into {@code out}. */
    private static Result runExample(String name, Path out) {
        Path entries = P4.resolve(name + ".entries");
        List<String> args = new java.util.ArrayList<>(List.of("p4", "run", P4.resolve(name + ".json").toString(),
                "--in", P4.resolve(name + ".in.pcap").toString(), "--out", out.toString()));
        if (Files.exists(entries)) {
            args.addAll(List.of("--entries", entries.toString()));
        }
        Result r = ernic(args.toArray(String[]::new));
        assertThat(r.err()).isEmpty();
        assertThat(r.status()).isZero();
        return r;
    }

    @Test
    void runPrintsPerTableCountsAndPorts(@TempDir Path tmp) {
        Result r = ernic("p4", "run", P4.resolve("l2_switch.json").toString(), "--entries",
                P4.resolve("l2_switch.entries").toString(), "--in", P4.resolve("l2_switch.in.pcap").toString(),
                "--out", tmp.resolve("o.pcap").toString(), "--in-port", "1");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("frame 1: 40 bytes in on port 1 -> port 1 (guest), 40 bytes")
                .contains("frame 3: 40 bytes in on port 1 -> dropped (egress_spec 511)")
                .contains("table MyIngress.dmac: 3 hits, 1 misses")
                .contains("frames: 4 in, 3 out, 1 dropped");
    }

    @Test
    void checkPrintsASummary() {
        Result r = ernic("p4", "check", P4.resolve("ipv4_router.json").toString());
        assertThat(r.status()).isZero();
        assertThat(r.out()).startsWith("program ipv4_router.p4").contains("table MyIngress.ipv4_lpm (lpm");
    }

    @Test
    void aRefusedProgramIsOneLineAndExitTwo(@TempDir Path tmp) throws IOException {
        String json = Files.readString(P4.resolve("acl.json")).replace("\"extern_instances\": []",
                "\"extern_instances\": [{\"name\": \"r\", \"type\": \"Random\"}]");
        Path p = tmp.resolve("random.json");
        Files.writeString(p, json);
        Result r = ernic("p4", "check", p.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("ernic p4: " + p + ": unsupported: extern type 'Random' (v1model programs have no extern instances: a bmv2 test extern or another architecture's) (at $.extern_instances[0].type)"
                + System.lineSeparator());
        assertThat(r.out()).isEmpty();
    }

    @Test
    void runShowsDigestsMeterDropsClonesAndRecirculation(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("o.pcap");
        Result r = ernic("p4", "run", P4.resolve("v1model_features.json").toString(), "--entries",
                P4.resolve("v1model_features.entries").toString(), "--in",
                P4.resolve("v1model_features.in.pcap").toString(), "--out", out.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("frame 1: digest mac_learn {ethernet.srcAddr=0xc, standard_metadata.ingress_port=0x0}")
                .contains("frame 3: 40 bytes in on port 0 -> dropped (egress_spec 511)") // the meter's red
                .contains("frame 6: ingress clone -> port 0 (TAP), 40 bytes")
                .contains("frame 7: 40 bytes in on port 0, recirculated 1x -> port 1 (guest), 40 bytes")
                .contains("frames: 7 in, 6 out, 1 dropped; clones: 1 made, 1 out");
        List<Pcap.Frame> got = Pcap.read(out);
        List<Pcap.Frame> want = Pcap.read(P4.resolve("v1model_features.out.pcap"));
        assertThat(got).hasSameSizeAs(want);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).data()).isEqualTo(want.get(i).data());
        }
    }

    /**
     * The worked examples, one a v1model feature (make_programs.py): p4 run writes the frames make_fixtures.py
     * built, byte for byte, and prints what it worked out by hand (verdicts, clones, digests, log_msg texts,
     * resubmissions and recirculations, table hits).
     */
    @ParameterizedTest
    @ValueSource(strings = {"meters", "clones", "resubmit_recirculate", "digests", "action_profiles", "header_unions",
            "parse_vsets", "deparser_primitives", "no_deparser", "assert_log", "multicast"})
    void aFeatureExamplePrintsAndWritesWhatItsFixturesSay(String name, @TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out.pcap");
        Result r = runExample(name, out);
        List<String> expected = Files.readAllLines(P4.resolve(name + ".expected"));
        assertThat(r.out().lines().toList()).containsExactlyElementsOf(expected);
        assertThat(Files.readAllBytes(out)).isEqualTo(Files.readAllBytes(P4.resolve(name + ".out.pcap")));
    }

    @Test
    void checkShowsTheConfigOptions() {
        Result r = ernic("p4", "check", P4.resolve("deparser_primitives.json").toString());
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("config options {");
    }

    @Test
    void aRefusedEntryIsOneLineAndExitTwo(@TempDir Path tmp) throws IOException {
        Path e = tmp.resolve("bad.entries");
        Files.writeString(e, "table_add dmac forward 00:00:00:00:00:02 => 1\ntable_add dmac nosuch 1 => 2\n");
        Result r = ernic("p4", "run", P4.resolve("l2_switch.json").toString(), "--entries", e.toString(),
                "--in", P4.resolve("l2_switch.in.pcap").toString(), "--out", tmp.resolve("o.pcap").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ernic p4: " + e + ":2: no action 'nosuch'");
    }

    /**
     * --after runs commands once the frames have run: l2_switch counts frames per port in register frames_per_port
     * (make_fixtures.py: 4 frames in on port 0), and table_dump shows the entries l2_switch.entries added.
     */
    @Test
    void afterTheFramesReadsPrintWhatTheyRead(@TempDir Path tmp) throws IOException {
        Path reads = tmp.resolve("reads");
        Files.writeString(reads, "register_read frames_per_port\ntable_dump dmac\n");
        Result r = ernic("p4", "run", P4.resolve("l2_switch.json").toString(), "--entries",
                P4.resolve("l2_switch.entries").toString(), "--in", P4.resolve("l2_switch.in.pcap").toString(),
                "--out", tmp.resolve("o.pcap").toString(), "--after", reads.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.status()).isZero();
        assertThat(r.out().lines().toList()).endsWith("frames: 4 in, 3 out, 1 dropped",
                "frames_per_port= 4, 0",
                "MyIngress.dmac entry 0x0: hdr.ethernet.dstAddr EXACT 000000000002 => MyIngress.forward - 0001",
                "MyIngress.dmac entry 0x1: hdr.ethernet.dstAddr EXACT 000000000001 => MyIngress.forward - 0000",
                "MyIngress.dmac default: MyIngress.drop -");
        Files.writeString(reads, "counter_read nosuch 0\n");
        r = ernic("p4", "run", P4.resolve("l2_switch.json").toString(), "--in",
                P4.resolve("l2_switch.in.pcap").toString(), "--out", tmp.resolve("o.pcap").toString(), "--after",
                reads.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ernic p4: " + reads + ":1: no counter 'nosuch'");
    }
}
