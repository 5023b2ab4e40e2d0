package ernic.p4;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The three test programs (hand-written bmv2 JSON as p4c emits it) over their input frames. The expected
 * frames and ports come from make_fixtures.py, which builds them from what each program does, not from
 * the engine.
 */
class ProgramsTest {
    static final Path DIR = Path.of("src/test/resources/p4");

    static P4Engine load(String name) throws IOException {
        P4Engine e = Loader.load(Files.readString(DIR.resolve(name + ".json")));
        Path entries = DIR.resolve(name + ".entries");
        if (Files.exists(entries)) {
            e.applyEntries(Files.readString(entries), entries.toString());
        }
        return e;
    }

    /** The frames {@code name}.in.pcap feeds the program. */
    static List<Pcap.Frame> input(String name) throws IOException {
        return Pcap.read(DIR.resolve(name + ".in.pcap"));
    }

    /** {@code f} into {@code e} on {@code port}: the port it goes out of, or {@link P4Engine#DROPPED}. */
    static int process(P4Engine e, Pcap.Frame f, int port) {
        return e.process(f.data(), 0, f.data().length, port);
    }

    @ParameterizedTest
    @CsvSource({"l2_switch", "ipv4_router", "acl"})
    void reproducesTheExpectedFramesAndPorts(String name) throws IOException {
        P4Engine e = load(name);
        List<Pcap.Frame> in = input(name);
        List<Pcap.Frame> want = Pcap.read(DIR.resolve(name + ".out.pcap"));
        List<String> ports = Files.readAllLines(DIR.resolve(name + ".ports"));
        List<String> gotPorts = new ArrayList<>();
        List<byte[]> got = new ArrayList<>();
        for (Pcap.Frame f : in) {
            int v = process(e, f, P4Engine.PORT_TAP);
            gotPorts.add(v >= 0 ? Integer.toString(v) : "drop");
            if (v >= 0) {
                got.add(Progs.out(e));
            }
        }
        assertThat(gotPorts).containsExactlyElementsOf(ports);
        assertThat(got).hasSameSizeAs(want);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i)).as("frame %d out", i).isEqualTo(want.get(i).data());
        }
    }

    @Test
    void l2SwitchCountsTablesAndFramesPerPortInItsRegister() throws IOException {
        P4Engine e = load("l2_switch");
        for (Pcap.Frame f : input("l2_switch")) {
            process(e, f, P4Engine.PORT_TAP);
        }
        int dmac = e.tableNames().indexOf("MyIngress.dmac");
        assertThat(e.tableHits()[dmac]).isEqualTo(3);
        assertThat(e.tableMisses()[dmac]).isEqualTo(1);
        assertThat(e.program.externs.registers[0]).containsExactly(4, 0);
        assertThat(e.counters().get(P4Counter.DROPS)).isEqualTo(1);
        assertThat(e.counters().get(P4Counter.FRAMES_OUT)).isEqualTo(3);
    }

    @Test
    void aclSendsTheDefaultToTheOtherSideAndCountsDirectly() throws IOException {
        P4Engine e = load("acl");
        List<Pcap.Frame> in = input("acl");
        assertThat(process(e, in.get(3), P4Engine.PORT_GUEST)).as("UDP").isEqualTo(P4Engine.PORT_TAP);
        assertThat(process(e, in.get(1), P4Engine.PORT_GUEST)).as("allowed").isEqualTo(P4Engine.PORT_GUEST);
        Table acl = e.program.tables.getFirst();
        assertThat(acl.entries().stream().mapToLong(x -> x.packets).sum()).isEqualTo(1);
    }

    @Test
    void routerCountsABadChecksum() throws IOException {
        P4Engine e = load("ipv4_router");
        assertThat(process(e, input("ipv4_router").get(5), P4Engine.PORT_TAP)).as("bad checksum")
                .isEqualTo(P4Engine.DROPPED);
        assertThat(e.counters().get(P4Counter.CHECKSUM_ERRORS)).isEqualTo(1);
    }

    @Test
    void dottedIpv4ValuesParseAndABadOneIsOneLine() throws IOException {
        assertThat(RuntimeCommands.parseNumber("10.1.0.0", 32)).isEqualTo(BigInteger.valueOf(0x0a01_0000L));
        assertThat(RuntimeCommands.parseNumber("255.255.255.255", 32)).isEqualTo(BigInteger.valueOf(0xffff_ffffL));
        assertThat(RuntimeCommands.parseNumber("010.0.0.1", 32)).isEqualTo(BigInteger.valueOf(0x0a00_0001L));
        assertThatThrownBy(() -> RuntimeCommands.parseNumber("10.1.0.0", 16))
                .hasMessage("value '10.1.0.0' does not fit 16 bits");
        P4Engine e = load("ipv4_router");
        for (String bad : List.of("10.256.0.0", "99999999999.0.0.1", "1.2.3", "1.2.3.4.5")) {
            assertThatThrownBy(() -> e.applyEntries("table_add ipv4_lpm MyIngress.drop " + bad + "/16 =>", "x.entries"))
                    .as(bad).isInstanceOf(P4EntryError.class).hasMessage("x.entries:1: not a value: '" + bad + "'");
        }
    }

    @Test
    void anExactTableWithManyEntriesFindsEachAndMissesTheRest() throws IOException {
        P4Engine e = load("l2_switch");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            b.append("table_add dmac forward 0x").append(Long.toHexString(0x020000000000L + i)).append(" => ")
                    .append(i % 2).append('\n');
        }
        e.applyEntries(b.toString(), "many");
        e.applyEntries("table_delete dmac 7", "many");
        byte[] f = new byte[20];
        for (int i = 0; i < 501; i++) {
            long mac = 0x020000000000L + i;
            for (int k = 0; k < 6; k++) {
                f[k] = (byte) (mac >>> (40 - 8 * k));
            }
            int want = i == 500 || i == 5 ? P4Engine.DROPPED : i % 2;
            assertThat(e.process(f, 0, f.length, 0)).as("mac %x", mac).isEqualTo(want);
        }
    }

    @Test
    void v1modelFeaturesDigestMeterSelectCloneAndRecirculateAsTheFixturesSay() throws IOException {
        P4Engine e = load("v1model_features");
        List<Pcap.Frame> in = input("v1model_features");
        long[] now = {0};
        e.clock(() -> now[0]);
        List<String> events = new ArrayList<>();
        List<String> digests = new ArrayList<>();
        List<byte[]> got = new ArrayList<>();
        e.onDigest(d -> digests.add("digest " + mac(d.values().get(0)) + " " + d.values().get(1)));
        for (Pcap.Frame f : in) {
            // The capture's time stamps are the meter's clock (microseconds in this file).
            now[0] = (f.seconds() - in.getFirst().seconds()) * 1_000_000_000L + f.fraction() * 1000;
            int v = process(e, f, P4Engine.PORT_TAP);
            events.add(v >= 0 ? Integer.toString(v) : "drop");
            if (v >= 0) {
                got.add(Progs.out(e));
            }
            for (P4Engine.Copy c : e.copies()) {
                events.add(Integer.toString(c.verdict()));
                got.add(c.frame());
                assertThat(c.instanceType()).isEqualTo(1);
            }
            events.addAll(digests);
            digests.clear();
        }
        List<String> want = Files.readAllLines(DIR.resolve("v1model_features.ports")).stream()
                .map(l -> l.startsWith("digest") ? l : l.split(" ")[0]).toList();
        assertThat(events).containsExactlyElementsOf(want);
        List<Pcap.Frame> out = Pcap.read(DIR.resolve("v1model_features.out.pcap"));
        assertThat(got).hasSameSizeAs(out);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i)).as("frame %d out", i).isEqualTo(out.get(i).data());
        }
        assertThat(e.counters().get(P4Counter.RECIRCULATIONS)).isEqualTo(1);
    }

    static String mac(BigInteger v) {
        String h = String.format("%012x", v);
        return String.join(":", h.substring(0, 2), h.substring(2, 4), h.substring(4, 6), h.substring(6, 8),
                h.substring(8, 10), h.substring(10, 12));
    }
}
