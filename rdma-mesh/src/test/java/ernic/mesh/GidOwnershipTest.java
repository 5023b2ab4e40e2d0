package ernic.mesh;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

import static ernic.mesh.Cluster.await;
import static org.assertj.core.api.Assertions.assertThat;

class GidOwnershipTest {
    static final Gid G0 = Gid.parse("fe80::1");
    static final Gid G1 = Gid.parse("fe80::a");
    static final Gid G1B = Gid.parse("10.0.0.1");
    static final Gid G2 = Gid.parse("fe80::b");
    static final Gid G3 = Gid.parse("fe80::c");

    @Test
    void everyNodeResolvesEveryAdvertisedGid() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            m.advertiseGids(Set.of(G0));
            MeshNode w1 = c.startWorker();
            w1.advertiseGidBytes(List.of(G1.toBytes(), G1B.toBytes()));
            MeshNode w2 = c.startWorker();
            w2.advertiseGids(Set.of(G2));
            List<MeshNode> all = List.of(m, w1, w2);
            for (MeshNode n : all) {
                await("node " + n.nodeId() + " knows every GID", () -> n.ownerOf(G0).equals(OptionalInt.of(0))
                        && n.ownerOf(G1).equals(OptionalInt.of(1)) && n.ownerOf(G1B.toBytes()).equals(OptionalInt.of(1))
                        && n.ownerOf(G2).equals(OptionalInt.of(2)));
                assertThat(n.ownerOf(G3)).isEmpty();
            }

            // A change goes out to everyone; the old GID is no longer owned.
            w1.advertiseGids(Set.of(G3));
            for (MeshNode n : all) {
                await("node " + n.nodeId() + " sees the change", () -> n.ownerOf(G3).equals(OptionalInt.of(1))
                        && n.ownerOf(G1).isEmpty() && n.ownerOf(G1B).isEmpty());
            }

            // A node that registers later is sent the whole table.
            MeshNode late = c.startWorker();
            await("late node has the whole table", () -> late.gidTable().equals(
                    java.util.Map.of(G0, 0, G3, 1, G2, 2)));
        }
    }

    @Test
    void gidsAdvertisedBeforeRegistrationAreSentAtRegistration() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w = MeshNode.worker(c.newLoop("w"), "127.0.0.1", m.localPort(), c.base);
            w.advertiseGids(Set.of(G1));
            try {
                w.start().syncUninterruptibly();
                await("manager learns the GID", () -> m.ownerOf(G1).equals(OptionalInt.of(1)));
                await("the worker hears it owns it", () -> w.ownerOf(G1).equals(OptionalInt.of(1)));
            } finally {
                w.close().syncUninterruptibly();
            }
        }
    }

    @Test
    void theManagerSendsOnlyWhatChanged() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            MeshNode w3 = c.startWorker();
            w1.advertiseGids(Set.of(G1));
            w2.advertiseGids(Set.of(G2));
            w3.advertiseGids(Set.of(G3));
            await("settled", () -> w3.gidTable().size() == 3 && w1.gidTable().size() == 3);
            long before = w3.counters().get("mesh.node.gidRecordsReceived");
            w1.advertiseGids(Set.of(G1, G1B));
            await("w3 sees the change", () -> w3.ownerOf(G1B).equals(OptionalInt.of(1)));
            // Exactly one node's record travelled: node 1's.
            assertThat(w3.counters().get("mesh.node.gidRecordsReceived")).isEqualTo(before + 1);
            // Advertising the same set again sends nothing.
            w1.advertiseGids(Set.of(G1B, G1));
            assertThat(Cluster.send(w1, 3, "barrier")).isEqualTo(SendResult.QUEUED);
            Cluster.on(m, () -> null);
            assertThat(w3.counters().get("mesh.node.gidRecordsReceived")).isEqualTo(before + 1);
        }
    }

    static boolean learn(MeshNode n, Gid g) {
        return Cluster.on(n, () -> n.learnGid(g.hi(), g.lo()));
    }

    @Test
    void aLearnedGidIsEveryNodesAndTheFirstOwnerKeepsItUntilADeclaredClaimComes() {
        Gid g = Gid.parse("10.78.0.1");
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            List<MeshNode> all = List.of(m, w1, w2);
            assertThat(learn(w1, g)).isTrue();
            assertThat(w1.learnedGids()).containsExactly(g);
            for (MeshNode n : all) {
                await("node " + n.nodeId() + " has node 1 own the learned GID", () -> n.ownerOf(g).equals(OptionalInt.of(1)));
            }
            // Node 2's guest sends from the same address: a conflict, counted and logged; node 1 keeps it.
            assertThat(learn(w2, g)).isTrue();
            await("the manager counts the conflict", () -> m.counters().get("mesh.node.gidConflicts") == 1);
            for (MeshNode n : all) {
                assertThat(n.ownerOf(g)).as("node " + n.nodeId()).hasValue(1);
            }
            // Declared beats learned: node 2 is told the GID is its guest's.
            w2.advertiseGids(Set.of(g));
            for (MeshNode n : all) {
                await("node " + n.nodeId() + " has node 2 own the declared GID", () -> n.ownerOf(g).equals(OptionalInt.of(2)));
            }
            assertThat(w2.learnedGids()).as("declared, so no longer learned").isEmpty();
            assertThat(w1.counters()).containsEntry("mesh.node.gidsLearned", 1L);
        }
    }

    @Test
    void gidTypeRoundTrips() {
        byte[] raw = G1.toBytes();
        assertThat(raw).hasSize(16);
        assertThat(raw[0]).isEqualTo((byte) 0xfe);
        assertThat(raw[15]).isEqualTo((byte) 0x0a);
        assertThat(Gid.of(raw)).isEqualTo(G1).hasSameHashCodeAs(G1);
        assertThat(G1B.toString()).isEqualTo("10.0.0.1");
        assertThat(G1B.toBytes()[10]).isEqualTo((byte) 0xff);
        assertThat(G1.toString()).isEqualTo("fe80:0:0:0:0:0:0:a");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Gid.parse("not-an-ip"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Gid.of(new byte[4]))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
