package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;

import java.io.ByteArrayOutputStream;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handshake handler on its own, fed bytes in chunks of every size: whatever a peer sends without the secret
 * never passes the handler nor throws, and at most one refusal is counted; a right handshake, however it is cut,
 * lets exactly the bytes after the proof through, in order.
 */
class AuthPropertyTest {
    private static final EventLoopGroup UNUSED = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

    @AfterContainer
    static void stop() {
        UNUSED.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
    }

    private static MeshNode node() {
        return MeshNode.manager(UNUSED, 0, MeshConfig.defaults().withSecret(MeshSecret.of(AuthTest.KEY)));
    }

    /** The node's end of a connection it accepted; its CHALLENGE read off, its nonce returned in {@code nonce}. */
    private static EmbeddedChannel accepted(MeshNode node, byte[] nonce) {
        EmbeddedChannel ch = new EmbeddedChannel(node.auth().handler(MeshLink.Kind.DOWNLINK));
        ByteBuf c = ch.readOutbound();
        c.getBytes(8, nonce);
        c.release();
        return ch;
    }

    private static void feed(EmbeddedChannel ch, byte[] bytes, int chunk) {
        for (int at = 0; at < bytes.length && ch.isOpen(); at += chunk) {
            ch.writeInbound(Unpooled.copiedBuffer(bytes, at, Math.min(chunk, bytes.length - at)));
        }
    }

    private static long refusals(MeshNode node) {
        long n = 0;
        for (MeshCounter c : MeshCounter.values()) {
            if (c.key().startsWith("auth") && c != MeshCounter.AUTH_PASSED || c == MeshCounter.REFUSED_HANDSHAKES) {
                n += node.counterSet().get(c);
            }
        }
        return n;
    }

    @Property(tries = 1000)
    void nothingAPeerSendsWithoutTheSecretGetsThrough(@ForAll @Size(max = 300) byte[] bytes,
                                                      @ForAll @IntRange(min = 1, max = 64) int chunk,
                                                      @ForAll boolean afterAGoodChallenge) throws Exception {
        MeshNode node = node();
        byte[] nonce = new byte[32];
        EmbeddedChannel ch = accepted(node, nonce);
        byte[] sent = afterAGoodChallenge
                ? AuthTest.concat(AuthTest.challenge(1, AuthTest.randomNonce()), bytes) : bytes;
        feed(ch, sent, chunk);
        assertThat(ch.inboundMessages()).as("nothing passed the handler").isEmpty();
        assertThat(node.counterSet().get(MeshCounter.AUTH_PASSED)).isZero();
        assertThat(refusals(node)).as("one refusal at most").isLessThanOrEqualTo(1);
        if (!ch.isOpen()) {
            assertThat(refusals(node)).as("a close is a counted refusal").isEqualTo(1);
        }
        ch.finishAndReleaseAll();
    }

    @Property(tries = 300)
    void aRightHandshakeLetsExactlyWhatFollowsThrough(@ForAll @Size(max = 200) byte[] after,
                                                      @ForAll @IntRange(min = 1, max = 80) int chunk) throws Exception {
        MeshNode node = node();
        byte[] nonce = new byte[32];
        EmbeddedChannel ch = accepted(node, nonce);
        byte[] dialerNonce = AuthTest.randomNonce();
        byte[] proof = AuthTest.proof(AuthTest.KEY, 1, dialerNonce, nonce);
        feed(ch, AuthTest.concat(AuthTest.challenge(1, dialerNonce), proof, after), chunk);
        assertThat(ch.isOpen()).isTrue();
        assertThat(node.counterSet().get(MeshCounter.AUTH_PASSED)).isEqualTo(1);
        assertThat(ch.pipeline().first()).as("the handler removed itself").isNull();
        ByteBuf nodeProof = ch.readOutbound();
        assertThat(nodeProof.readableBytes()).isEqualTo(32);
        nodeProof.release();
        ByteArrayOutputStream through = new ByteArrayOutputStream();
        for (Object m; (m = ch.readInbound()) != null; ) {
            ByteBuf b = (ByteBuf) m;
            byte[] part = new byte[b.readableBytes()];
            b.readBytes(part);
            b.release();
            through.writeBytes(part);
        }
        assertThat(through.toByteArray()).isEqualTo(after);
        ch.finishAndReleaseAll();
    }
}
