package ernic.mesh;

import ernic.counters.Counters;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The manager's membership rules on the plain table: no sockets, time from a mock ticker. */
class ManagerTableTest {
    private final MockTicker ticker = Ticker.newMockTicker();
    private final List<String> gidChanges = new ArrayList<>();
    private final GidTable gids = new GidTable((node, set) -> gidChanges.add(node + "=" + set));
    private final Counters<MeshCounter> counters = new Counters<>(MeshCounter.class);

    private ManagerTable table(int capacity) {
        return new ManagerTable(capacity, 99, ticker, gids, new GidClaims(counters));
    }

    /** A table that admitted workers 1 and 2 (instances 11 and 12). */
    private ManagerTable twoWorkers() {
        ManagerTable t = table(64);
        admit(t, 11);
        admit(t, 12);
        return t;
    }

    private static Set<Gid> gid(String... literals) {
        Set<Gid> s = new java.util.LinkedHashSet<>();
        for (String l : literals) {
            s.add(Gid.parse(l));
        }
        return s;
    }

    private static InetSocketAddress at(int port) {
        return new InetSocketAddress("127.0.0.1", port);
    }

    private ManagerTable.Admitted admit(ManagerTable t, long nonce) {
        return admit(t, nonce, 0);
    }

    private ManagerTable.Admitted admit(ManagerTable t, long nonce, int requestedId) {
        ManagerTable.Admission a = t.register(nonce, at(4000 + (int) nonce), requestedId);
        assertThat(a).isInstanceOf(ManagerTable.Admitted.class);
        return (ManagerTable.Admitted) a;
    }

    private static List<Integer> ids(ManagerTable t) {
        return t.topology().stream().map(NodeInfo::id).toList();
    }

    @Test
    void aRestartedManagerGivesWorkersTheIdsTheyHadUnlessItGaveThemOutAlready() {
        ManagerTable t = table(64); // a manager that restarted: it knows nobody
        assertThat(admit(t, 12, 2).id()).as("worker b, node 2 under the old manager, comes back first").isEqualTo(2);
        assertThat(admit(t, 11, 1).id()).as("worker a keeps node 1").isEqualTo(1);
        assertThat(admit(t, 13, 0).id()).as("a new instance: the next id nobody had").isEqualTo(3);
        assertThat(admit(t, 14, 3).id()).as("id 3 is given out already").isEqualTo(4);
        assertThat(admit(t, 15, 0).id()).isEqualTo(5);
        assertThat(admit(t, 16, 9).id()).as("an id far ahead is granted").isEqualTo(9);
        assertThat(admit(t, 17, 0).id()).isEqualTo(6);
        assertThat(admit(t, 18, 0).id()).isEqualTo(7);
        assertThat(admit(t, 19, 0).id()).isEqualTo(8);
        assertThat(admit(t, 20, 0).id()).as("9 was granted: skipped").isEqualTo(10);
        assertThat(admit(t, 21, ManagerTable.MAX_REQUESTED_ID + 1).id()).as("beyond the bound: not granted")
                .isEqualTo(11);
        assertThat(admit(t, 22, -5).id()).isEqualTo(12);
        assertThat(admit(t, 12, 7).id()).as("a known instance keeps its id whatever it asks").isEqualTo(2);
        assertThat(t.markDead(1)).isTrue();
        assertThat(admit(t, 23, 1).id()).as("a dead node's id is not given to another instance").isEqualTo(13);
    }

    @Test
    void idsGoOutInArrivalOrderAndTheSameInstanceKeepsItsId() {
        ManagerTable t = table(64);
        assertThat(ids(t)).containsExactly(0);
        assertThat(admit(t, 11).id()).isEqualTo(1);
        assertThat(admit(t, 12).id()).isEqualTo(2);
        ManagerTable.Admitted again = admit(t, 11);
        assertThat(again.id()).isEqualTo(1);
        assertThat(again.revived()).as("it never died").isFalse();
        assertThat(t.markDead(1)).isTrue();
        assertThat(t.markDead(1)).as("already dead").isFalse();
        assertThat(t.isAlive(1)).isFalse();
        ManagerTable.Admitted back = admit(t, 11);
        assertThat(back.id()).isEqualTo(1);
        assertThat(back.revived()).isTrue();
        // A restarted instance (a new nonce) is a new node: ids are never given out twice.
        assertThat(admit(t, 13).id()).isEqualTo(3);
        assertThat(t.markDead(0)).as("the manager itself").isFalse();
        assertThat(t.markDead(42)).isFalse();
    }

    @Test
    void theNewcomerIsWelcomedWithItsIdTheTopologyAndEveryGidSet() {
        ManagerTable t = table(64);
        t.claim(0, gid("fe80::1"), Set.of());
        admit(t, 11);
        t.claim(1, gid("fe80::a"), Set.of());
        ManagerTable.Admitted a = admit(t, 12);
        assertThat(a.welcome()).hasSize(3);
        assertThat(a.welcome().get(0)).isEqualTo(new Wire.RegisterAck(2));
        Wire.Topology topo = (Wire.Topology) a.welcome().get(1);
        assertThat(topo.nodes()).extracting(NodeInfo::id).containsExactly(0, 1, 2);
        assertThat(topo.nodes().get(2).address()).isEqualTo(at(4012));
        Wire.GidUpdate all = (Wire.GidUpdate) a.welcome().get(2);
        assertThat(all.records()).extracting(Wire.GidRecord::nodeId).containsExactly(0, 1, 2);
        assertThat(all.records().get(1).gids()).containsExactly(Gid.parse("fe80::a"));
    }

    @Test
    void theBroadcastCarriesOnlyWhatChanged() {
        ManagerTable t = twoWorkers();
        List<Wire.Frame> first = t.broadcast();
        assertThat(first).hasSize(2);
        assertThat(((Wire.GidUpdate) first.get(1)).records()).extracting(Wire.GidRecord::nodeId)
                .containsExactly(1, 2);
        assertThat(t.broadcast()).as("nothing changed").isEmpty();

        // A GID change alone: one record, no topology.
        assertThat(t.claim(2, Set.of(), gid("fe80::b"))).isTrue();
        List<Wire.Frame> gidsOnly = t.broadcast();
        assertThat(gidsOnly).singleElement().isInstanceOf(Wire.GidUpdate.class);
        Wire.GidRecord r = ((Wire.GidUpdate) gidsOnly.getFirst()).records().getFirst();
        assertThat(r).isEqualTo(new Wire.GidRecord(2, true, false, Set.of(Gid.parse("fe80::b"))));

        // A death: the topology and the dead node's record (its GIDs, marked not alive).
        t.markDead(2);
        List<Wire.Frame> death = t.broadcast();
        assertThat(((Wire.Topology) death.get(0)).nodes().get(2).alive()).isFalse();
        assertThat(((Wire.GidUpdate) death.get(1)).records())
                .containsExactly(new Wire.GidRecord(2, false, false, Set.of(Gid.parse("fe80::b"))));
    }

    @Test
    void aFullTableEvictsTheNodeDeadLongestOrRefuses() {
        ManagerTable t = table(4);
        admit(t, 11);
        admit(t, 12);
        admit(t, 13);
        t.claim(1, gid("fe80::a"), Set.of());
        // Nobody is dead: refused, with the reason on the wire.
        ManagerTable.Admission full = t.register(14, at(5000), 0);
        assertThat(full).isInstanceOf(ManagerTable.Refused.class);
        assertThat(((ManagerTable.Refused) full).refusal().reason()).isEqualTo(Wire.REFUSE_FULL);
        assertThat(ids(t)).containsExactly(0, 1, 2, 3);

        // 2 dies first, then 1: 2 has been dead longest and goes first, whatever its id.
        t.markDead(2);
        ticker.advanceMillis(1000);
        t.markDead(1);
        ticker.advanceMillis(1000);
        t.broadcast();
        ManagerTable.Admitted a = admit(t, 14);
        assertThat(a.id()).isEqualTo(4);
        assertThat(a.evicted()).isEqualTo(2);
        assertThat(ids(t)).containsExactly(0, 1, 3, 4);
        ManagerTable.Admitted b = admit(t, 15);
        assertThat(b.evicted()).isEqualTo(1);
        assertThat(ids(t)).containsExactly(0, 3, 4, 5);
        // The evicted node's GIDs are gone, and the broadcast says it was removed.
        assertThat(gids.owner(Gid.parse("fe80::a"))).isEmpty();
        assertThat(gidChanges).contains("1=[]");
        List<Wire.Frame> out = t.broadcast();
        assertThat(((Wire.Topology) out.get(0)).nodes()).extracting(NodeInfo::id).containsExactly(0, 3, 4, 5);
        assertThat(((Wire.GidUpdate) out.get(1)).records())
                .contains(new Wire.GidRecord(1, false, true, Set.of()), new Wire.GidRecord(2, false, true, Set.of()));
        // An evicted instance that comes back is a new node.
        assertThat(t.register(11, at(4011), 0)).isInstanceOf(ManagerTable.Refused.class);
        t.markDead(3);
        assertThat(admit(t, 11).id()).isEqualTo(6);
    }

    @Test
    void sixtyFourSlots() {
        ManagerTable t = table(MeshConfig.MAX_NODES);
        for (int i = 1; i < MeshConfig.MAX_NODES; i++) {
            assertThat(admit(t, 100 + i).id()).isEqualTo(i);
        }
        assertThat(t.topology()).hasSize(64);
        assertThat(t.register(1000, at(6000), 0)).isInstanceOf(ManagerTable.Refused.class);
        t.markDead(10);
        ManagerTable.Admitted extra = admit(t, 1000);
        assertThat(extra.id()).isEqualTo(64);
        assertThat(extra.evicted()).isEqualTo(10);
        assertThat(ids(t)).hasSize(64).doesNotContain(10).contains(64);
    }

    @Test
    void theFirstClaimerKeepsAGidAndTheConflictIsCounted() {
        ManagerTable t = twoWorkers();
        t.broadcast();
        t.claim(1, Set.of(), gid("10.78.0.1", "fe80::a"));
        t.claim(2, Set.of(), gid("10.78.0.1", "fe80::b"));
        assertThat(gids.owner(Gid.parse("10.78.0.1"))).hasValue(1);
        assertThat(gids.of(2)).containsExactly(Gid.parse("fe80::b"));
        assertThat(counters.get(MeshCounter.GID_CONFLICTS)).isEqualTo(1);
        // Node 2's record goes out without the GID it lost; claiming the same again changes nothing.
        assertThat(((Wire.GidUpdate) t.broadcast().getFirst()).records())
                .contains(new Wire.GidRecord(2, true, false, gid("fe80::b")));
        assertThat(t.claim(2, Set.of(), gid("fe80::b", "10.78.0.1"))).isFalse();
        assertThat(counters.get(MeshCounter.GID_CONFLICTS)).as("not a new claim").isEqualTo(1);
        // Node 1 lets go: the next claimer has it.
        assertThat(t.claim(1, Set.of(), gid("fe80::a"))).isTrue();
        assertThat(gids.owner(Gid.parse("10.78.0.1"))).hasValue(2);
    }

    @Test
    void aDeclaredClaimTakesAGidFromALearnedOne() {
        ManagerTable t = twoWorkers();
        t.claim(1, Set.of(), gid("10.78.0.9"));
        t.claim(2, gid("10.78.0.9"), Set.of());
        assertThat(gids.owner(Gid.parse("10.78.0.9"))).as("declared beats learned").hasValue(2);
        assertThat(counters.get(MeshCounter.GID_CONFLICTS)).isEqualTo(1);
        // A learned claim never takes it back from a declared one, however early.
        t.claim(1, Set.of(), gid("10.78.0.9", "fe80::a"));
        assertThat(gids.owner(Gid.parse("10.78.0.9"))).hasValue(2);
        // Node 1 declares it too now: two declared claims, node 1's is the older one.
        t.claim(1, gid("10.78.0.9"), gid("fe80::a"));
        assertThat(gids.owner(Gid.parse("10.78.0.9"))).hasValue(1);
    }

    @Test
    void aDeadOwnerYieldsToALiveClaimerAndAnEvictedOneLetsGo() {
        ManagerTable t = twoWorkers();
        t.claim(1, gid("10.78.0.1"), Set.of());
        t.claim(2, gid("10.78.0.1"), Set.of());
        assertThat(gids.owner(Gid.parse("10.78.0.1"))).hasValue(1);
        // Node 1 dies (a restarted server is a new node): the live claimer has the GID.
        t.markDead(1);
        assertThat(gids.owner(Gid.parse("10.78.0.1"))).hasValue(2);
        // The same instance back: its older claim ranks first again.
        admit(t, 11);
        assertThat(gids.owner(Gid.parse("10.78.0.1"))).hasValue(1);
        // A dead node's GID no live node claims stays its own (it may come back).
        t.claim(1, gid("10.78.0.1", "fe80::a"), Set.of());
        t.markDead(1);
        assertThat(gids.owner(Gid.parse("fe80::a"))).hasValue(1);
    }

    @Test
    void aGidTableRecordAppliedBeforeTheOneThatGivesItUpOverlapsOnlyForAMoment() {
        gids.apply(1, gid("fe80::a", "fe80::b"));
        gids.apply(2, gid("fe80::b")); // the record that gains it, applied first
        assertThat(gids.owner(Gid.parse("fe80::b"))).hasValue(2);
        gids.apply(1, gid("fe80::a")); // then the one that gives it up: node 2 keeps it
        assertThat(gids.owner(Gid.parse("fe80::b"))).hasValue(2);
        assertThat(gids.apply(1, gid("fe80::a"))).as("the same set again").isFalse();
        assertThat(gids.snapshot()).containsOnlyKeys(Gid.parse("fe80::a"), Gid.parse("fe80::b"));
    }
}
