package ernic.p4;

import org.junit.jupiter.api.Test;

import java.util.List;

import static ernic.p4.Progs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multicast as simple_switch does it (simple_switch.cpp's multicast(), bmv2's simple_pre.cpp): mcast_grp set in
 * ingress discards the frame and makes one copy per port of each of the group's nodes (nodes in association order,
 * ports ascending), each with the whole PHV, instance_type 5 (REPLICATION) and its node's egress_rid; mark_to_drop
 * clears mcast_grp; a mirror session may send its clones to a group (mirroring_add_mc). Header h is [x, tag, rid,
 * itype, keep]; ingress table ing on h.x; egress writes egress_rid, instance_type and m.keep into the header.
 */
class MulticastTest {
    static final String TYPES = "{\"name\":\"h_t\",\"id\":1,\"fields\":[[\"x\",8,false],[\"tag\",8,false],"
            + "[\"rid\",8,false],[\"itype\",8,false],[\"keep\",8,false]]},"
            + "{\"name\":\"m_t\",\"id\":2,\"fields\":[[\"keep\",8,false]]}";
    static final String HEADERS = "{\"name\":\"h\",\"id\":1,\"header_type\":\"h_t\",\"metadata\":false},"
            + "{\"name\":\"m\",\"id\":2,\"header_type\":\"m_t\",\"metadata\":true}";
    static final String LISTS = "\"field_lists\":[{\"id\":1,\"name\":\"fl\",\"elements\":[" + field("m", "keep") + "]}]";

    static String set(String h, String f, String v) {
        return assign(field(h, f), hex(v));
    }

    static String group(String v) {
        return set("standard_metadata", "mcast_grp", v);
    }

    static P4Engine engine() {
        String[] a = {
            "",                                                                                 // a0: nothing
            group("0x1") + "," + set("m", "keep", "0x42") + "," + set("h", "tag", "0xaa"),      // a1: to group 1
            group("0x1") + ",{\"op\":\"mark_to_drop\",\"parameters\":[{\"type\":\"header\",\"value\":\"standard_metadata\"}]}",
            egressSpec("0x1") + "," + set("m", "keep", "0x33")                                  // a3: I2E clone, session 7
                    + ",{\"op\":\"clone_ingress_pkt_to_egress\",\"parameters\":[" + hex("0x7") + "," + hex("0x1") + "]}",
            group("0x9"),                                                                       // a4: a group nobody made
            // egress: show the copy's egress_rid, instance_type and m.keep
            assign(field("h", "rid"), field("standard_metadata", "egress_rid")) + ","
                    + assign(field("h", "itype"), field("standard_metadata", "instance_type")) + ","
                    + assign(field("h", "keep"), field("m", "keep")),
        };
        StringBuilder actions = new StringBuilder();
        for (int i = 0; i < a.length; i++) {
            actions.append(i == 0 ? "" : ",").append(action("a" + i, i, "", a[i]));
        }
        String ing = """
                {"name":"ing","id":0,"key":[{"match_type":"exact","target":["h","x"],"mask":null}],"match_type":"exact",
                 "type":"simple","max_size":16,"with_counters":false,"support_timeout":false,"direct_meters":null,
                 "action_ids":[0,1,2,3,4],"actions":["a0","a1","a2","a3","a4"],"base_default_next":null,"next_tables":{},
                 "default_entry":{"action_id":0,"action_const":false,"action_data":[],"action_entry_const":false}}""";
        String prog = program(LISTS, TYPES, HEADERS, state("start", 0, extract("h"), "", dflt(null)),
                actions.toString(), ing, "", "ing", "\"h\"")
                .replace("{\"name\":\"egress\",\"id\":1,\"init_table\":null,\"tables\":[]",
                        "{\"name\":\"egress\",\"id\":1,\"init_table\":\"show\",\"tables\":[" + always("show", 1, "a5", 5, null) + "]");
        P4Engine e = Loader.load(prog);
        e.applyEntries("""
                table_add ing a1 1 =>
                table_add ing a2 2 =>
                table_add ing a3 3 =>
                table_add ing a4 4 =>
                mc_mgrp_create 1
                mc_node_create 10 1          # handle 0
                mc_node_create 20 0 1        # handle 1
                mc_node_associate 1 1        # node 1 first: its copies come first
                mc_node_associate 1 0
                """, "entries");
        return e;
    }

    static byte[] frame(int x) {
        return Progs.bytes(x, 0, 0, 0, 0, 0x55, 0x66);
    }

    @Test
    void aFrameToAGroupBecomesOneCopyPerPortOfEachNodeWithItsRid() {
        P4Engine e = engine();
        assertThat(e.process(frame(1), 0, 7, 0)).isEqualTo(P4Engine.REPLICATED);
        assertThat(e.lastMulticastGroup()).isEqualTo(1);
        // The header change (tag 0xaa) and the metadata (m.keep 0x42) travel with every copy; instance_type 5.
        assertThat(e.copies()).usingRecursiveFieldByFieldElementComparator().containsExactly(
                copy(P4Engine.PORT_TAP, 20, Progs.bytes(1, 0xaa, 20, 5, 0x42, 0x55, 0x66)),
                copy(P4Engine.PORT_GUEST, 20, Progs.bytes(1, 0xaa, 20, 5, 0x42, 0x55, 0x66)),
                copy(P4Engine.PORT_GUEST, 10, Progs.bytes(1, 0xaa, 10, 5, 0x42, 0x55, 0x66)));
        assertThat(e.counters().get(P4Counter.MULTICAST_COPIES)).isEqualTo(3);
        assertThat(e.counters().get(P4Counter.FRAMES_OUT)).isEqualTo(3);
        assertThat(e.counters().get(P4Counter.DROPS)).isZero();
    }

    static P4Engine.Copy copy(int port, int rid, byte[] bytes) {
        return new P4Engine.Copy(port, bytes, 5, rid);
    }

    @Test
    void nodesComeAndGoAndAnEmptyOrUnknownGroupMakesNoCopy() {
        P4Engine e = engine();
        e.applyEntries("mc_node_dissociate 1 1\nmc_node_update 0 0", "entries");
        e.process(frame(1), 0, 7, 0);
        assertThat(e.copies()).extracting(P4Engine.Copy::verdict, P4Engine.Copy::egressRid)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(P4Engine.PORT_TAP, 10));
        // Node 1 destroyed frees its handle: the next node takes 1 again (bmv2's lowest free handle).
        e.applyEntries("mc_node_destroy 1\nmc_node_create 30 1\nmc_node_associate 1 1\nmc_node_destroy 0", "entries");
        e.process(frame(1), 0, 7, 0);
        assertThat(e.copies()).extracting(P4Engine.Copy::egressRid).containsExactly(30);
        e.applyEntries("mc_mgrp_destroy 1", "entries");
        assertThat(e.process(frame(1), 0, 7, 0)).isEqualTo(P4Engine.DROPPED_MULTICAST);
        assertThat(e.process(frame(4), 0, 7, 0)).isEqualTo(P4Engine.DROPPED_MULTICAST);
        assertThat(e.copies()).isEmpty();
        assertThat(e.counters().get(P4Counter.DROPS_MULTICAST)).isEqualTo(2);
    }

    /**
     * A group of 16 nodes of 16 ports each (256 copies asked for) makes 16 at most (the rest not made, counted once);
     * and no more than 4096 nodes exist.
     */
    @Test
    void aLargeGroupMakesNoMoreThan16Copies() {
        P4Engine e = engine();
        StringBuilder all = new StringBuilder("mc_node_destroy 0\nmc_node_destroy 1\n");
        StringBuilder ports = new StringBuilder();
        for (int port = 0; port < 16; port++) {
            ports.append(' ').append(port);
        }
        for (int n = 0; n < 16; n++) {
            all.append("mc_node_create 1").append(ports).append("\nmc_node_associate 1 ").append(n).append('\n');
        }
        e.applyEntries(all.toString(), "entries");
        assertThat(e.process(frame(1), 0, 7, 0)).isEqualTo(P4Engine.REPLICATED);
        assertThat(e.copies()).hasSize(16).extracting(P4Engine.Copy::verdict)
                .containsExactly(0, 1, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2);
        assertThat(e.counters().get(P4Counter.MULTICAST_COPIES)).isEqualTo(16);
        assertThat(e.counters().get(P4Counter.DROPS_LOOP)).isEqualTo(1);
        e.applyEntries("mc_node_create 1\n".repeat(Multicast.MAX_NODES - 16), "entries");
        assertRefused(e, "mc_node_create 2 0", "f:1: mc_node_create: 4096 multicast nodes exist already");
    }

    @Test
    void markToDropAfterSettingTheGroupDropsTheFrame() {
        P4Engine e = engine();
        assertThat(e.process(frame(2), 0, 7, 0)).isEqualTo(P4Engine.DROPPED);
        assertThat(e.copies()).isEmpty();
    }

    @Test
    void aMirrorSessionToAGroupSendsTheCloneToEachPortOfIt() {
        P4Engine e = engine();
        e.applyEntries("mc_mgrp_create 2\nmc_node_create 7 0\nmc_node_associate 2 2\nmirroring_add_mc 7 2", "entries");
        assertThat(e.process(frame(3), 0, 7, 0)).isEqualTo(P4Engine.PORT_GUEST);
        assertThat(Progs.out(e)).isEqualTo(Progs.bytes(3, 0, 0, 0, 0x33, 0x55, 0x66));
        // The ingress clone: parsed again (tag 0), its field list's m.keep, instance_type 1, the node's rid 7.
        assertThat(e.copies()).usingRecursiveFieldByFieldElementComparator().containsExactly(
                new P4Engine.Copy(P4Engine.PORT_TAP, Progs.bytes(3, 0, 7, 1, 0x33, 0x55, 0x66), 1, 7));
        // mirroring_add gives the session a port again, and the group no longer.
        e.applyEntries("mirroring_add 7 1", "entries");
        e.process(frame(3), 0, 7, 0);
        assertThat(e.copies()).extracting(P4Engine.Copy::verdict, P4Engine.Copy::egressRid)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(P4Engine.PORT_GUEST, 0));
    }

    @Test
    void malformedCommandsAreOneLineEach() {
        P4Engine e = engine();
        for (String[] c : List.of(
                new String[] {"mc_node_associate 5 0", "no multicast group 5"},
                new String[] {"mc_node_associate 1 0", "multicast node 0 is associated with group 1 already"},
                new String[] {"mc_node_dissociate 1 7", "no multicast node 7"},
                new String[] {"mc_node_create 1 512", "value '512' does not fit 9 bits"},
                new String[] {"mc_node_create 1 3 3", "mc_node_create: port 3 twice"},
                new String[] {"mc_mgrp_create 1", "multicast group 1 exists already"},
                new String[] {"mc_mgrp_create 70000", "value '70000' does not fit 16 bits"},
                new String[] {"mc_mgrp_destroy", "mc_mgrp_destroy takes 1 argument, got 0"},
                new String[] {"mirroring_add_mc 1", "mirroring_add_mc takes 2 arguments, got 1"})) {
            assertRefused(e, c[0], "f:1: " + c[1]);
        }
    }
}
