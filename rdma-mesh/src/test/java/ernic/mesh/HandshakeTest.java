package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import static ernic.mesh.Cluster.await;
import static org.assertj.core.api.Assertions.assertThat;

/** A peer that speaks another protocol, or none, is refused and closed, and counted. */
class HandshakeTest {

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        b.release();
        return out;
    }

    /** Sends {@code frame} and returns the frame the node answers with (type first), then expects EOF. */
    private static byte[] exchange(int port, byte[] frame) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) Cluster.WAIT.toMillis());
            OutputStream out = s.getOutputStream();
            out.write(frame);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int len = in.readInt();
            byte[] body = new byte[len];
            in.readFully(body);
            assertThat(in.read()).as("connection closed after the refusal").isEqualTo(-1);
            return body;
        }
    }

    private static boolean closedWithoutAnswer(int port, byte[] frame) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) Cluster.WAIT.toMillis());
            s.getOutputStream().write(frame);
            InputStream in = s.getInputStream();
            try {
                return in.read() == -1;
            } catch (java.net.SocketException reset) {
                return true;
            }
        }
    }

    @Test
    void registrationWithAnotherMagicOrVersionIsRefused() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            ByteBufAllocator a = ByteBufAllocator.DEFAULT;

            byte[] refusal = exchange(m.localPort(), bytes(new Wire.Register(0xdeadbeef, Wire.VERSION, -1, 7, 4000).encode(a)));
            assertThat(refusal[0]).isEqualTo((byte) Wire.REFUSE);
            assertThat(refusal[1]).isEqualTo((byte) Wire.REFUSE_VERSION);
            assertThat(new String(refusal, 2, refusal.length - 2, StandardCharsets.UTF_8)).contains("magic");

            byte[] refusal2 = exchange(m.localPort(), bytes(new Wire.Register(Wire.MAGIC, Wire.VERSION + 1, -1, 8, 4000).encode(a)));
            assertThat(refusal2[1]).isEqualTo((byte) Wire.REFUSE_VERSION);

            assertThat(m.counters()).containsEntry("mesh.node.refusedHandshakes", 2L);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0);

            // A good one still registers afterwards.
            MeshNode w = c.startWorker();
            assertThat(w.nodeId()).isEqualTo(1);
        }
    }

    @Test
    void handshakeWithAnotherVersionIsRefusedByAWorker() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            c.startManager();
            MeshNode w = c.startWorker();
            byte[] refusal = exchange(w.localPort(),
                    bytes(new Wire.Hello(Wire.MAGIC, 99, 0, 1, w.nodeId()).encode(ByteBufAllocator.DEFAULT)));
            assertThat(refusal[0]).isEqualTo((byte) Wire.REFUSE);
            assertThat(refusal[1]).isEqualTo((byte) Wire.REFUSE_VERSION);
            assertThat(w.counters()).containsEntry("mesh.node.refusedHandshakes", 1L);
        }
    }

    @Test
    void framesOutOfOrderOrTooLongAreProtocolErrors() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast().withMaxFrameLength(1024))) {
            MeshNode m = c.startManager();
            // DATA before registration.
            ByteBuf data = Wire.data(ByteBufAllocator.DEFAULT, 1, 0,
                    io.netty.buffer.Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
            assertThat(closedWithoutAnswer(m.localPort(), bytes(data))).isTrue();
            // A frame longer than allowed.
            byte[] huge = new byte[] {0, 0, 0x10, 0, (byte) Wire.REGISTER};
            assertThat(closedWithoutAnswer(m.localPort(), huge)).isTrue();
            // An empty frame (no type).
            assertThat(closedWithoutAnswer(m.localPort(), new byte[] {0, 0, 0, 0})).isTrue();
            await("three protocol errors", () -> m.counters().get("mesh.node.protocolErrors") == 3L);
        }
    }

    @Test
    void framesAfterAProtocolErrorInTheSameReadAreDropped() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            // 2,000 heartbeats before any registration, in one write: the first is the protocol error that closes
            // the connection; the rest were decoded from the same read and must not count (or log) again.
            byte[] many = new byte[2000 * 5];
            for (int i = 0; i < 2000; i++) {
                many[i * 5 + 3] = 1;
                many[i * 5 + 4] = (byte) Wire.HEARTBEAT;
            }
            assertThat(closedWithoutAnswer(m.localPort(), many)).isTrue();
            // counters() runs on the node's loop, so it sees the whole read or none of it; and the connection is
            // closed at the first frame, so no later read brings more.
            await("one protocol error", () -> m.counters().get("mesh.node.protocolErrors") >= 1L);
            assertThat(m.counters().get("mesh.node.protocolErrors")).isEqualTo(1L);
        }
    }

    /**
     * A DATA frame on a registered connection (the path that reads its route without decoding a record) whose route
     * is bad: a negative node id, or a source other than the sender's. Each is a protocol error that closes it.
     */
    @Test
    void dataWithABadRouteOnAnOpenConnectionIsAProtocolError() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            long nonce = 100;
            for (int[] route : new int[][] {{-1, 0}, {77, 0}}) {
                try (Socket s = new Socket("127.0.0.1", m.localPort())) {
                    s.setSoTimeout((int) Cluster.WAIT.toMillis());
                    OutputStream out = s.getOutputStream();
                    out.write(bytes(new Wire.Register(Wire.MAGIC, Wire.VERSION, -1, nonce++, 4000)
                            .encode(ByteBufAllocator.DEFAULT)));
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    byte[] ack = new byte[in.readInt()];
                    in.readFully(ack);
                    assertThat(ack[0]).isEqualTo((byte) Wire.REGISTER_ACK);
                    out.write(bytes(Wire.data(ByteBufAllocator.DEFAULT, route[0], route[1],
                            io.netty.buffer.Unpooled.wrappedBuffer(new byte[] {1, 2, 3}))));
                    try {
                        while (in.read() != -1) {
                            // what the manager sent before it closed (topology, GIDs)
                        }
                    } catch (java.net.SocketException reset) {
                        // closed
                    }
                }
            }
            await("two protocol errors", () -> m.counters().get("mesh.node.protocolErrors") == 2L);
        }
    }

    @Test
    void aConnectionThatNeverRegistersIsClosed() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            try (Socket s = new Socket("127.0.0.1", m.localPort())) {
                s.setSoTimeout((int) Cluster.WAIT.toMillis());
                try {
                    assertThat(s.getInputStream().read()).isEqualTo(-1);
                } catch (EOFException | java.net.SocketException e) {
                    // closed
                }
            }
        }
    }
}
