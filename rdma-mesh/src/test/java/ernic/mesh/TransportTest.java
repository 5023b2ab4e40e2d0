package ernic.mesh;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import org.junit.jupiter.api.Test;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

import static ernic.mesh.Cluster.await;
import static ernic.mesh.Cluster.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The mesh over IPv6 loopback, and on epoll loops like the device's. */
class TransportTest {

    private static boolean ipv6Loopback() {
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.bind(new InetSocketAddress("::1", 0));
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Test
    void ipv6Loopback_bracketedManagerAddress() {
        assumeTrue(ipv6Loopback(), "no IPv6 loopback here");
        Cluster.Recorder r2 = new Cluster.Recorder();
        try (Cluster c = new Cluster("::1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshAddress managerAddress = MeshAddress.parse("[::1]:" + m.localPort());
            MeshNode w1 = MeshNode.worker(c.newLoop("w1"), managerAddress, c.base);
            // A zone id in the manager's address, as for a link-local one.
            MeshAddress zoned = MeshAddress.parse("[::1%lo]:" + m.localPort());
            MeshNode w2 = MeshNode.worker(c.newLoop("w2"), zoned, c.base).addListener(r2);
            try {
                w1.start().syncUninterruptibly();
                await("w1", () -> w1.nodeId() == 1);
                w2.start().syncUninterruptibly();
                await("w2", () -> w2.nodeId() == 2);
                c.awaitTopology(List.of(m, w1, w2), 0, 1, 2);
                assertThat(w1.topology().get(2).address().getAddress()).isInstanceOf(Inet6Address.class);
                await("direct over IPv6", () -> w1.hasDirectConnection(2));
                assertThat(((InetSocketAddress) w1.channelTo(2).remoteAddress()).getAddress())
                        .isInstanceOf(Inet6Address.class);
                w2.advertiseGids(Set.of(Gid.parse("fe80::2")));
                assertThat(send(w1, 2, "over v6")).isEqualTo(SendResult.QUEUED);
                await("delivered", () -> r2.has(1, "over v6"));
                await("GID known", () -> w1.ownerOf(Gid.parse("fe80::2")).equals(OptionalInt.of(2)));
            } finally {
                w2.close().syncUninterruptibly();
                w1.close().syncUninterruptibly();
            }
        }
    }

    @Test
    void epollLoops() {
        assumeTrue(Epoll.isAvailable(), "no epoll here");
        Cluster.Recorder r1 = new Cluster.Recorder();
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast(), EpollIoHandler.newFactory())) {
            MeshNode m = c.startManager();
            MeshNode w1 = c.startWorker(r1);
            MeshNode w2 = c.startWorker();
            await("direct", () -> w2.hasDirectConnection(1));
            assertThat(w2.channelTo(1)).isInstanceOf(EpollSocketChannel.class);
            assertThat(send(w2, 1, "epoll")).isEqualTo(SendResult.QUEUED);
            assertThat(send(m, 1, "from manager")).isEqualTo(SendResult.QUEUED);
            await("delivered", () -> r1.has(2, "epoll") && r1.has(0, "from manager"));
        }
    }
}
