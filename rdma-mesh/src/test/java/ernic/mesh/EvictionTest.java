package ernic.mesh;

import io.netty.channel.EventLoopGroup;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static ernic.mesh.Cluster.await;
import static org.assertj.core.api.Assertions.assertThat;

class EvictionTest {

    @Test
    void theLongestDeadNodeIsEvictedAndAFullTableRefuses() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast().withMaxNodes(4))) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            MeshNode w3 = c.startWorker();
            w1.close().syncUninterruptibly();
            await("1 dead", () -> !m.isAlive(1));
            w2.close().syncUninterruptibly();
            await("2 dead", () -> !m.isAlive(2));

            MeshNode a = c.startWorker();
            assertThat(a.nodeId()).isEqualTo(4);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0, 2, 3, 4);
            MeshNode b = c.startWorker();
            assertThat(b.nodeId()).isEqualTo(5);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0, 3, 4, 5);
            await("workers see the eviction", () -> a.topology().stream().noneMatch(n -> n.id() == 1 || n.id() == 2));
            assertThat(m.counters()).containsEntry("mesh.node.evictions", 2L);

            // Nobody is dead: the next one is refused, and keeps trying.
            MeshNode refused = c.newWorker(c.newLoop("refused"), c.base);
            await("refused", () -> m.counters().get("mesh.node.registrationsRefused") >= 1
                    && refused.counters().get("mesh.node.registrationsRefused") >= 1);
            assertThat(refused.nodeId()).isEqualTo(-1);

            // Once a node dies, the waiting one takes the slot of the longest dead, under a fresh id.
            w3.close().syncUninterruptibly();
            await("the waiting worker gets in", () -> refused.nodeId() > 0);
            assertThat(refused.nodeId()).isEqualTo(6);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0, 4, 5, 6);
        }
    }

    @Test
    void sixtyFourSlots() {
        // Direct connections off: this is about the manager's table, and 63 workers would open ~2000 of them.
        // A longer interval: 63 workers share a few threads, and none may be declared dead by accident.
        MeshConfig cfg = Cluster.fast().withDirectPeers(id -> false)
                .withHeartbeatInterval(java.time.Duration.ofMillis(1000));
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            MeshNode m = c.startManager();
            EventLoopGroup shared = c.newLoops("workers", 4);
            List<MeshNode> workers = new ArrayList<>();
            for (int i = 1; i < MeshConfig.MAX_NODES; i++) {
                workers.add(c.newWorker(shared, cfg));
            }
            await("63 workers registered", () -> workers.stream().allMatch(w -> w.nodeId() > 0));
            assertThat(workers).extracting(MeshNode::nodeId).doesNotHaveDuplicates().allMatch(id -> id < 64);
            assertThat(m.topology()).hasSize(64);

            MeshNode extra = c.newWorker(c.newLoop("extra"), cfg);
            await("the 65th is refused", () -> m.counters().get("mesh.node.registrationsRefused") >= 1);
            assertThat(extra.nodeId()).isEqualTo(-1);

            MeshNode victim = workers.stream().filter(w -> w.nodeId() == 10).findFirst().orElseThrow();
            victim.close().syncUninterruptibly();
            await("the waiting node takes the dead node's slot", () -> extra.nodeId() > 0);
            assertThat(extra.nodeId()).isEqualTo(64);
            assertThat(m.topology()).hasSize(64).extracting(NodeInfo::id).doesNotContain(10).contains(64);
            assertThat(m.counters()).containsEntry("mesh.node.evictions", 1L);
            assertThat(m.counters()).containsEntry("mesh.node.silentConnectionsClosed", 0L);
            // Relay still works across the full table.
            Cluster.Recorder r = new Cluster.Recorder();
            MeshNode w63 = workers.stream().filter(w -> w.nodeId() == 63).findFirst().orElseThrow();
            w63.addListener(r);
            assertThat(Cluster.send(extra, 63, "hello 63")).isEqualTo(SendResult.QUEUED);
            await("relayed to 63", () -> r.has(64, "hello 63"));
        }
    }
}
