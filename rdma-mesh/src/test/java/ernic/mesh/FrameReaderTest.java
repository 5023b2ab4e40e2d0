package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.TooLongFrameException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Cutting frames out of reads of any size, and reading a large frame's body straight into its buffer. */
class FrameReaderTest {
    private static final int MAX = 4 << 20;

    private static EmbeddedChannel channel(FrameReader reader) {
        EmbeddedChannel ch = new EmbeddedChannel(reader);
        ch.config().setAllocator(PooledByteBufAllocator.DEFAULT);
        return ch;
    }

    private static byte[] body(Random rnd, int len) {
        byte[] b = new byte[len];
        rnd.nextBytes(b);
        return b;
    }

    private static ByteBuf stream(List<byte[]> bodies) {
        ByteBuf s = Unpooled.buffer();
        for (byte[] b : bodies) {
            s.writeInt(b.length).writeBytes(b);
        }
        return s;
    }

    private static List<byte[]> frames(EmbeddedChannel ch) {
        List<byte[]> out = new ArrayList<>();
        for (ByteBuf f; (f = ch.readInbound()) != null; ) {
            out.add(ByteBufUtil.getBytes(f));
            f.release();
        }
        return out;
    }

    @Test
    void framesComeOutWholeHoweverTheStreamIsCut() {
        Random rnd = new Random(7);
        List<byte[]> bodies = new ArrayList<>();
        for (int len : new int[] {0, 1, 5, 100, 4096, FrameReader.LEND_MIN - 1, FrameReader.LEND_MIN + 3, 300_000, 9}) {
            bodies.add(body(rnd, len));
        }
        for (int trial = 0; trial < 20; trial++) {
            EmbeddedChannel ch = channel(new FrameReader(MAX, () -> true));
            ByteBuf s = stream(bodies);
            while (s.isReadable()) {
                // Cuts of 1 byte (a length field in four reads) up to 64 KiB.
                int n = Math.min(s.readableBytes(), trial % 4 == 0 ? 1 + rnd.nextInt(3) : 1 + rnd.nextInt(65536));
                ch.writeInbound(s.readRetainedSlice(n));
            }
            s.release();
            assertThat(frames(ch)).containsExactlyElementsOf(bodies);
            assertThat(ch.finishAndReleaseAll()).isFalse();
        }
    }

    @Test
    void aLargeFramesRestIsReadIntoItsOwnBuffer() {
        FrameReader reader = new FrameReader(MAX, () -> true);
        EmbeddedChannel ch = channel(reader);
        RecvByteBufAllocator.Handle reads = reader.recvAllocator().newHandle();
        byte[] big = body(new Random(1), 1 << 20);
        byte[] next = {1, 2, 3};
        ByteBuf s = stream(List.of(big, next));

        // Between frames the channel reads into buffers of its own.
        ByteBuf usual = reads.allocate(PooledByteBufAllocator.DEFAULT);
        assertThat(usual.capacity()).isLessThan(FrameReader.LEND_MIN * 8);
        assertThat(usual.memoryAddress() % FrameReader.PAGE).isZero();
        usual.release();

        ch.writeInbound(s.readRetainedSlice(65536));
        int rounds = 0;
        while (s.readableBytes() > 4 + next.length) {
            // The frame lacks more than LEND_MIN bytes: the read buffer is the frame's own, sized to what is missing.
            ByteBuf lent = reads.allocate(PooledByteBufAllocator.DEFAULT);
            assertThat(lent.readableBytes()).isZero();
            assertThat(lent.writableBytes()).isEqualTo(s.readableBytes() - 4 - next.length);
            // The frame's own buffer starts on a page: its missing part starts where the bytes before it end.
            assertThat(lent.memoryAddress() % FrameReader.PAGE).isEqualTo((big.length - lent.writableBytes()) % FrameReader.PAGE);
            if (rounds++ == 0) {
                lent.release(); // a read that found nothing gives it back
                continue;
            }
            int n = Math.min(lent.writableBytes(), 200_000);
            lent.writeBytes(s, n); // what the socket read does
            ch.writeInbound(lent);
            if (s.readableBytes() - 4 - next.length < FrameReader.LEND_MIN) {
                break;
            }
        }
        ch.writeInbound(s.readRetainedSlice(s.readableBytes()));
        s.release();
        assertThat(frames(ch)).containsExactly(big, next);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void readBuffersStartOnAPageAndGiveTheirMemoryBack() {
        for (int capacity : new int[] {1, 64, 4096, 65_549, 1 << 20}) {
            ByteBuf b = FrameReader.pageAligned(PooledByteBufAllocator.DEFAULT, capacity);
            assertThat(b.memoryAddress() % FrameReader.PAGE).isZero();
            assertThat(b.capacity()).isEqualTo(capacity);
            assertThat(b.maxCapacity()).isEqualTo(capacity);
            assertThat(b.writerIndex()).isZero();
            ByteBuf root = b.unwrap();
            assertThat(b.release()).isTrue();
            assertThat(root.refCnt()).isZero();
        }
    }

    @Test
    void aFrameCutOffByTheCloseIsDropped() {
        EmbeddedChannel ch = channel(new FrameReader(MAX, () -> true));
        ch.writeInbound(Unpooled.buffer().writeInt(100_000).writeBytes(new byte[50_000]));
        ch.close();
        assertThat(frames(ch)).isEmpty();
    }

    @Test
    void aFrameLongerThanAllowedIsAnErrorAndTheRestIsDropped() {
        EmbeddedChannel ch = channel(new FrameReader(1024, () -> true));
        assertThatThrownBy(() -> ch.writeInbound(
                Unpooled.buffer().writeInt(3).writeBytes(new byte[3]).writeInt(1025).writeBytes(new byte[64])))
                .isInstanceOf(TooLongFrameException.class).hasMessageContaining("1025 exceeds 1024");
        assertThat(frames(ch)).hasSize(1);
        ch.writeInbound(Unpooled.buffer().writeInt(1).writeByte(1));
        assertThat(frames(ch)).isEmpty();
        ch.finishAndReleaseAll();
    }

    @Test
    void beforeTheHandshakeAFrameOver4KiBIsTooLong() {
        boolean[] open = {false};
        EmbeddedChannel ch = channel(new FrameReader(MAX, () -> open[0]));
        assertThatThrownBy(() -> ch.writeInbound(Unpooled.buffer().writeInt(16 << 20).writeByte(1)))
                .isInstanceOf(TooLongFrameException.class).hasMessageContaining("exceeds 4096 before the handshake");
        ch.finishAndReleaseAll();
        EmbeddedChannel opened = channel(new FrameReader(MAX, () -> open[0]));
        open[0] = true;
        opened.writeInbound(Unpooled.buffer().writeInt(5000).writeBytes(new byte[5000]));
        assertThat(frames(opened)).hasSize(1);
        opened.finishAndReleaseAll();
    }

    @Test
    void aLengthWithTheTopBitSetIsTooLong() {
        EmbeddedChannel ch = channel(new FrameReader(1024, () -> true));
        assertThatThrownBy(() -> ch.writeInbound(Unpooled.buffer().writeInt(0x8000_0000).writeBytes(new byte[8])))
                .isInstanceOf(TooLongFrameException.class).hasMessageContaining("2147483648");
        assertThat(frames(ch)).isEmpty();
        ch.finishAndReleaseAll();
    }
}
