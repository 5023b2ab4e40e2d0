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
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.Version;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fds on a message that does not take them (Command.maxFds): the server answers EINVAL and closes
 * them, and goes on serving. Driven through the framer and the connection on an EmbeddedChannel.
 */
class FdRefusalTest {
    SampleDevice device;
    Counters<VfioCounter> counters = new Counters<>(VfioCounter.class);
    EmbeddedChannel ch;

    @BeforeEach
    void open() throws Exception {
        device = new SampleDevice();
        VfioUserServer.Options options = VfioUserServer.Options.defaults("/unused");
        Connection c = new Connection(device, options, counters,
                new Refusals(LoggerFactory.getLogger("fd-refusals")), json -> { });
        ch = new EmbeddedChannel(new MessageFramer(options.maxMessageSize(), c), MessageEncoder.INSTANCE, c);
        send(1, Command.VERSION, new Version(0, 0, VfioUserClient.QEMU_CAPABILITIES).encode(ByteBufAllocator.DEFAULT));
        assertThat(replyErrno()).isZero();
    }

    @AfterEach
    void close() {
        ch.finishAndReleaseAll();
        device.close();
    }

    void send(int id, Command cmd, ByteBuf payload, int... fds) {
        ByteBuf m = Unpooled.buffer().writeShortLE(id).writeShortLE(cmd.code)
                .writeIntLE(Header.SIZE + payload.readableBytes()).writeIntLE(Header.TYPE_COMMAND).writeIntLE(0)
                .writeBytes(payload);
        payload.release();
        ch.writeInbound(FdChunk.received(m, fds));
        ch.runPendingTasks();
    }

    /** The errno of the next reply (0 for success). */
    int replyErrno() {
        Object out = ch.readOutbound();
        assertThat(out).as("a reply").isNotNull();
        try {
            ByteBuf b = out instanceof FdChunk c ? c.data() : (ByteBuf) out;
            int flags = b.getIntLE(b.readerIndex() + Header.OFF_FLAGS);
            assertThat(flags & Header.TYPE_MASK).isEqualTo(Header.TYPE_REPLY);
            return (flags & Header.FLAG_ERROR) != 0 ? b.getIntLE(b.readerIndex() + Header.OFF_ERRNO) : 0;
        } finally {
            ReferenceCountUtil.release(out);
        }
    }

    @Test
    void aRegionReadWithAnFdIsRefusedAndTheFdClosed() throws Exception {
        int fd = LibC.eventfd(true);
        send(2, Command.REGION_READ, new RegionAccess(0, 0, 4).encodeHead(ByteBufAllocator.DEFAULT, 0), fd);
        assertThat(replyErrno()).isEqualTo(LibC.EINVAL);
        assertThat(LibC.isOpen(fd)).as("closed by the server").isFalse();
        assertThat(counters.get(VfioCounter.ERROR_REPLIES)).isEqualTo(1);
        // Still serving:
        send(3, Command.REGION_READ, new RegionAccess(0, 0, 4).encodeHead(ByteBufAllocator.DEFAULT, 0));
        assertThat(replyErrno()).isZero();
    }

    @Test
    void aDmaMapWithTwoFdsIsRefusedAndBothClosed() throws Exception {
        int[] fds = {LibC.eventfd(true), LibC.eventfd(true)};
        send(2, Command.DMA_MAP, Unpooled.buffer().writeZero(32), fds);
        assertThat(replyErrno()).isEqualTo(LibC.EINVAL);
        assertThat(java.util.Arrays.stream(fds)).noneMatch(LibC::isOpen);
        assertThat(counters.get(VfioCounter.DMA_MAPS_WITH_FD)).isZero();
    }

    @Test
    void whichMessagesTakeFds() {
        assertThat(Command.DMA_MAP.maxFds(false, 16)).isEqualTo(1);
        assertThat(Command.DMA_MAP.maxFds(true, 16)).isZero();
        assertThat(Command.DEVICE_SET_IRQS.maxFds(false, 16)).isEqualTo(16);
        assertThat(Command.DEVICE_GET_REGION_INFO.maxFds(true, 16)).isEqualTo(1);
        assertThat(Command.DEVICE_GET_REGION_INFO.maxFds(false, 16)).isZero();
        assertThat(Command.REGION_WRITE.maxFds(false, 16)).isZero();
        assertThat(Command.DMA_READ.maxFds(false, 16)).isZero();
    }
}
