package ernic.mesh;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static ernic.mesh.Cluster.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mesh authentication over real TCP: a mesh whose nodes share a secret forms and carries data; every other peer
 * (another secret, no secret, a replayed or reflected handshake, garbage, silence) is refused before the mesh
 * sees a byte of it, counted under its cause and logged once. The raw peers here compute their proofs from the
 * transcript as documented (MeshAuth, docs/mesh.md), not with the node's code.
 */
class AuthTest {
    static final byte[] KEY = "correct horse battery staple, mesh".getBytes(StandardCharsets.US_ASCII);
    static final byte[] OTHER_KEY = "another secret of the same length!".getBytes(StandardCharsets.US_ASCII);

    static MeshConfig secured(byte[] key) {
        return Cluster.fast().withSecret(MeshSecret.of(key));
    }

    /** Three seconds to authenticate: for tests that must not meet the time-out on a loaded machine. */
    static MeshConfig patient(byte[] key) {
        return secured(key).withHeartbeatInterval(Duration.ofSeconds(1));
    }

    static long counter(MeshNode n, String key) {
        return n.counters().getOrDefault("mesh.node." + key, -1L);
    }

    /** The documented proof: HMAC-SHA256(secret, "ernic-mesh-auth" | 1 u16 | 1 u16 | role | dialer's | acceptor's). */
    static byte[] proof(byte[] key, int proverRole, byte[] dialerNonce, byte[] acceptorNonce) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update("ernic-mesh-auth".getBytes(StandardCharsets.US_ASCII));
        mac.update(new byte[] {0, 1, 0, 3, (byte) proverRole}); // auth version 1, mesh protocol version 3
        mac.update(dialerNonce);
        mac.update(acceptorNonce);
        return mac.doFinal();
    }

    static byte[] challenge(int role, byte[] nonce) {
        return ByteBuffer.allocate(40).putInt(0x45524E41).putShort((short) 1).put((byte) role).put((byte) 0)
                .put(nonce).array();
    }

    static byte[] randomNonce() {
        byte[] n = new byte[32];
        ThreadLocalRandom.current().nextBytes(n);
        return n;
    }

    static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        b.release();
        return out;
    }

    /** A plain REGISTER of instance {@code nonce}. */
    static byte[] register(long nonce) {
        return bytes(new Wire.Register(Wire.MAGIC, Wire.VERSION, -1, nonce, 4000).encode(ByteBufAllocator.DEFAULT));
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            o.writeBytes(p);
        }
        return o.toByteArray();
    }

    /** Sends {@code parts} to {@code node} on a new connection; returns what the node sent before it closed it. */
    static byte[] sendUntilClosed(MeshNode node, byte[]... parts) throws IOException {
        try (RawPeer p = new RawPeer(node.localPort())) {
            p.send(parts);
            return p.untilClosed();
        }
    }

    /** A peer on a plain socket that dials a node. */
    static final class RawPeer implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;

        RawPeer(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout((int) Cluster.WAIT.toMillis());
            in = new DataInputStream(socket.getInputStream());
        }

        /** The node's CHALLENGE: checks its fixed fields and returns its nonce. */
        byte[] challenge() throws IOException {
            byte[] c = new byte[40];
            in.readFully(c);
            ByteBuffer b = ByteBuffer.wrap(c);
            assertThat(b.getInt()).as("magic").isEqualTo(0x45524E41);
            assertThat(b.getShort()).as("version").isEqualTo((short) 1);
            assertThat(b.get()).as("role: the node accepted").isEqualTo((byte) 2);
            assertThat(b.get()).isZero();
            return Arrays.copyOfRange(c, 8, 40);
        }

        void send(byte[]... parts) throws IOException {
            socket.getOutputStream().write(concat(parts));
            socket.getOutputStream().flush();
        }

        /** Everything the node sends until it closes the connection. */
        byte[] untilClosed() throws IOException {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream s = socket.getInputStream();
            try {
                for (int b; (b = s.read()) != -1; ) {
                    got.write(b);
                }
            } catch (java.net.SocketException reset) {
                // closed with unread data: a reset
            }
            return got.toByteArray();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @Test
    void nodesThatShareTheSecretFormTheMeshAndTalk() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            Cluster.Recorder r2 = new Cluster.Recorder();
            MeshNode w1 = c.startWorker();
            MeshNode w2 = c.startWorker(r2);
            c.awaitTopology(List.of(m, w1, w2), 0, 1, 2);
            await("the direct connection 1-2", () -> w1.hasDirectConnection(2) && w2.hasDirectConnection(1));
            assertThat(Cluster.send(w1, 2, "direct")).isEqualTo(SendResult.QUEUED);
            assertThat(Cluster.send(m, 2, "from the manager")).isEqualTo(SendResult.QUEUED);
            await("both messages", () -> r2.has(1, "direct") && r2.has(0, "from the manager"));

            assertThat(counter(m, "authPassed")).isEqualTo(2);
            assertThat(counter(w1, "authPassed")).isGreaterThanOrEqualTo(2); // the manager's, the direct one
            assertThat(counter(w2, "authPassed")).isGreaterThanOrEqualTo(2);
            for (MeshNode n : List.of(m, w1, w2)) {
                for (String k : List.of("authWrongProof", "authMissing", "authUnexpected", "authGarbage",
                        "authReflected", "authTimeouts", "protocolErrors", "refusedHandshakes")) {
                    assertThat(counter(n, k)).as(n + " " + k).isZero();
                }
            }
        }
    }

    @Test
    void aWorkerWithAnotherSecretNeverJoins() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", secured(KEY))) {
            MeshNode m = c.startManager();
            MeshNode stranger = c.newWorker(c.newLoop("stranger"), secured(OTHER_KEY));
            await("refused twice on both ends", () -> counter(m, "authWrongProof") >= 2
                    && counter(stranger, "authWrongProof") >= 2);
            assertThat(stranger.nodeId()).isEqualTo(-1);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0);
            assertThat(counter(m, "protocolErrors")).isZero();
            // The mesh is fine for those who hold the secret.
            assertThat(c.startWorker().nodeId()).isEqualTo(1);
        }
    }

    @Test
    void aSecretOnOneEndOnlyIsRefusedOnBoth() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", secured(KEY))) {
            MeshNode m = c.startManager();
            MeshNode plain = c.newWorker(c.newLoop("plain"), Cluster.fast());
            await("a worker without the secret refused", () -> counter(m, "authMissing") >= 1
                    && counter(plain, "authUnexpected") >= 1);
            assertThat(plain.nodeId()).isEqualTo(-1);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0);
        }
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            MeshNode m = c.startManager();
            MeshNode secured = c.newWorker(c.newLoop("secured"), secured(KEY));
            await("a manager without a secret refuses it, and says why", () -> counter(m, "authUnexpected") >= 1
                    && counter(secured, "authMissing") >= 1);
            assertThat(secured.nodeId()).isEqualTo(-1);
            assertThat(counter(m, "protocolErrors")).as("a CHALLENGE is no 1 GiB frame").isZero();
        }
    }

    @Test
    void aPlainRegistrationIsRefusedAndNeverReachesTheManager() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            try (RawPeer p = new RawPeer(m.localPort())) {
                p.send(register(7));
                p.challenge();
                byte[] refusal = p.untilClosed();
                assertThat(refusal[4]).isEqualTo((byte) Wire.REFUSE);
                assertThat(refusal[5]).isEqualTo((byte) Wire.REFUSE_AUTH);
            }
            await("counted", () -> counter(m, "authMissing") == 1);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0);
            assertThat(counter(m, "refusedHandshakes")).isZero();
        }
    }

    @Test
    void aRecordedHandshakeReplayedOnANewConnectionIsRefused() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            byte[] nonce = randomNonce();
            byte[] recorded;
            try (RawPeer p = new RawPeer(m.localPort())) {
                byte[] managerNonce = p.challenge();
                recorded = concat(challenge(1, nonce), proof(KEY, 1, nonce, managerNonce),
                        register(77));
                p.send(recorded);
                byte[] managerProof = p.in.readNBytes(32);
                assertThat(managerProof).as("the manager proves itself too")
                        .isEqualTo(proof(KEY, 2, nonce, managerNonce));
                int len = p.in.readInt();
                assertThat(p.in.readUnsignedByte()).as("REGISTER_ACK after authenticating: " + len)
                        .isEqualTo(Wire.REGISTER_ACK);
                await("registered", () -> m.topology().size() == 2);
            }
            sendUntilClosed(m, recorded);
            await("the replay refused", () -> counter(m, "authWrongProof") == 1);
            assertThat(m.topology()).extracting(NodeInfo::id).containsExactly(0, 1);
            assertThat(counter(m, "authPassed")).isEqualTo(1);
            assertThat(counter(m, "protocolErrors")).isZero();
        }
    }

    @Test
    void aNonceTheNodeSentIsRefusedAsAReflection() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            // Its own CHALLENGE sent back as it came.
            try (RawPeer p = new RawPeer(m.localPort())) {
                byte[] n = p.challenge();
                p.send(challenge(2, n));
                assertThat(p.untilClosed()).as("no proof for a reflection").isEmpty();
            }
            // Its nonce, as a dialer's.
            try (RawPeer p = new RawPeer(m.localPort())) {
                p.send(challenge(1, p.challenge()));
                assertThat(p.untilClosed()).isEmpty();
            }
            // The nonce it sent on another connection still in its handshake: the node is not made to prove for it.
            try (RawPeer a = new RawPeer(m.localPort()); RawPeer b = new RawPeer(m.localPort())) {
                byte[] na = a.challenge();
                b.challenge();
                b.send(challenge(1, na));
                assertThat(b.untilClosed()).isEmpty();
            }
            await("three reflections", () -> counter(m, "authReflected") == 3);
            assertThat(counter(m, "authPassed")).isZero();
        }
    }

    @Test
    void garbageBeforeAuthenticatingIsRefusedAndNeverReachesTheMesh() throws Exception {
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            sendUntilClosed(m, "GET / HTTP/1.1\r\nHost: mesh\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            // 2,000 heartbeats: plain frames, but no opening one.
            byte[] beats = new byte[2000 * 5];
            for (int i = 0; i < 2000; i++) {
                beats[i * 5 + 3] = 1;
                beats[i * 5 + 4] = (byte) Wire.HEARTBEAT;
            }
            sendUntilClosed(m, beats);
            // A CHALLENGE with the acceptor's role, and one with a flag set.
            sendUntilClosed(m, challenge(2, randomNonce()));
            byte[] bad = challenge(1, randomNonce());
            bad[7] = 1;
            sendUntilClosed(m, bad);
            await("four refusals", () -> counter(m, "authGarbage") == 4);
            // Another version of the authentication is a refused handshake, as another mesh version is.
            byte[] v2 = challenge(1, randomNonce());
            v2[5] = 2;
            sendUntilClosed(m, v2);
            await("the other version", () -> counter(m, "refusedHandshakes") == 1);
            assertThat(counter(m, "protocolErrors")).isZero();
            assertThat(counter(m, "heartbeatsReceived")).isZero();
            assertThat(counter(m, "authPassed")).isZero();
        }
    }

    @Test
    void aPeerSilentUntilTheTimeOutIsClosed() throws Exception {
        // 1.5 s to authenticate: long enough for the raw peer's CHALLENGE to arrive first on a loaded machine.
        try (Cluster c = new Cluster("127.0.0.1", secured(KEY).withHeartbeatInterval(Duration.ofMillis(500)))) {
            MeshNode m = c.startManager();
            try (RawPeer p = new RawPeer(m.localPort())) {
                p.challenge();
                assertThat(p.untilClosed()).isEmpty();
            }
            // Half a CHALLENGE, then nothing.
            try (RawPeer p = new RawPeer(m.localPort())) {
                p.send(Arrays.copyOf(challenge(1, randomNonce()), 20));
                p.challenge();
                assertThat(p.untilClosed()).isEmpty();
            }
            // A CHALLENGE, and no PROOF.
            try (RawPeer p = new RawPeer(m.localPort())) {
                p.send(challenge(1, randomNonce()));
                p.challenge();
                assertThat(p.untilClosed()).as("the node's proof, then the close").hasSize(32);
            }
            await("three time-outs", () -> counter(m, "authTimeouts") == 3);
            assertThat(counter(m, "silentConnectionsClosed")).isZero();
        }
    }

    @Test
    void eachCauseIsLoggedOnceAndCountedEachTime() throws Exception {
        Logger log = (Logger) LoggerFactory.getLogger(MeshNode.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        log.addAppender(lines);
        try (Cluster c = new Cluster("127.0.0.1", patient(KEY))) {
            MeshNode m = c.startManager();
            for (int i = 0; i < 3; i++) {
                sendUntilClosed(m, "SSH-2.0-OpenSSH_9.9\r\n".getBytes(StandardCharsets.US_ASCII));
                try (RawPeer p = new RawPeer(m.localPort())) {
                    byte[] n = randomNonce();
                    byte[] mn = p.challenge();
                    p.send(challenge(1, n), proof(OTHER_KEY, 1, n, mn));
                    p.untilClosed();
                }
            }
            await("counted", () -> counter(m, "authGarbage") == 3 && counter(m, "authWrongProof") == 3);
        } finally {
            log.detachAppender(lines);
        }
        List<String> refusals = lines.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).filter(s -> s.contains("is not let in")).toList();
        assertThat(refusals).hasSize(2);
        assertThat(refusals).anySatisfy(s -> assertThat(s).contains("no mesh handshake", "authGarbage"));
        assertThat(refusals).anySatisfy(s -> assertThat(s).contains("proof does not match", "authWrongProof"));
    }

    @Test
    void withoutASecretTheNodeWarnsOnceThatTheMeshIsUnauthenticated() {
        Logger log = (Logger) LoggerFactory.getLogger(MeshNode.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        log.addAppender(lines);
        try (Cluster c = new Cluster("127.0.0.1", Cluster.fast())) {
            c.startManager();
            c.startWorker();
        } finally {
            log.detachAppender(lines);
        }
        assertThat(lines.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).filter(s -> s.contains("unauthenticated")))
                .hasSize(2) // one a node
                .allSatisfy(s -> assertThat(s).contains("secret=FILE"));
    }
}
