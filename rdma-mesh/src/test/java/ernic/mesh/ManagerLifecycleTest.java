package ernic.mesh;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.List;
import java.util.Set;

import static ernic.mesh.Cluster.await;
import static ernic.mesh.Cluster.send;
import static org.assertj.core.api.Assertions.assertThat;

class ManagerLifecycleTest {

    /** A free port below the usual ephemeral range, so no outgoing connection takes it meanwhile. */
    private static int freePort() {
        java.util.Random r = new java.util.Random();
        for (int i = 0; i < 100; i++) {
            int port = 20000 + r.nextInt(10000);
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (java.io.IOException taken) {
                // try another
            }
        }
        throw new IllegalStateException("no free port");
    }

    @Test
    void aWorkerStartedFirstRegistersWhenTheManagerComesUp() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            int port = freePort();
            // The resolver is asked at each attempt: the second means the first found nobody.
            java.util.concurrent.CountDownLatch attempts = new java.util.concurrent.CountDownLatch(2);
            MeshConfig cfg = c.base.withResolver(name -> {
                attempts.countDown();
                return List.of(java.net.InetAddress.getLoopbackAddress());
            });
            MeshNode w = MeshNode.worker(c.newLoop("early"), "127.0.0.1", port, cfg);
            try {
                w.start().syncUninterruptibly();
                assertThat(attempts.await(Cluster.WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                        .isTrue();
                assertThat(w.nodeId()).isEqualTo(-1);
                assertThat(w.hasRoute(0)).isFalse();
                MeshNode m = MeshNode.manager(c.newLoop("late-manager"), port, c.base);
                try {
                    m.start().syncUninterruptibly();
                    await("registered", () -> w.nodeId() == 1 && m.isAlive(1));
                } finally {
                    m.close().syncUninterruptibly();
                }
            } finally {
                w.close().syncUninterruptibly();
            }
        }
    }

    /**
     * A manager on the old one's port. The bind can briefly fail while the kernel tears the old
     * listener's connections down, as a restarted manager process may see too: try for a while.
     */
    private static MeshNode restartManager(Cluster c, int port) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            MeshNode m = MeshNode.manager(c.newLoop("m2-" + attempt), port, c.base);
            if (m.start().awaitUninterruptibly().isSuccess()) {
                return m;
            }
            m.close().syncUninterruptibly();
            if (attempt == 50) {
                throw new IllegalStateException("port " + port + " stayed in use");
            }
            Thread.sleep(50);
        }
    }

    @Test
    void aRestartedManagerNumbersTheWorkersAfreshAndTheMeshHeals() throws Exception {
        Cluster.Recorder ra = new Cluster.Recorder();
        Cluster.Recorder rb = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            int port = freePort();
            MeshNode m1 = MeshNode.manager(c.newLoop("m1"), port, c.base);
            m1.start().syncUninterruptibly();
            MeshNode a = MeshNode.worker(c.newLoop("a"), "127.0.0.1", port, c.base).addListener(ra);
            MeshNode b = MeshNode.worker(c.newLoop("b"), "127.0.0.1", port, c.base).addListener(rb);
            try {
                a.start().syncUninterruptibly();
                await("a", () -> a.nodeId() == 1);
                b.start().syncUninterruptibly();
                await("b", () -> b.nodeId() == 2);
                a.advertiseGids(Set.of(Gid.parse("fe80::a")));
                await("direct", () -> a.hasDirectConnection(2));

                m1.close().syncUninterruptibly();
                MeshNode m2 = restartManager(c, port);
                try {
                    await("both registered again", () -> m2.isAlive(1) && m2.isAlive(2)
                            && a.nodeId() > 0 && b.nodeId() > 0);
                    assertThat(List.of(a.nodeId(), b.nodeId())).containsExactlyInAnyOrder(1, 2);
                    int ia = a.nodeId();
                    int ib = b.nodeId();
                    await("GIDs re-advertised", () -> b.ownerOf(Gid.parse("fe80::a")).equals(java.util.OptionalInt.of(ia)));
                    await("direct again", () -> a.hasDirectConnection(ib) && b.hasDirectConnection(ia));
                    assertThat(send(a, ib, "healed")).isEqualTo(SendResult.QUEUED);
                    await("delivered", () -> rb.has(ia, "healed"));
                } finally {
                    m2.close().syncUninterruptibly();
                }
            } finally {
                a.close().syncUninterruptibly();
                b.close().syncUninterruptibly();
            }
        }
    }
}
