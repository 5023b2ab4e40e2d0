package ernic.it.mesh;

import ernic.it.harness.DelayRelay;
import ernic.it.harness.MeshLan;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The pieces bench section 3 puts between two servers as between two hosts: sockets opened in a host's namespace
 * ({@code NetNamespace.inside}), the veth path from host 1 to host 0, and a {@link DelayRelay} on it.
 */
class MeshLanTest {
    @BeforeAll
    static void prerequisites() {
        boolean root = "root".equals(System.getProperty("user.name"));
        if (System.getenv("CI") != null) {
            assertThat(root).as("root (network namespaces)").isTrue();
        }
        assumeTrue(root, "needs root (network namespaces)");
    }

    @Test
    void aSocketOpenedInsideAHostIsThatHostsAndReachesTheOtherOverTheBridgeAndThroughARelay() throws Exception {
        try (MeshLan lan = MeshLan.create(2)) {
            // Host 0's address exists only in host 0: binding it anywhere else fails.
            ServerSocketChannel listener = lan.host(0).inside(
                    () -> ServerSocketChannel.open().bind(new InetSocketAddress(lan.address(0), 0)));
            try (listener) {
                assertThatThrownBy(() -> lan.host(1).inside(
                        () -> ServerSocketChannel.open().bind(new InetSocketAddress(lan.address(0), 0))))
                        .isInstanceOf(IOException.class);
                InetSocketAddress direct = (InetSocketAddress) listener.getLocalAddress();
                assertThat(echo(lan, listener, direct)).isEqualTo(lan.address(1));
                try (DelayRelay relay = DelayRelay.start(new InetSocketAddress(lan.rootAddress(), 0), direct,
                        Duration.ofMillis(1), Duration.ofMillis(1))) {
                    // Through the relay, host 0 sees the relay's address (the suite's namespace on the bridge).
                    assertThat(echo(lan, listener, new InetSocketAddress(lan.rootAddress(), relay.port())))
                            .isEqualTo(lan.rootAddress());
                    assertThat(relay.forwarded()).isEqualTo(2);
                }
            }
        }
    }

    /** One byte from host 1 to {@code target}, answered by {@code listener}; the address it came from. */
    private static String echo(MeshLan lan, ServerSocketChannel listener, InetSocketAddress target) throws Exception {
        try (SocketChannel c = lan.host(1).inside(SocketChannel::open)) {
            c.connect(target);
            c.write(ByteBuffer.wrap(new byte[] {42}));
            try (SocketChannel s = listener.accept()) {
                ByteBuffer b = ByteBuffer.allocate(1);
                while (b.hasRemaining()) {
                    assertThat(s.read(b)).isNotNegative();
                }
                assertThat(b.get(0)).isEqualTo((byte) 42);
                s.write(b.flip());
                ByteBuffer back = ByteBuffer.allocate(1);
                while (back.hasRemaining()) {
                    assertThat(c.read(back)).isNotNegative();
                }
                return ((InetSocketAddress) s.getRemoteAddress()).getHostString();
            }
        }
    }
}
