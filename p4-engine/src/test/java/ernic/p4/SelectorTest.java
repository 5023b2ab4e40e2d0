package ernic.p4;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Action selectors as simple_switch runs them (action_profile.cpp): a group's members in handle order, the
 * selector's hash of the frame modulo the group's size picks one, so one flow always takes one member. Header h is
 * [k, a, b, out]; the selector hashes [a, b] with crc16; table ecmp matches k and runs set_out(v): out = v.
 */
class SelectorTest {
    static P4Engine engine() {
        String types = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"k\",8,false],[\"a\",8,false],[\"b\",8,false],[\"out\",8,false]]}";
        String headers = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false}";
        String actions = action("set_out", 0, "{\"name\":\"v\",\"bitwidth\":8}",
                assign(field("h", "out"), "{\"type\":\"runtime_data\",\"value\":0}"));
        String table = """
                {"name":"ecmp","id":0,"key":[{"match_type":"exact","target":["h","k"],"mask":null}],"match_type":"exact",
                 "type":"indirect_ws","action_profile":"ap","max_size":16,"with_counters":false,"support_timeout":false,
                 "direct_meters":null,"action_ids":[0],"actions":["set_out"],"base_default_next":null,"next_tables":{}}""";
        String prog = program("", types, headers, state("start", 0, extract("h"), "", dflt(null)), actions, table, "",
                "ecmp", "\"h\"").replace("\"action_profiles\":[],\"tables\"", "\"action_profiles\":[{\"name\":\"ap\",\"id\":0,"
                + "\"max_size\":8,\"selector\":{\"algo\":\"crc16\",\"input\":[" + field("h", "a") + "," + field("h", "b")
                + "]}}],\"tables\"");
        P4Engine e = Loader.load(prog);
        e.applyEntries("""
                act_prof_create_member ap set_out 10
                act_prof_create_member ap set_out 11
                act_prof_create_member ap set_out 12
                act_prof_create_group ap
                act_prof_add_member_to_group ap 2 0
                act_prof_add_member_to_group ap 0 0
                act_prof_add_member_to_group ap 1 0
                table_indirect_add_with_group ecmp 1 => 0
                table_indirect_add ecmp 2 => 1
                """, "entries");
        return e;
    }

    static int out(P4Engine e, int k, int a, int b) {
        byte[] f = {(byte) k, (byte) a, (byte) b, 0};
        e.process(f, 0, 4, 0);
        return e.output()[3] & 0xff;
    }

    /** CRC-16/ARC (bmv2's crc16): reflected polynomial 0xA001, initial value 0. */
    static int crc16(byte... data) {
        int crc = 0;
        for (byte d : data) {
            crc ^= d & 0xff;
            for (int i = 0; i < 8; i++) {
                crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
            }
        }
        return crc;
    }

    @Test
    void theHashOfTheFlowModuloTheGroupSizePicksTheMemberInHandleOrder() {
        P4Engine e = engine();
        for (int a = 0; a < 8; a++) {
            for (int b = 0; b < 8; b++) {
                // Members 0, 1, 2 (set_out 10, 11, 12), whatever order they were added in.
                int want = 10 + crc16((byte) a, (byte) b) % 3;
                assertThat(out(e, 1, a, b)).as("flow %d,%d", a, b).isEqualTo(want);
            }
        }
    }

    @Test
    void oneFlowAlwaysTakesOneMemberAndFlowsSpreadOverAll() {
        P4Engine e = engine();
        int first = out(e, 1, 7, 9);
        for (int i = 0; i < 5; i++) {
            assertThat(out(e, 1, 7, 9)).isEqualTo(first);
        }
        Set<Integer> used = new HashSet<>();
        for (int a = 0; a < 64; a++) {
            used.add(out(e, 1, a, 3));
        }
        assertThat(used).containsExactlyInAnyOrder(10, 11, 12);
        assertThat(out(e, 2, 7, 9)).as("an entry pointing at a member").isEqualTo(11);
    }

    @Test
    void groupChangesRemapFlowsAndAnEmptiedGroupDoesNothing() {
        P4Engine e = engine();
        e.applyEntries("act_prof_remove_member_from_group ap 1 0", "entries");
        for (int a = 0; a < 16; a++) {
            assertThat(out(e, 1, a, 1)).isEqualTo(crc16((byte) a, (byte) 1) % 2 == 0 ? 10 : 12);
        }
        e.applyEntries("act_prof_remove_member_from_group ap 0 0\nact_prof_remove_member_from_group ap 2 0", "entries");
        assertThat(out(e, 1, 3, 3)).isZero();
        assertThat(e.tableHits()[0]).isEqualTo(17);
    }

    @Test
    void aModifiedMemberChangesEveryEntryAndGroupThatHoldsIt() {
        P4Engine e = engine();
        e.applyEntries("act_prof_modify_member ap set_out 1 21", "entries");
        assertThat(out(e, 2, 7, 9)).isEqualTo(21);
        for (int a = 0; a < 8; a++) {
            int want = new int[] {10, 21, 12}[crc16((byte) a, (byte) 5) % 3];
            assertThat(out(e, 1, a, 5)).isEqualTo(want);
        }
    }

    @Test
    void refusedProfileCommands() {
        P4Engine e = engine();
        assertRefused(e, "act_prof_add_member_to_group ap 0 0", "f:1: member 0 is already in group 0");
        assertRefused(e, "act_prof_delete_member ap 0", "f:1: member 0 is in group 0");
        assertRefused(e, "act_prof_delete_group ap 0", "f:1: group 0 is used by a table entry");
        assertRefused(e, "act_prof_create_group ap\ntable_indirect_add_with_group ecmp 3 => 1",
                "f:2: group 1 is empty");
        assertRefused(e, "table_indirect_add_with_group ecmp 3 => 9", "f:1: action profile ap has no group 9");
        assertRefused(e, "act_prof_add_member_to_group ap 5 0", "f:1: action profile ap has no member 5");
        // The older per-table names work on the table's profile.
        e.applyEntries("table_indirect_create_member ecmp set_out 13\ntable_indirect_add_member_to_group ecmp 3 1\n"
                + "table_indirect_add_with_group ecmp 4 => 1", "f");
        assertThat(out(e, 4, 1, 1)).isEqualTo(13);
    }
}
