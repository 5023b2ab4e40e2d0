package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The secret file and the {@code secret=FILE} option: what is refused (one line naming the file), and the
 * authentication time-out on the link's clock.
 */
class MeshSecretTest {
    @TempDir
    Path dir;

    Path file(String name, String content, String perms) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, content, StandardCharsets.US_ASCII);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
        return f;
    }

    @Test
    void aPrivateFileOfSixteenBytesOrMoreIsASecret() throws Exception {
        assertThat(MeshSecret.load(file("hex", "0123456789abcdef0123456789abcdef\n", "rw-------")).key().getEncoded())
                .as("the trailing newline is not part of it")
                .isEqualTo("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII));
        assertThat(MeshSecret.load(file("sixteen", "0123456789abcdef", "r--------")).key().getEncoded()).hasSize(16);
        assertThat(MeshSecret.load(file("s", "0123456789abcdef", "rw-------")).toString()).doesNotContain("0123");
    }

    @Test
    void aSecretFileThatIsMissingEmptyShortOrOpenIsRefused() throws Exception {
        Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> MeshSecret.load(missing)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mesh secret file " + missing + ": no such file");
        Path empty = file("empty", "\n", "rw-------");
        assertThatThrownBy(() -> MeshSecret.load(empty)).hasMessage("mesh secret file " + empty + ": empty");
        Path shortOne = file("short", "0123456789abcde\n", "rw-------");
        assertThatThrownBy(() -> MeshSecret.load(shortOne)).hasMessageStartingWith("mesh secret file " + shortOne
                + ": 15 bytes, a secret needs at least 16");
        for (String perms : new String[] {"rw-r-----", "rw----r--", "rw-rw-rw-", "rw---x---", "rw-----w-"}) {
            Path open = file("open-" + perms, "0123456789abcdef0123", perms);
            assertThatThrownBy(() -> MeshSecret.load(open)).as(perms).hasMessage("mesh secret file " + open
                    + ": permissions " + perms + " are too open (group or others have access); chmod 600 it");
        }
        assertThatThrownBy(() -> MeshSecret.load(dir)).hasMessage("mesh secret file " + dir + ": not a regular file");
        Path huge = file("huge", "x".repeat(MeshSecret.MAX_BYTES + 1), "rw-------");
        assertThatThrownBy(() -> MeshSecret.load(huge)).hasMessageContaining("longer than 4096 bytes");
        for (Path p : new Path[] {missing, empty, shortOne}) {
            assertThatThrownBy(() -> MeshSecret.load(p).toString()).message().doesNotContain("\n");
        }
    }

    @Test
    void theSecretOptionOfABackendSpec() throws Exception {
        Path f = file("k", "0123456789abcdef0123", "rw-------");
        MeshSpec m = MeshSpec.parse("tcp:manager:listen:7400,secret=" + f);
        assertThat(m.port()).isEqualTo(7400);
        assertThat(m.secretFile()).isEqualTo(f);
        MeshSpec w = MeshSpec.parse("tcp:worker:[fe80::1%eth0]:7400,secret=" + f);
        assertThat(w.manager()).isEqualTo(new MeshAddress("fe80::1%eth0", 7400));
        assertThat(w.secretFile()).isEqualTo(f);
        assertThat(w.config(MeshConfig.defaults()).secret()).isNotNull();
        assertThat(MeshSpec.parse("tcp:worker:h:1").config(MeshConfig.defaults()).secret()).isNull();
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,secret=")).hasMessageContaining("secret= needs a file");
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,secret=a,secret=b")).hasMessageContaining("twice");
        assertThatThrownBy(() -> MeshSpec.parse("tcp:worker:h:1,key=a"))
                .hasMessageContaining("unknown mesh option 'key'");
        Path open = file("open", "0123456789abcdef0123", "rw-r--r--");
        MeshSpec bad = MeshSpec.parse("tcp:manager:listen:7400,secret=" + open);
        assertThatThrownBy(() -> bad.config(MeshConfig.defaults())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too open");
    }

    @Test
    void aPeerThatDoesNotAuthenticateInThreeIntervalsIsClosedOnTheLinksClock() {
        EventLoopGroup unused = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            MockTicker ticker = Ticker.newMockTicker();
            MeshNode node = MeshNode.worker(unused, "127.0.0.1", 1,
                    MeshConfig.defaults().withSecret(MeshSecret.of(AuthTest.KEY)));
            MeshLink link = new MeshLink(node.links(), MeshLink.Kind.DIRECT_IN, -1, ticker);
            EmbeddedChannel ch = new EmbeddedChannel(node.auth().handler(MeshLink.Kind.DIRECT_IN), link);
            node.links().add(link);
            ByteBuf challenge = ch.readOutbound();
            assertThat(challenge.readableBytes()).isEqualTo(MeshAuth.CHALLENGE_BYTES);
            challenge.release();

            // What a peer sends before authenticating reaches neither the decoder nor the link.
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0x45, 0x52, 0x4e, 0x41, 0, 1, 1}));
            assertThat((Object) ch.readInbound()).isNull();

            long interval = Duration.ofSeconds(1).toNanos();
            ticker.advance(3 * interval, TimeUnit.NANOSECONDS);
            node.links().health(ticker.nanoTime(), interval, interval * 10);
            assertThat(ch.isOpen()).as("three intervals are allowed").isTrue();
            ticker.advance(1, TimeUnit.NANOSECONDS);
            node.links().health(ticker.nanoTime(), interval, interval * 10);
            assertThat(ch.isOpen()).isFalse();
            assertThat(node.counterSet().get(MeshCounter.AUTH_TIMEOUTS)).isEqualTo(1);
            assertThat(node.counterSet().get(MeshCounter.SILENT_CONNECTIONS_CLOSED)).isZero();
            ch.finishAndReleaseAll();
        } finally {
            unused.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
    }
}
