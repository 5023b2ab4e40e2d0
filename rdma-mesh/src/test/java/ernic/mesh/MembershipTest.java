package ernic.mesh;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static ernic.mesh.Cluster.await;
import static ernic.mesh.Cluster.send;
import static org.assertj.core.api.Assertions.assertThat;

class MembershipTest {

    @Test
    void idsInArrivalOrderAndTopologyReachesAll() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            // The manager, then three workers, in this order (List.of evaluates its arguments left to right).
            List<MeshNode> all = List.of(c.startManager(), c.startWorker(), c.startWorker(), c.startWorker());
            assertThat(all).extracting(MeshNode::nodeId).containsExactly(0, 1, 2, 3);
            c.awaitTopology(all, 0, 1, 2, 3);
            for (MeshNode n : all) {
                assertThat(n.topology()).extracting(NodeInfo::id).containsExactly(0, 1, 2, 3);
            }
            NodeInfo two = all.get(1).topology().get(2);
            assertThat(two.address().getPort()).isEqualTo(all.get(2).localPort());
        }
    }

    @Test
    void directConnectionsFormLowerToHigherAndCarryData() {
        Cluster.Recorder r2 = new Cluster.Recorder();
        Cluster.Recorder r1 = new Cluster.Recorder();
        Cluster.Recorder rm = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager(rm);
            MeshNode w1 = c.startWorker(r1);
            MeshNode w2 = c.startWorker(r2);
            MeshNode w3 = c.startWorker();
            for (int[] pair : new int[][] {{1, 2}, {1, 3}, {2, 3}}) {
                MeshNode lo = List.of(w1, w2, w3).get(pair[0] - 1);
                MeshNode hi = List.of(w1, w2, w3).get(pair[1] - 1);
                await("direct " + pair[0] + "-" + pair[1], () -> lo.hasDirectConnection(pair[1])
                        && hi.hasDirectConnection(pair[0]));
                // The lower id dialed: its end is the higher node's listening port.
                InetSocketAddress remote = (InetSocketAddress) lo.channelTo(pair[1]).remoteAddress();
                InetSocketAddress local = (InetSocketAddress) hi.channelTo(pair[0]).localAddress();
                assertThat(remote.getPort()).isEqualTo(hi.localPort());
                assertThat(local.getPort()).isEqualTo(hi.localPort());
            }
            assertThat(send(w1, 2, "one-to-two")).isEqualTo(SendResult.QUEUED);
            assertThat(send(w2, 1, "two-to-one")).isEqualTo(SendResult.QUEUED);
            assertThat(send(w1, 0, "one-to-manager")).isEqualTo(SendResult.QUEUED);
            assertThat(send(m, 2, "manager-to-two")).isEqualTo(SendResult.QUEUED);
            await("delivered", () -> r2.has(1, "one-to-two") && r1.has(2, "two-to-one")
                    && rm.has(1, "one-to-manager") && r2.has(0, "manager-to-two"));
            assertThat(w1.peerCounters().get(2))
                    .containsEntry("messagesSent", 1L)
                    .containsEntry("bytesSent", (long) "one-to-two".length())
                    .containsEntry("relayedMessages", 0L);
            assertThat(w2.peerCounters().get(1)).containsEntry("messagesReceived", 1L);
            assertThat(w2.peerCounters().get(0)).containsEntry("messagesReceived", 1L);
            assertThat(send(w1, 1, "self")).isEqualTo(SendResult.NO_ROUTE);
            assertThat(send(w1, 42, "nobody")).isEqualTo(SendResult.NO_ROUTE);
        }
    }

    @Test
    void theCounterSetsGoIntoTheRegistryAndTheStatsViewKeepsItsKeys() {
        Cluster.Recorder rm = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            c.startManager(rm);
            MeshNode w = c.startWorker();
            assertThat(send(w, 0, "hello")).isEqualTo(SendResult.QUEUED);
            await("delivered", () -> rm.has(1, "hello"));
            ernic.counters.CounterRegistry registry = new ernic.counters.CounterRegistry();
            Cluster.on(w, () -> {
                w.registerCounters(registry);
                return null;
            });
            List<ernic.counters.CounterRegistry.Sample> samples = Cluster.on(w, registry::snapshot);
            assertThat(samples).contains(
                    new ernic.counters.CounterRegistry.Sample("mesh.node.protocolErrors", java.util.Map.of(), 0L),
                    new ernic.counters.CounterRegistry.Sample("mesh.peer.messagesSent",
                            java.util.Map.of("peer", "0"), 1L),
                    new ernic.counters.CounterRegistry.Sample("mesh.peer.bytesSent",
                            java.util.Map.of("peer", "0"), 5L));
            assertThat(w.counters()).containsKeys("mesh.node.refusedHandshakes", "mesh.node.gidRecordsReceived");
            assertThat(w.peerCounters().get(0)).containsKeys("messagesSent", "queueDepth", "reconnects", "takenBack");
            assertThat(w.peerCounters().get(0).keySet()).containsExactly("bytesSent", "messagesSent",
                    "bytesReceived", "messagesReceived", "queueDepth", "reconnects", "relayedMessages",
                    "relayedBytes", "takenBack");
            org.assertj.core.api.Assertions.assertThatThrownBy(w::peerCounterSets)
                    .as("the live sets belong to the loop").isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aDroppedDirectConnectionIsMadeAgain() {
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker(r2);
            await("direct", () -> w1.hasDirectConnection(2));
            io.netty.channel.Channel first = w1.channelTo(2);
            // The higher node drops it; the lower one dials again.
            w2.channelTo(1).close().syncUninterruptibly();
            // One look at the channel: between two looks the old one can close, and no channel is not a new one.
            await("dialed again", () -> {
                io.netty.channel.Channel now = w1.channelTo(2);
                return now != null && now != first;
            });
            assertThat(w1.peerCounters().get(2)).containsEntry("reconnects", 1L);
            assertThat(send(w1, 2, "again")).isEqualTo(SendResult.QUEUED);
            await("delivered", () -> r2.has(1, "again"));
            assertThat(w1.peerCounters().get(2)).containsEntry("relayedMessages", 0L);
        }
    }

    @Test
    void aPayloadTooLargeForAFrameIsRefusedByTheSender() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast().withMaxFrameLength(4096))) {
            c.startManager();
            MeshNode w1 = c.startWorker();
            Cluster.Recorder rm = new Cluster.Recorder();
            c.manager.addListener(rm);
            assertThat(w1.maxPayload()).isEqualTo(4096 - Wire.DATA_OVERHEAD);
            String fits = "x".repeat(w1.maxPayload());
            assertThat(send(w1, 0, fits)).isEqualTo(SendResult.QUEUED);
            await("the largest payload arrives", () -> rm.has(1, fits));
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> send(w1, 0, fits + "x"))
                    .hasRootCauseInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void relayThroughTheManagerWhenTheDirectConnectionIsRefused() {
        Cluster.Recorder r1 = new Cluster.Recorder();
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker(r1);
            // Node 2 refuses direct connections from node 1 (the test hook), so 1 and 2 go by way of the manager.
            MeshNode w2 = c.startWorker(c.base.withDirectPeers(id -> id != 1), r2);
            c.awaitTopology(List.of(w1, w2), 1, 2);
            assertThat(w1.hasDirectConnection(2)).isFalse();
            for (int i = 0; i < 5; i++) {
                assertThat(send(w1, 2, "relayed-" + i)).isEqualTo(SendResult.QUEUED);
            }
            assertThat(send(w2, 1, "back")).isEqualTo(SendResult.QUEUED);
            await("relayed messages arrive", () -> r2.messages.size() == 5 && r1.has(2, "back"));
            assertThat(r2.messages).extracting(Cluster.Received::source).containsOnly(1);
            assertThat(r2.messages).extracting(r -> new String(r.bytes()))
                    .containsExactly("relayed-0", "relayed-1", "relayed-2", "relayed-3", "relayed-4");
            // Relayed messages to or from the peer: five out and one back.
            assertThat(w1.peerCounters().get(2)).containsEntry("relayedMessages", 6L);
            assertThat(w2.peerCounters().get(1)).containsEntry("relayedMessages", 6L);
            assertThat(m.peerCounters().get(2)).containsEntry("relayedMessages", 5L);
            assertThat(m.peerCounters().get(1)).containsEntry("relayedMessages", 1L);
            assertThat(w1.hasDirectConnection(2)).isFalse();
        }
    }

    @Test
    void reconnectKeepsTheId() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            w1.dropManagerConnection();
            await("worker 1 reconnected", () -> w1.peerCounters().getOrDefault(0, java.util.Map.of())
                    .getOrDefault("reconnects", 0L) == 1L && w1.hasRoute(0));
            assertThat(w1.nodeId()).isEqualTo(1);
            assertThat(m.peerCounters().get(1)).containsEntry("reconnects", 1L);
            MeshNode w3 = c.startWorker();
            assertThat(w3.nodeId()).isEqualTo(3);
            assertThat(w2.nodeId()).isEqualTo(2);
        }
    }

    @Test
    void aRestartedManagerLeavesTheWorkersTheirIdsAndTheirDirectConnection() {
        Cluster.Recorder r1 = new Cluster.Recorder(), r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker(r1);
            MeshNode w2 = c.startWorker(r2);
            await("direct 1-2", () -> w1.hasDirectConnection(2) && w2.hasDirectConnection(1));
            int port = m.localPort();
            m.close().syncUninterruptibly();
            await("both lost the manager", () -> !w1.hasRoute(0) && !w2.hasRoute(0));
            MeshNode m2 = c.startManager(port, c.base);
            await("both registered with the new manager", () -> m2.isAlive(1) && m2.isAlive(2)
                    && w1.isAlive(2) && w2.isAlive(1));
            assertThat(w1.nodeId()).as("ids kept: each asked for its own").isEqualTo(1);
            assertThat(w2.nodeId()).isEqualTo(2);
            assertThat(r1.deaths).as("node 2 never went dead at node 1, nor 1 at 2").doesNotContain(2);
            assertThat(r2.deaths).doesNotContain(1);
            assertThat(w1.peerCounters().get(2)).as("the direct connection was never made again")
                    .containsEntry("reconnects", 0L);
            assertThat(send(w1, 2, "through the restart")).isEqualTo(SendResult.QUEUED);
            await("1 -> 2", () -> r2.has(1, "through the restart"));
        }
    }

    @Test
    void aPeerTheNewManagerDoesNotKnowLivesAsLongAsItsDirectConnection() {
        Cluster.Recorder r1 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker(r1);
            // Worker 2 waits 30 s before it tries the manager again: the new manager will not know it.
            MeshNode w2 = c.startWorker(c.base.withReconnectDelay(java.time.Duration.ofSeconds(30)));
            await("direct 1-2", () -> w1.hasDirectConnection(2) && w2.hasDirectConnection(1));
            int port = m.localPort();
            m.close().syncUninterruptibly();
            MeshNode m2 = c.startManager(port, c.base);
            await("worker 1 registered with the new manager", () -> m2.isAlive(1) && w1.hasRoute(0));
            assertThat(m2.isAlive(2)).isFalse();
            assertThat(w1.isAlive(2)).as("kept: its direct connection is up").isTrue();
            assertThat(send(w1, 2, "still")).isEqualTo(SendResult.QUEUED);
            w2.close().syncUninterruptibly();
            await("node 2 gone with its connection", () -> !w1.isAlive(2) && r1.deaths.contains(2));
            assertThat(send(w1, 2, "gone")).isEqualTo(SendResult.NO_ROUTE);
        }
    }

    @Test
    void aRestartedWorkerGetsANewIdAndIdsAreNeverReused() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            c.startWorker();
            long oldNonce = w1.instanceNonce();
            w1.close().syncUninterruptibly();
            await("manager sees node 1 dead", () -> !m.isAlive(1));
            MeshNode restarted = c.startWorker();
            assertThat(restarted.instanceNonce()).isNotEqualTo(oldNonce);
            assertThat(restarted.nodeId()).isEqualTo(3);
            // The same instance identity (as after a network outage) gets its old id back.
            MeshNode same = c.startWorker(c.base.withInstanceNonce(oldNonce));
            assertThat(same.nodeId()).isEqualTo(1);
        }
    }

    @Test
    void aHungWorkerIsDeclaredDeadThenComesBackWithItsId() {
        Cluster.Recorder rm = new Cluster.Recorder();
        Cluster.Recorder r1 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager(rm);
            MeshNode w1 = c.startWorker(r1);
            MeshNode w2 = c.startWorker();
            c.awaitTopology(List.of(m, w1, w2), 1, 2);
            await("direct 1-2", () -> w1.hasDirectConnection(2));
            CountDownLatch release = new CountDownLatch(1);
            // Its loop stops: TCP stays up, but it answers nothing. (When: MeshLinkTest, on a mock ticker.)
            w2.eventLoop().execute(() -> {
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            await("manager declares node 2 dead", () -> !m.isAlive(2));
            await("worker 1 hears of it", () -> !w1.isAlive(2));
            assertThat(rm.deaths).contains(2);
            assertThat(r1.deaths).contains(2);
            assertThat(send(w1, 2, "lost")).isEqualTo(SendResult.NO_ROUTE);
            assertThat(send(m, 2, "lost")).isEqualTo(SendResult.NO_ROUTE);
            assertThat(m.counters().get("mesh.node.silentConnectionsClosed")).isGreaterThanOrEqualTo(1L);
            release.countDown();
            await("node 2 back", () -> m.isAlive(2) && w1.isAlive(2));
            assertThat(w2.nodeId()).isEqualTo(2);
            await("direct 1-2 again", () -> w1.hasDirectConnection(2));
        }
    }

    @Test
    void aKilledWorkerIsDeadAndTheOthersKeepWorking() {
        Cluster.Recorder r3 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker();
            MeshNode w3 = c.startWorker(r3);
            c.awaitTopology(List.of(m, w1, w2, w3), 1, 2, 3);
            w2.eventLoop().shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).syncUninterruptibly();
            await("node 2 dead everywhere", () -> !m.isAlive(2) && !w1.isAlive(2) && !w3.isAlive(2));
            assertThat(send(w1, 2, "x")).isEqualTo(SendResult.NO_ROUTE);
            assertThat(send(w1, 3, "still here")).isEqualTo(SendResult.QUEUED);
            await("1 -> 3 works", () -> r3.has(1, "still here"));
        }
    }

    @Test
    void heartbeatIntervalsAreIndependent() {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            // (Intervals long enough that a loaded CI machine answers a heartbeat within three of the worker's: at
            // 30 ms one run under load 6 saw the answer late and the worker dropped the connection.)
            MeshNode m = c.startManager(c.base.withHeartbeatInterval(java.time.Duration.ofMillis(750)));
            MeshNode w = c.startWorker(c.base.withHeartbeatInterval(java.time.Duration.ofMillis(150)));
            // Fifteen of the worker's intervals, three of the manager's, with no data at all: heartbeats alone
            // keep both sides alive.
            await("fifteen heartbeats", () -> w.counters().get("mesh.node.heartbeatsSent") >= 15
                    && m.counters().get("mesh.node.heartbeatsReceived") >= 15);
            assertThat(m.isAlive(1)).isTrue();
            assertThat(w.counters()).containsEntry("mesh.node.silentConnectionsClosed", 0L);
            assertThat(w.peerCounters().get(0)).containsEntry("reconnects", 0L);
            assertThat(m.counters()).containsEntry("mesh.node.silentConnectionsClosed", 0L);
            assertThat(m.peerCounters().get(1)).containsEntry("reconnects", 0L);
        }
    }

    @Test
    void everyResolvedAddressIsTried() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            c.startManager();
            // The name resolves first to an address nothing listens on, then to the manager's.
            MeshConfig cfg = c.base.withResolver(name -> {
                try {
                    return List.of(java.net.InetAddress.getByName("127.0.0.3"),
                            java.net.InetAddress.getByName("127.0.0.1"));
                } catch (java.net.UnknownHostException e) {
                    throw new IllegalStateException(e);
                }
            });
            MeshNode w = MeshNode.worker(c.newLoop("w"), "manager.example", c.manager.localPort(), cfg);
            try {
                w.start().syncUninterruptibly();
                await("registered through the second address", () -> w.nodeId() == 1);
            } finally {
                w.close().syncUninterruptibly();
            }
        }
    }
}
