package ernic.p4;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static ernic.p4.Progs.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The read commands of simple_switch_CLI, each line in the shape simple_switch_CLI prints it (runtime_CLI.py):
 * counter_read "NAME[I]= (B bytes, P packets)", register_read "NAME[I]= V" or "NAME= V, V", meter_get_rates "I: info
 * rate = R, burst size = B" per rate (R as Python prints a float), and table_dump, one line per entry and one for the
 * default entry.
 */
class RuntimeReadsTest {
    @Test
    void registerReadOneCellOrTheWholeArray() throws IOException {
        P4Engine e = ProgramsTest.load("l2_switch");
        assertThat(e.applyEntries("register_write frames_per_port 1 42\nregister_read frames_per_port 1\n"
                + "register_read MyIngress.frames_per_port", "f")).containsExactly(
                "frames_per_port[1]= 42", "MyIngress.frames_per_port= 0, 42");
        assertThat(e.applyEntries("register_write frames_per_port 0 7", "f")).isEmpty();
        assertRefused(e, "register_read frames_per_port 2", "f:1: index 2 out of 0..1");
    }

    @Test
    void counterReadOfADirectCounterNamesAnEntry() throws IOException {
        P4Engine e = ProgramsTest.load("acl");
        byte[] f = ProgramsTest.input("acl").get(1).data(); // 10.0.0.1, TCP: entry 1 (allow), 74 bytes
        e.process(f, 0, f.length, 0);
        e.process(f, 0, f.length, 0);
        assertThat(e.applyEntries("counter_read acl_counter 1\ncounter_read MyIngress.acl_counter 0", "f"))
                .containsExactly("acl_counter[1]= (" + 2 * f.length + " bytes, 2 packets)",
                        "MyIngress.acl_counter[0]= (0 bytes, 0 packets)");
    }

    @Test
    void meterGetRatesPrintsEachRateAsPythonWould() throws IOException {
        P4Engine e = ProgramsTest.load("meters");
        assertThat(e.applyEntries("meter_get_rates flow_meter 0\nmeter_get_rates byte_meter 3\n"
                + "meter_get_rates flow_meter 1", "f")).containsExactly(
                "0: info rate = 1e-06, burst size = 1", "1: info rate = 2e-06, burst size = 2",
                "0: info rate = 0.0001, burst size = 400", "1: info rate = 0.0002, burst size = 600",
                "WARNING: expected 2 rates but only received 0");
        assertThat(Meter.pythonFloat(2.5)).isEqualTo("2.5");
        assertThat(Meter.pythonFloat(1e-5)).isEqualTo("1e-05");
        assertThat(Meter.pythonFloat(1e16)).isEqualTo("1e+16");
        assertThat(Meter.pythonFloat(100)).isEqualTo("100.0");
    }

    @Test
    void tableDumpIsALinePerEntryAndTheDefault() throws IOException {
        assertThat(ProgramsTest.load("l2_switch").applyEntries("table_dump dmac", "f")).containsExactly(
                "MyIngress.dmac entry 0x0: hdr.ethernet.dstAddr EXACT 000000000002 => MyIngress.forward - 0001",
                "MyIngress.dmac entry 0x1: hdr.ethernet.dstAddr EXACT 000000000001 => MyIngress.forward - 0000",
                "MyIngress.dmac default: MyIngress.drop -");
        assertThat(ProgramsTest.load("acl").applyEntries("table_dump acl", "f")).first().isEqualTo(
                "MyIngress.acl entry 0x0: hdr.ipv4.srcAddr TERNARY 0a000000 &&& ff000000, hdr.ipv4.protocol TERNARY"
                        + " 11 &&& ff, hdr.ipv4.$valid$ EXACT 01 priority 1 => MyIngress.deny -");
        assertThatThrownBy(() -> ProgramsTest.load("acl").applyEntries("table_dump", "f"))
                .hasMessage("f:1: table_dump takes 1 argument, got 0");
    }
}
