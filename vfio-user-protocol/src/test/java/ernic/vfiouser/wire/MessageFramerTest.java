package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Framing and fd attribution as the kernel delivers a UNIX stream (see {@link MessageFramer}). */
class MessageFramerTest {
    final EmbeddedChannel ch = new EmbeddedChannel(new MessageFramer(1 << 20));
    final List<Integer> opened = new ArrayList<>();

    @AfterEach
    void close() {
        ch.finishAndReleaseAll();
        for (int fd : opened) {
            LibC.close(fd);
        }
    }

    static byte[] message(int id, int payloadBytes) {
        ByteBuf b = Unpooled.buffer().writeShortLE(id).writeShortLE(Command.REGION_READ.code)
                .writeIntLE(Header.SIZE + payloadBytes).writeIntLE(0).writeIntLE(0).writeZero(payloadBytes);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    int[] eventfds(int n) throws Exception {
        int[] fds = new int[n];
        for (int i = 0; i < n; i++) {
            fds[i] = LibC.eventfd(true);
            opened.add(fds[i]);
        }
        return fds;
    }

    void read(byte[] bytes, int... fds) {
        ch.writeInbound(FdChunk.received(Unpooled.wrappedBuffer(bytes), fds));
    }

    VfioUserMessage next() {
        return ch.readInbound();
    }

    static byte[] concat(byte[]... parts) {
        ByteBuf b = Unpooled.buffer();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    @Test
    void fdsOfAReadGoToTheLastMessageStartingInIt() throws Exception {
        int[] fds = eventfds(1);
        // An fd-less send and the fd-carrying send after it, returned by one recvmsg.
        read(concat(message(1, 24), message(2, 32)), fds);
        VfioUserMessage a = next();
        VfioUserMessage b = next();
        assertThat(a.msgId()).isEqualTo(1);
        assertThat(a.fds()).isEmpty();
        assertThat(b.msgId()).isEqualTo(2);
        assertThat(b.takeFds()).containsExactly(fds);
        a.release();
        b.release();
    }

    @Test
    void aMessageSplitAcrossReadsKeepsTheFdsOfItsFirstRead() throws Exception {
        int[] fds = eventfds(2);
        byte[] m = message(3, 100);
        read(concat(message(1, 8), java.util.Arrays.copyOf(m, 40)), fds);
        read(java.util.Arrays.copyOfRange(m, 40, m.length));
        VfioUserMessage first = next();
        VfioUserMessage second = next();
        assertThat(first.fds()).isEmpty();
        assertThat(second.takeFds()).containsExactly(fds);
        first.release();
        second.release();
    }

    @Test
    void fdsThatArriveInTheMiddleOfAMessageAreClosed() throws Exception {
        int[] fds = eventfds(1);
        byte[] m = message(4, 64);
        read(java.util.Arrays.copyOf(m, 20));
        read(java.util.Arrays.copyOfRange(m, 20, m.length), fds);
        read(message(5, 0));
        VfioUserMessage a = next();
        VfioUserMessage b = next();
        assertThat(a.fds()).isEmpty();
        assertThat(b.fds()).isEmpty();
        assertThat(LibC.isOpen(fds[0])).as("closed by the framer").isFalse();
        opened.clear();
        a.release();
        b.release();
    }

    static byte[] messageWithPayload(int id, int payloadBytes, int fill) {
        byte[] m = message(id, payloadBytes);
        java.util.Arrays.fill(m, Header.SIZE, m.length, (byte) fill);
        return m;
    }

    void expect(int id, int payloadBytes, int fill) {
        VfioUserMessage m = next();
        assertThat(m).as("message %d", id).isNotNull();
        assertThat(m.msgId()).isEqualTo(id);
        assertThat(m.commandCode()).isEqualTo(Command.REGION_READ.code);
        assertThat(m.size()).isEqualTo(Header.SIZE + payloadBytes);
        byte[] p = new byte[m.payload().readableBytes()];
        m.payload().getBytes(m.payload().readerIndex(), p);
        byte[] want = new byte[payloadBytes];
        java.util.Arrays.fill(want, (byte) fill);
        assertThat(p).isEqualTo(want);
        m.release();
    }

    @Test
    void readsOfWholeMessagesAndReadsEndingInsideOneGiveTheSameMessages() throws Exception {
        // Whole messages only (the fast path), then whole ones and a partial tail, its rest, and whole ones again.
        byte[] whole = concat(messageWithPayload(1, 24, 0x11), messageWithPayload(2, 0, 0), messageWithPayload(3, 8, 0x33));
        read(whole);
        java.util.Arrays.fill(whole, (byte) 0x7f); // the payloads are copies, not views of the read
        expect(1, 24, 0x11);
        expect(2, 0, 0);
        expect(3, 8, 0x33);
        assertThat(next()).isNull();

        int[] fds = eventfds(1);
        byte[] split = messageWithPayload(5, 40, 0x55);
        read(concat(messageWithPayload(4, 16, 0x44), java.util.Arrays.copyOf(split, 10)), fds);
        expect(4, 16, 0x44);
        assertThat(next()).isNull();
        read(java.util.Arrays.copyOfRange(split, 10, split.length));
        VfioUserMessage five = next();
        assertThat(five.msgId()).isEqualTo(5);
        assertThat(five.takeFds()).containsExactly(fds);
        five.release();

        read(concat(messageWithPayload(6, 8, 0x66), messageWithPayload(7, 8, 0x77)));
        expect(6, 8, 0x66);
        expect(7, 8, 0x77);
        assertThat(next()).isNull();
    }

    @Test
    void aMessageOrPayloadStillHeldIsNeverOverwrittenByTheNext() {
        read(messageWithPayload(1, 24, 0x11));
        VfioUserMessage held = next();
        read(messageWithPayload(2, 24, 0x22)); // the first is still in the handlers' hands
        expect(2, 24, 0x22);
        read(messageWithPayload(3, 24, 0x33)); // the second was let go of: its message may be used again
        expect(3, 24, 0x33);
        assertThat(held.msgId()).isEqualTo(1);
        assertThat(held.payload().getByte(held.payload().readerIndex() + 23)).isEqualTo((byte) 0x11);
        held.release();

        read(messageWithPayload(4, 8, 0x44));
        VfioUserMessage m = next();
        ByteBuf kept = m.payload().retainedSlice();
        m.release(); // the payload lives on in the slice
        read(messageWithPayload(5, 8, 0x55));
        expect(5, 8, 0x55);
        assertThat(kept.getByte(0)).isEqualTo((byte) 0x44);
        kept.release();
    }

    @Test
    void sizeOutsideTheLimitsCloses() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> read(Unpooled.buffer().writeShortLE(1).writeShortLE(1)
                        .writeIntLE(8).writeIntLE(0).writeIntLE(0).array()))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("size 8");
        assertThat(ch.isOpen()).isFalse();
    }
}
