package ernic.p4;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Meters as simple_switch runs them (bmv2's meters.cpp): a two-rate three-colour marker per cell, rates set with
 * meter_array_set_rates / meter_set_rates in units per microsecond, time from the engine's clock, which the test
 * moves. GREEN 0, YELLOW 1, RED 2.
 */
class MeterTest {
    long now;

    static final String TYPES = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false]]},"
            + "{\"name\":\"m_t\",\"id\":2,\"fields\":[[\"color\",8,false]]}";
    static final String HEADERS = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false},"
            + "{\"name\":\"m\",\"id\":2,\"header_type\":\"m_t\",\"metadata\":true}";

    P4Engine engine(String extra, String actions, String tables, String init) {
        P4Engine e = Loader.load(program(extra, TYPES, HEADERS, state("start", 0, extract("h"), "", dflt(null)),
                actions, tables, "", init, "\"h\""));
        e.clock(() -> now);
        return e;
    }

    /** An indirect packets meter of 4 cells; the action meters cell h.x into m.color. */
    P4Engine indirect(String type) {
        String meter = "\"meter_arrays\":[{\"name\":\"mtr\",\"id\":0,\"is_direct\":false,\"size\":4,\"rate_count\":2,"
                + "\"type\":\"" + type + "\"}]";
        String exec = "{\"op\":\"execute_meter\",\"parameters\":[{\"type\":\"meter_array\",\"value\":\"mtr\"},"
                + field("h", "x") + "," + field("m", "color") + "]}";
        return engine(meter, action("meter_it", 0, "", exec), always("t", 0, "meter_it", 0, null), "t");
    }

    int color(P4Engine e, int x, int len) {
        byte[] f = new byte[len];
        f[0] = (byte) x;
        e.process(f, 0, len, 0);
        return (int) e.packet().phv.val[e.program.layout.first[e.program.layout.header("m")]];
    }

    List<Integer> colors(P4Engine e, int x, int n) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(color(e, x, 64));
        }
        return out;
    }

    @Test
    void anUnconfiguredMeterIsGreen() {
        assertThat(colors(indirect("packets"), 0, 10)).containsOnly(0);
    }

    @Test
    void packetMeterColoursAtGivenRatesAndTimes() {
        P4Engine e = indirect("packets");
        // CIR 1000 packets/s (0.001 per microsecond), burst 2; PIR 2000 packets/s, burst 4.
        e.applyEntries("meter_set_rates mtr 1 0.001:2 0.002:4", "entries");
        now = 5_000_000;
        assertThat(colors(e, 1, 5)).containsExactly(0, 0, 1, 1, 2);
        // The other cells are not configured.
        assertThat(color(e, 0, 64)).isZero();
        // 1 ms later: one committed token and two peak tokens have come.
        now += 1_000_000;
        assertThat(colors(e, 1, 3)).containsExactly(0, 1, 2);
        // 10 ms later the buckets are full again, no fuller than their bursts.
        now += 10_000_000;
        assertThat(colors(e, 1, 5)).containsExactly(0, 0, 1, 1, 2);
    }

    @Test
    void byteMeterCountsTheFrameLength() {
        P4Engine e = indirect("bytes");
        // Every cell: committed 1000 bytes burst, peak 1500 bytes burst; the rates do not matter at one instant.
        e.applyEntries("meter_array_set_rates mtr 0.01:1000 0.02:1500", "entries");
        assertThat(color(e, 2, 600)).isZero();
        assertThat(color(e, 2, 600)).isOne();    // 400 committed bytes left: yellow, peak 900 -> 300
        assertThat(color(e, 2, 600)).isEqualTo(2); // 300 peak bytes left: red, nothing taken
        assertThat(color(e, 2, 300)).isZero();    // peak 300 -> 0, committed 400 -> 100
        assertThat(color(e, 2, 64)).isEqualTo(2);
        assertThat(color(e, 3, 1000)).isZero(); // another cell, its own buckets
    }

    @Test
    void directMeterColoursHitsIntoItsResultField() {
        String meter = "\"meter_arrays\":[{\"name\":\"dm\",\"id\":0,\"is_direct\":true,\"binding\":\"t\",\"size\":16,"
                + "\"rate_count\":2,\"type\":\"packets\",\"result_target\":[\"m\",\"color\"]}]";
        String table = """
                {"name":"t","id":0,"key":[{"match_type":"exact","name":"h.x","target":["h","x"],"mask":null}],
                 "match_type":"exact","type":"simple","max_size":16,"with_counters":false,"support_timeout":false,
                 "direct_meters":"dm","action_ids":[0],"actions":["nop"],"base_default_next":null,"next_tables":{"nop":null},
                 "default_entry":{"action_id":0,"action_const":false,"action_data":[],"action_entry_const":false}}""";
        P4Engine e = engine(meter, action("nop", 0, "", ""), table, "t");
        e.applyEntries("table_add t nop 7 =>\ntable_add t nop 8 =>\nmeter_set_rates dm 1 0.001:1 0.001:2", "entries");
        assertThat(colors(e, 8, 4)).containsExactly(0, 1, 2, 2);
        assertThat(colors(e, 7, 3)).containsOnly(0); // entry 0 has no rates
        color(e, 9, 64);                             // a miss: the meter does not run, the field stays 0
        assertThat(e.packet().phv.val[e.program.layout.first[e.program.layout.header("m")]]).isZero();
        assertThat(e.summary()).contains("meters 0 indirect, 1 direct");
    }

    @Test
    void refusedRateCommands() {
        P4Engine e = indirect("packets");
        assertRefused(e, "meter_set_rates mtr 0 0.002:2 0.001:4",
                "f:1: rate 0.001 is below the rate before it (0.002)");
        assertRefused(e, "meter_set_rates mtr 0 0.001:2", "f:1: meter_set_rates: expected 2 RATE:BURST pairs, got 1");
        assertRefused(e, "meter_set_rates mtr 4 0.001:2 0.002:2", "f:1: index 4 out of 0..3");
        assertRefused(e, "meter_array_set_rates mtr 0.001 0.002:2", "f:1: meter rate key '0.001' needs RATE:BURST");
        assertRefused(e, "meter_array_set_rates nope 0.001:1 0.002:2", "f:1: no meter array 'nope'");
    }
}
