package ernic.vfiouser.server;

import ernic.counters.Counters;
import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.FdChunk;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.MessageEncoder;
import ernic.vfiouser.wire.MessageFramer;
import ernic.vfiouser.wire.Messages.DmaMap;
import ernic.vfiouser.wire.Messages.DmaUnmap;
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.Version;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random and mutated message streams through the real framer and dispatcher (an EmbeddedChannel
 * stands in for the socket): no exception escapes, no fd is leaked, and the device never throws.
 */
class DispatcherFuzzTest {
    static SampleDevice device;

    @BeforeContainer
    static void createDevice() throws Exception {
        device = new SampleDevice();
    }

    @AfterContainer
    static void closeDevice() {
        device.close();
    }

    /** One chunk of the stream as it would arrive from recvmsg: bytes, and how many fds came with them. */
    record Chunk(byte[] bytes, int fdCount) {}

    @Property(tries = 300)
    void randomStreams(@ForAll("randomChunks") List<Chunk> chunks) {
        feed(chunks);
    }

    @Property(tries = 300)
    void mutatedValidStreams(@ForAll("mutatedChunks") List<Chunk> chunks) {
        feed(chunks);
    }

    private void feed(List<Chunk> chunks) {
        int fdsBefore = LibC.openFdCount();
        Refusals refusals = new Refusals(LoggerFactory.getLogger("fuzz"));
        VfioUserServer.Options options = VfioUserServer.Options.defaults("/unused")
                .withMaxDataXferSize(64 << 10);
        Connection connection = new Connection(device, options, new Counters<>(VfioCounter.class), refusals, json -> { });
        EmbeddedChannel ch = new EmbeddedChannel(new MessageFramer(options.maxMessageSize(), connection),
                MessageEncoder.INSTANCE, connection);
        try {
            for (Chunk c : chunks) {
                if (!ch.isOpen()) {
                    break;
                }
                int[] fds = new int[c.fdCount()];
                for (int i = 0; i < fds.length; i++) {
                    fds[i] = LibC.eventfd(true);
                }
                ByteBuf bytes = Unpooled.wrappedBuffer(c.bytes());
                ch.writeInbound(fds.length == 0 ? bytes : FdChunk.received(bytes, fds)); // as the channel fires them
                ch.runPendingTasks();
            }
            ch.checkException();
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            ch.finishAndReleaseAll();
        }
        assertThat(refusals.snapshot().keySet()).noneMatch(k -> k.startsWith("device error"));
        assertThat(LibC.openFdCount()).as("fds after the stream").isLessThanOrEqualTo(fdsBefore);
    }

    @Provide
    Arbitrary<List<Chunk>> randomChunks() {
        Arbitrary<Chunk> chunk = Combinators.combine(
                Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(80),
                Arbitraries.integers().between(0, 3).edgeCases(e -> e.add(0))).as(Chunk::new);
        Arbitrary<Chunk> headerish = Combinators.combine(
                Arbitraries.integers().between(0, 20), Arbitraries.integers().between(0, 0x3f),
                Arbitraries.integers().between(0, 120), Arbitraries.bytes().array(byte[].class).ofMaxSize(100),
                Arbitraries.integers().between(0, 2))
                .as((cmd, flags, size, body, fds) -> new Chunk(concat(header(1, cmd, size, flags), body), fds));
        return Arbitraries.oneOf(chunk, headerish).list().ofMaxSize(20)
                .map(l -> { List<Chunk> all = new ArrayList<>(); all.add(new Chunk(version(), 0)); all.addAll(l); return all; });
    }

    @Provide
    Arbitrary<List<Chunk>> mutatedChunks() {
        byte[] valid = validStream();
        Arbitrary<byte[]> mutated = Combinators.combine(
                Arbitraries.integers().between(0, valid.length - 1).list().ofMaxSize(6),
                Arbitraries.bytes().list().ofSize(6),
                Arbitraries.integers().between(valid.length / 2, valid.length))
                .as((positions, values, length) -> {
                    byte[] m = java.util.Arrays.copyOf(valid, length);
                    for (int i = 0; i < positions.size(); i++) {
                        if (positions.get(i) < m.length && positions.get(i) >= Header.SIZE + 4) {
                            m[positions.get(i)] = values.get(i);
                        }
                    }
                    return m;
                });
        return Combinators.combine(mutated, Arbitraries.integers().between(1, 200).list().ofMinSize(1).ofMaxSize(10),
                Arbitraries.integers().between(0, 2).list().ofSize(10))
                .as((bytes, cuts, fdCounts) -> {
                    List<Chunk> out = new ArrayList<>();
                    int at = 0;
                    for (int i = 0; i < cuts.size() && at < bytes.length; i++) {
                        int n = Math.min(cuts.get(i), bytes.length - at);
                        out.add(new Chunk(java.util.Arrays.copyOfRange(bytes, at, at + n), fdCounts.get(i)));
                        at += n;
                    }
                    if (at < bytes.length) {
                        out.add(new Chunk(java.util.Arrays.copyOfRange(bytes, at, bytes.length), 0));
                    }
                    return out;
                });
    }

    private static byte[] version() {
        return message(Command.VERSION.code, 0, new Version(0, 0, VfioUserClient.QEMU_CAPABILITIES)
                .encode(ByteBufAllocator.DEFAULT));
    }

    /** A plausible session: VERSION, info queries, maps, irqs, region reads and writes, reset. */
    private static byte[] validStream() {
        ByteBufAllocator a = ByteBufAllocator.DEFAULT;
        List<byte[]> msgs = new ArrayList<>();
        msgs.add(version());
        msgs.add(message(Command.DEVICE_GET_INFO.code, 0, Unpooled.buffer().writeIntLE(16).writeZero(12)));
        msgs.add(message(Command.DEVICE_GET_REGION_INFO.code, 0, Unpooled.buffer().writeIntLE(32).writeIntLE(0)
                .writeIntLE(2).writeZero(20)));
        msgs.add(message(Command.DMA_MAP.code, 0, new DmaMap(32, 3, 0, 0x100000, 0x10000).encode(a)));
        msgs.add(message(Command.DEVICE_SET_IRQS.code, 0, new SetIrqs(20, SetIrqs.DATA_NONE | SetIrqs.ACTION_MASK,
                2, 0, 2, null).encode(a)));
        msgs.add(message(Command.REGION_WRITE.code, Header.FLAG_NO_REPLY, new RegionAccess(0x10, 0, 8)
                .encodeHead(a, 8).writeLongLE(0x100000)));
        msgs.add(message(Command.REGION_WRITE.code, 0, new RegionAccess(0x18, 0, 4).encodeHead(a, 4).writeIntLE(64)));
        msgs.add(message(Command.REGION_WRITE.code, 0, new RegionAccess(0x1c, 0, 4).encodeHead(a, 4).writeIntLE(1)));
        msgs.add(message(Command.REGION_READ.code, 0, new RegionAccess(0x100, 0, 64).encodeHead(a, 0)));
        msgs.add(message(Command.REGION_READ.code, 0, new RegionAccess(0, 7, 64).encodeHead(a, 0)));
        msgs.add(message(Command.REGION_WRITE.code, 0, new RegionAccess(0x10, 7, 4).encodeHead(a, 4).writeIntLE(-1)));
        msgs.add(message(Command.DMA_UNMAP.code, 0, new DmaUnmap(24, 0, 0x100000, 0x10000).encode(a)));
        msgs.add(message(Command.DEVICE_RESET.code, 0, Unpooled.EMPTY_BUFFER));
        int total = msgs.stream().mapToInt(m -> m.length).sum();
        byte[] out = new byte[total];
        int at = 0;
        for (byte[] m : msgs) {
            System.arraycopy(m, 0, out, at, m.length);
            at += m.length;
        }
        return out;
    }

    private static byte[] header(int id, int cmd, int size, int flags) {
        ByteBuf b = Unpooled.buffer(16).writeShortLE(id).writeShortLE(cmd).writeIntLE(size).writeIntLE(flags).writeIntLE(0);
        byte[] out = new byte[16];
        b.readBytes(out);
        return out;
    }

    private static byte[] message(int cmd, int flags, ByteBuf payload) {
        byte[] p = new byte[payload.readableBytes()];
        payload.readBytes(p);
        payload.release();
        return concat(header(9, cmd, 16 + p.length, flags), p);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
