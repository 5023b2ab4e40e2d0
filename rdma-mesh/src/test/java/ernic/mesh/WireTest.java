package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
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

/** Frames through the same decoder the nodes use, fed one byte at a time. */
class WireTest {
    private static final ByteBufAllocator A = ByteBufAllocator.DEFAULT;

    private static List<ByteBuf> decode(ByteBuf... frames) {
        EmbeddedChannel ch = new EmbeddedChannel(new LengthFieldBasedFrameDecoder(1 << 20, 0, 4, 0, 4));
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

    @Test
    void topologyRoundTrips() throws Exception {
        Inet6Address scoped = Inet6Address.getByAddress(null, InetAddress.getByName("fe80::1").getAddress(), 3);
        List<NodeInfo> nodes = List.of(
                new NodeInfo(0, true, null),
                new NodeInfo(1, true, new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 5001)),
                new NodeInfo(7, false, new InetSocketAddress(scoped, 65535)));
        List<ByteBuf> frames = decode(Wire.topology(A, nodes));
        assertThat(frames).hasSize(1);
        ByteBuf f = frames.getFirst();
        assertThat(f.readUnsignedByte()).isEqualTo((short) Wire.TOPOLOGY);
        int n = f.readUnsignedShort();
        List<NodeInfo> back = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            back.add(Wire.readNode(f));
        }
        assertThat(f.isReadable()).isFalse();
        f.release();
        assertThat(back).isEqualTo(nodes);
        assertThat(((Inet6Address) back.get(2).address().getAddress()).getScopeId()).isEqualTo(3);
    }

    @Test
    void gidUpdateAndDataRoundTrip() {
        Set<Gid> gids = new LinkedHashSet<>(List.of(Gid.parse("fe80::1"), Gid.parse("192.168.0.9")));
        ByteBuf update = Wire.gidUpdate(A, List.of(new Wire.GidRecord(4, true, false, gids),
                new Wire.GidRecord(9, false, true, Set.of())));
        ByteBuf data = Wire.data(A, 3, 4, Unpooled.wrappedBuffer("payload".getBytes()));
        List<ByteBuf> frames = decode(update, data);
        assertThat(frames).hasSize(2);

        ByteBuf u = frames.get(0);
        assertThat(u.readUnsignedByte()).isEqualTo((short) Wire.GID_UPDATE);
        assertThat(u.readUnsignedShort()).isEqualTo(2);
        assertThat(u.readInt()).isEqualTo(4);
        assertThat(u.readUnsignedByte()).isEqualTo((short) Wire.GID_ALIVE);
        assertThat(Wire.readGids(u)).containsExactlyElementsOf(gids);
        assertThat(u.readInt()).isEqualTo(9);
        assertThat(u.readUnsignedByte()).isEqualTo((short) Wire.GID_REMOVED);
        assertThat(Wire.readGids(u)).isEmpty();
        u.release();

        ByteBuf d = frames.get(1);
        assertThat(d.readUnsignedByte()).isEqualTo((short) Wire.DATA);
        assertThat(d.readInt()).isEqualTo(3);
        assertThat(d.readInt()).isEqualTo(4);
        assertThat(new String(ByteBufUtil.getBytes(d))).isEqualTo("payload");
        d.release();
    }

    @Test
    void aGidCountLargerThanTheFrameIsRefused() {
        ByteBuf b = Unpooled.buffer().writeShort(1000).writeLong(1).writeLong(2);
        assertThatThrownBy(() -> Wire.readGids(b)).isInstanceOf(IllegalArgumentException.class);
        ByteBuf tooMany = Unpooled.buffer().writeShort(Wire.MAX_GIDS_PER_NODE + 1);
        assertThatThrownBy(() -> Wire.readGids(tooMany)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void registrationCarriesMagicAndVersion() {
        ByteBuf f = decode(Wire.register(A, Wire.MAGIC, Wire.VERSION, 5, 0x1234_5678_9abc_def0L, 5000)).getFirst();
        assertThat(f.readUnsignedByte()).isEqualTo((short) Wire.REGISTER);
        assertThat(f.readInt()).isEqualTo(0x45524E4D);
        assertThat(f.readUnsignedShort()).isEqualTo(1);
        assertThat(f.readInt()).isEqualTo(5);
        assertThat(f.readLong()).isEqualTo(0x1234_5678_9abc_def0L);
        assertThat(f.readUnsignedShort()).isEqualTo(5000);
        f.release();
    }
}
