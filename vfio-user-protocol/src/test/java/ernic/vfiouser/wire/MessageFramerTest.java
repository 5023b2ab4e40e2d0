package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
        return ByteBufUtil.getBytes(b);
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

    /** The next two messages, {@code firstId} without fds and {@code secondId} with all of {@code fds}; both released. */
    void nextTwoWithTheFdsOnTheSecond(int firstId, int secondId, int[] fds) {
        VfioUserMessage first = next();
        VfioUserMessage second = next();
        try {
            assertThat(first.msgId()).isEqualTo(firstId);
            assertThat(first.fds()).isEmpty();
            assertThat(second.msgId()).isEqualTo(secondId);
            assertThat(second.takeFds()).containsExactly(fds);
        } finally {
            first.release();
            second.release();
        }
    }

    static byte[] concat(byte[]... parts) {
        ByteBuf b = Unpooled.buffer();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return ByteBufUtil.getBytes(b);
    }

    @Test
    void fdsOfAReadGoToTheLastMessageStartingInIt() throws Exception {
        int[] fds = eventfds(1);
        // An fd-less send and the fd-carrying send after it, returned by one recvmsg.
        read(concat(message(1, 24), message(2, 32)), fds);
        nextTwoWithTheFdsOnTheSecond(1, 2, fds);
    }

    @Test
    void aMessageSplitAcrossReadsKeepsTheFdsOfItsFirstRead() throws Exception {
        int[] fds = eventfds(2);
        byte[] m = message(3, 100);
        read(concat(message(1, 8), java.util.Arrays.copyOf(m, 40)), fds);
        read(java.util.Arrays.copyOfRange(m, 40, m.length));
        nextTwoWithTheFdsOnTheSecond(1, 3, fds);
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

    @Test
    void sizeOutsideTheLimitsCloses() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> read(Unpooled.buffer().writeShortLE(1).writeShortLE(1)
                        .writeIntLE(8).writeIntLE(0).writeIntLE(0).array()))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("size 8");
        assertThat(ch.isOpen()).isFalse();
    }

    /** The channel's reads without fds come as plain buffers: each is cut where it lies, its tail kept. */
    @Test
    void readsWithoutFdsAreCutWhereTheyLieAndTheirTailsKept() {
        byte[] stream = concat(message(1, 24), message(2, 5000), message(3, 0), message(4, 7));
        List<ByteBuf> reads = new ArrayList<>();
        for (int at = 0, n = 1; at < stream.length; at += n, n = n * 3 % 1024 + 1) {
            ByteBuf r = Unpooled.directBuffer().writeBytes(stream, at, Math.min(n, stream.length - at));
            reads.add(r);
            ch.writeInbound(r);
        }
        for (int id = 1; id <= 4; id++) {
            VfioUserMessage m = next();
            assertThat(m.msgId()).isEqualTo(id);
            assertThat(m.payload().readableBytes()).isEqualTo(new int[] {24, 5000, 0, 7}[id - 1]);
            m.release();
        }
        assertThat((Object) ch.readInbound()).isNull();
        assertThat(reads).allSatisfy(r -> assertThat(r.refCnt()).as("every read given back").isZero());
    }

    static byte[] postedWrite(int id, int dataBytes) {
        ByteBuf b = Unpooled.buffer().writeShortLE(id).writeShortLE(Command.REGION_WRITE.code)
                .writeIntLE(Header.SIZE + 16 + dataBytes).writeIntLE(Header.FLAG_NO_REPLY).writeIntLE(0)
                .writeLongLE(0x40).writeIntLE(2).writeIntLE(dataBytes);
        for (int i = 0; i < dataBytes; i++) {
            b.writeByte(id);
        }
        return ByteBufUtil.getBytes(b);
    }

    /**
     * A posted message without fds is offered where it lies: taken, it never becomes a message; declined, it goes
     * on as one. A message that expects a reply, or that carries fds, is never offered.
     */
    @Test
    void postedMessagesWithoutFdsAreOfferedWhereTheyLie() throws Exception {
        List<String> offered = new ArrayList<>();
        EmbeddedChannel c = new EmbeddedChannel(new MessageFramer(1 << 20, (command, flags, buf, index, length) -> {
            offered.add(buf.getUnsignedShortLE(index - Header.SIZE) + ":" + length + ":" + buf.getByte(index + 16));
            return length == 16 + 8;
        }));
        try {
            byte[] second = postedWrite(2, 4);
            // One read with a taken one, a declined one cut in two, then a command and a posted one with fds.
            c.writeInbound(Unpooled.wrappedBuffer(concat(postedWrite(1, 8), java.util.Arrays.copyOf(second, 30))));
            c.writeInbound(Unpooled.wrappedBuffer(java.util.Arrays.copyOfRange(second, 30, second.length)));
            c.writeInbound(Unpooled.wrappedBuffer(message(3, 4)));
            int[] fds = eventfds(1);
            c.writeInbound(FdChunk.received(Unpooled.wrappedBuffer(postedWrite(4, 8)), fds));
            assertThat(offered).containsExactly("1:24:1", "2:20:2");
            VfioUserMessage declined = c.readInbound(), command = c.readInbound(), withFds = c.readInbound();
            assertThat(declined.msgId()).isEqualTo(2);
            assertThat(declined.noReply()).isTrue();
            assertThat(command.msgId()).isEqualTo(3);
            assertThat(withFds.msgId()).isEqualTo(4);
            assertThat(withFds.takeFds()).containsExactly(fds);
            assertThat((Object) c.readInbound()).isNull();
            declined.release();
            command.release();
            withFds.release();
        } finally {
            c.finishAndReleaseAll();
        }
    }
}
