package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Frames through the same decoder the nodes use, fed one byte at a time, then decoded as the node does. */
class WireTest {
    private static final ByteBufAllocator A = ByteBufAllocator.DEFAULT;

    private static List<ByteBuf> cut(ByteBuf... frames) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameReader(1 << 20, () -> true));
        for (ByteBuf f : frames) {
            while (f.isReadable()) {
                ch.writeInbound(f.readRetainedSlice(1));
            }
            f.release();
        }
        List<ByteBuf> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add((ByteBuf) o);
        }
        ch.finishAndReleaseAll();
        return out;
    }

    /** Encodes, cuts and decodes one frame. */
    private static Wire.Frame roundTrip(Wire.Frame f) throws Wire.BadFrame {
        ByteBuf b = cut(f.encode(A)).getFirst();
        try {
            return Wire.decode(b);
        } finally {
            b.release();
        }
    }

    /** A frame body (type first) as a hostile peer might send it. */
    private static Wire.Frame decode(int type, ByteBuf body) throws Wire.BadFrame {
        ByteBuf b = Unpooled.buffer().writeByte(type).writeBytes(body);
        body.release();
        return Wire.decode(b);
    }

    @Test
    void everyControlFrameRoundTrips() throws Exception {
        Inet6Address scoped = Inet6Address.getByAddress(null, InetAddress.getByName("fe80::1").getAddress(), 3);
        List<NodeInfo> nodes = List.of(
                new NodeInfo(0, true, null),
                new NodeInfo(1, true, new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 5001)),
                new NodeInfo(7, false, new InetSocketAddress(scoped, 65535)));
        Wire.Topology topo = (Wire.Topology) roundTrip(new Wire.Topology(nodes));
        assertThat(topo.nodes()).isEqualTo(nodes);
        assertThat(((Inet6Address) topo.nodes().get(2).address().getAddress()).getScopeId()).isEqualTo(3);

        Set<Gid> gids = new LinkedHashSet<>(List.of(Gid.parse("fe80::1"), Gid.parse("192.168.0.9")));
        Wire.GidUpdate update = new Wire.GidUpdate(List.of(new Wire.GidRecord(4, true, false, gids),
                new Wire.GidRecord(9, false, true, Set.of())));
        assertThat(roundTrip(update)).isEqualTo(update);
        assertThat(((Wire.GidUpdate) roundTrip(update)).records().getFirst().gids()).containsExactlyElementsOf(gids);
        Set<Gid> learned = Set.of(Gid.parse("10.78.0.2"));
        Wire.Gids claim = (Wire.Gids) roundTrip(new Wire.Gids(gids, learned));
        assertThat(claim).isEqualTo(new Wire.Gids(gids, learned));
        assertThat(claim.declared()).containsExactlyElementsOf(gids);

        Wire.Register reg = new Wire.Register(Wire.MAGIC, Wire.VERSION, 5, 0x1234_5678_9abc_def0L, 5000);
        assertThat(roundTrip(reg)).isEqualTo(reg);
        assertThat(roundTrip(new Wire.RegisterAck(3))).isEqualTo(new Wire.RegisterAck(3));
        Wire.Hello hello = new Wire.Hello(Wire.MAGIC, Wire.VERSION, 2, 42, 5);
        assertThat(roundTrip(hello)).isEqualTo(hello);
        assertThat(roundTrip(new Wire.HelloAck(5, 43))).isEqualTo(new Wire.HelloAck(5, 43));
        assertThat(roundTrip(new Wire.Refuse(Wire.REFUSE_FULL, "full"))).isEqualTo(new Wire.Refuse(Wire.REFUSE_FULL, "full"));
        assertThat(roundTrip(Wire.Heartbeat.REQUEST)).isSameAs(Wire.Heartbeat.REQUEST);
        assertThat(roundTrip(Wire.Heartbeat.ANSWER)).isSameAs(Wire.Heartbeat.ANSWER);
    }

    @Test
    void dataCarriesItsPayloadUncopied() throws Exception {
        ByteBuf f = cut(Wire.data(A, 3, 4, Unpooled.wrappedBuffer("payload".getBytes()))).getFirst();
        Wire.Data d = (Wire.Data) Wire.decode(f);
        assertThat(d.source()).isEqualTo(3);
        assertThat(d.destination()).isEqualTo(4);
        assertThat(d.payload()).isSameAs(f);
        assertThat(new String(ByteBufUtil.getBytes(d.payload()))).isEqualTo("payload");
        f.release();
        ByteBuf out = Wire.data(A, 1, 2, Unpooled.wrappedBuffer(new byte[3]));
        assertThat(Wire.dataDestination(out)).isEqualTo(2);
        assertThat(out.readableBytes()).isEqualTo(Wire.DATA_OVERHEAD + 3);
        out.release();
    }

    /** A pooled direct payload with room for the DATA header before it, as {@link MeshNode#message} makes it. */
    private static ByteBuf withHeadroom(String text) {
        ByteBuf p = PooledByteBufAllocator.DEFAULT.directBuffer(Wire.DATA_OVERHEAD + text.length());
        return p.setIndex(Wire.DATA_OVERHEAD, Wire.DATA_OVERHEAD).writeBytes(text.getBytes());
    }

    @Test
    void aPayloadWithHeadroomGoesOutAsOneBufferWithTheSameBytes() throws Exception {
        ByteBuf p = withHeadroom("payload");
        ByteBuf frame = Wire.data(A, 3, 4, p);
        assertThat(frame).isNotInstanceOf(CompositeByteBuf.class);
        assertThat(frame.hasMemoryAddress()).isTrue(); // what epoll's writev takes without a view
        assertThat(p.readerIndex()).isEqualTo(Wire.DATA_OVERHEAD); // the payload as the sender is asked about it
        assertThat(p.refCnt()).isEqualTo(1); // the frame's reference, no other
        ByteBuf composite = Wire.data(A, 3, 4, Unpooled.wrappedBuffer("payload".getBytes()));
        assertThat(ByteBufUtil.getBytes(frame)).isEqualTo(ByteBufUtil.getBytes(composite));
        assertThat(Wire.dataDestination(frame)).isEqualTo(4);
        composite.release();
        ByteBuf f = cut(frame).getFirst();
        Wire.Data d = (Wire.Data) Wire.decode(f);
        assertThat(d.source()).isEqualTo(3);
        assertThat(new String(ByteBufUtil.getBytes(d.payload()))).isEqualTo("payload");
        f.release();
        assertThat(p.refCnt()).isZero();
    }

    @Test
    void bytesBeforeAPayloadSomebodyElseHoldsOrViewsAreNotWrittenOver() {
        ByteBuf held = withHeadroom("payload").retain();
        held.setByte(0, 0x55);
        ByteBuf frame = Wire.data(A, 1, 2, held);
        assertThat(frame).isInstanceOf(CompositeByteBuf.class);
        assertThat(held.getByte(0)).isEqualTo((byte) 0x55);
        frame.release();
        held.release();

        ByteBuf whole = withHeadroom("payload");
        whole.setByte(0, 0x66);
        ByteBuf view = whole.retainedDuplicate();
        frame = Wire.data(A, 1, 2, view);
        assertThat(frame).isInstanceOf(CompositeByteBuf.class);
        assertThat(whole.getByte(0)).isEqualTo((byte) 0x66);
        frame.release();
        whole.release();
        assertThat(whole.refCnt()).isZero();
    }

    @Test
    void aHandshakeOfAnotherVersionIsDecodedOnlyThatFar() throws Exception {
        // Another version may have other fields: it is read up to the version and refused, not misread.
        Wire.Frame f = decode(Wire.REGISTER, Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(9).writeByte(1));
        assertThat(f).isInstanceOf(Wire.Register.class);
        assertThat(((Wire.Handshake) f).speaksOurs()).isFalse();
        Wire.Frame g = decode(Wire.HELLO, Unpooled.buffer().writeInt(0xdeadbeef).writeShort(Wire.VERSION));
        assertThat(((Wire.Handshake) g).speaksOurs()).isFalse();
    }

    @Test
    void hostileFramesAreRefused() {
        // Empty, unknown type, short, long.
        assertThatThrownBy(() -> Wire.decode(Unpooled.buffer())).isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(99, Unpooled.buffer())).isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.DATA, Unpooled.buffer().writeInt(1)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.HEARTBEAT, Unpooled.buffer().writeByte(0)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.REGISTER, Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION)
                .writeInt(1).writeLong(2))).isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.REGISTER_ACK, Unpooled.buffer().writeInt(Wire.MAGIC)
                .writeShort(Wire.VERSION).writeInt(1).writeByte(0))).isInstanceOf(Wire.BadFrame.class);
        // Field values: a registration without a port, an assigned id 0, negative node ids.
        assertThatThrownBy(() -> decode(Wire.REGISTER, Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION)
                .writeInt(1).writeLong(2).writeShort(0))).hasMessageContaining("port");
        assertThatThrownBy(() -> decode(Wire.REGISTER_ACK, Unpooled.buffer().writeInt(Wire.MAGIC)
                .writeShort(Wire.VERSION).writeInt(0))).hasMessageContaining("id 0");
        assertThatThrownBy(() -> decode(Wire.DATA, Unpooled.buffer().writeInt(-1).writeInt(0)))
                .isInstanceOf(Wire.BadFrame.class);
        // GID counts larger than the frame or than allowed; no learned list; a GID declared and learned.
        assertThatThrownBy(() -> decode(Wire.GIDS, Unpooled.buffer().writeShort(1000).writeLong(1).writeLong(2)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.GIDS, Unpooled.buffer().writeShort(Wire.MAX_GIDS_PER_NODE + 1)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.GIDS, Unpooled.buffer().writeShort(1).writeLong(1).writeLong(2)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.GIDS, Unpooled.buffer().writeShort(1).writeLong(1).writeLong(2)
                .writeShort(1).writeLong(1).writeLong(2))).hasMessageContaining("declared and learned");
        // More learned GIDs than a node may learn (64), and more GIDs in all than a node may claim (4096).
        ByteBuf tooManyLearned = Unpooled.buffer().writeShort(0).writeShort(Wire.MAX_LEARNED_GIDS + 1);
        for (int i = 0; i <= Wire.MAX_LEARNED_GIDS; i++) {
            tooManyLearned.writeLong(0).writeLong(0xffff_0a00_0000L + i);
        }
        assertThatThrownBy(() -> decode(Wire.GIDS, tooManyLearned)).hasMessageContaining("learned");
        ByteBuf tooMany = Unpooled.buffer().writeShort(Wire.MAX_GIDS_PER_NODE);
        for (int i = 0; i < Wire.MAX_GIDS_PER_NODE; i++) {
            tooMany.writeLong(1).writeLong(i);
        }
        tooMany.writeShort(1).writeLong(2).writeLong(0);
        assertThatThrownBy(() -> decode(Wire.GIDS, tooMany)).hasMessageContaining("4097 GIDs");
        // Topology: more nodes than bytes, an unknown family, a node twice, an alive flag of 2, port 0.
        assertThatThrownBy(() -> decode(Wire.TOPOLOGY, Unpooled.buffer().writeShort(60000)))
                .isInstanceOf(Wire.BadFrame.class);
        assertThatThrownBy(() -> decode(Wire.TOPOLOGY, Unpooled.buffer().writeShort(1).writeInt(1).writeByte(1)
                .writeByte(5))).hasMessageContaining("family");
        assertThatThrownBy(() -> decode(Wire.TOPOLOGY, Unpooled.buffer().writeShort(2).writeInt(1).writeByte(1)
                .writeByte(0).writeInt(1).writeByte(1).writeByte(0))).hasMessageContaining("twice");
        assertThatThrownBy(() -> decode(Wire.TOPOLOGY, Unpooled.buffer().writeShort(1).writeInt(1).writeByte(2)
                .writeByte(0))).hasMessageContaining("alive");
        assertThatThrownBy(() -> decode(Wire.TOPOLOGY, Unpooled.buffer().writeShort(1).writeInt(1).writeByte(1)
                .writeByte(4).writeInt(0x0a000001).writeShort(0))).hasMessageContaining("port 0");
        // GID_UPDATE: unknown flags, a record cut short.
        assertThatThrownBy(() -> decode(Wire.GID_UPDATE, Unpooled.buffer().writeShort(1).writeInt(1).writeByte(4)
                .writeShort(0))).hasMessageContaining("flags");
        assertThatThrownBy(() -> decode(Wire.GID_UPDATE, Unpooled.buffer().writeShort(2).writeInt(1).writeByte(1)
                .writeShort(0).writeInt(2).writeByte(1))).isInstanceOf(Wire.BadFrame.class);
    }
}
