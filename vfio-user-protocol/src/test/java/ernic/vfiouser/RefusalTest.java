package ernic.vfiouser;

import ernic.vfiouser.server.VfioCounter;
import ernic.vfiouser.client.EventFd;
import ernic.vfiouser.client.GuestRam;
import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.client.VfioUserException;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.server.VfioUserServer;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.testing.Leaks;
import ernic.vfiouser.testing.TestSockets;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.Messages.DmaMap;
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.Version;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingConsumer;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every refusal: the right errno or a clean close, then the server serves a new client, and the
 * process's fds and mappings are back to where they were.
 */
class RefusalTest {
    Leaks baseline;
    SampleDevice device;
    VfioUserServer server;

    @BeforeEach
    void start() throws Exception {
        baseline = Leaks.baseline();
        device = new SampleDevice();
        server = VfioUserServer.start(device, VfioUserServer.Options.defaults(TestSockets.newPath("refuse")));
    }

    @AfterEach
    void stop() throws Exception {
        // Whatever happened, the next client is served.
        try (VfioUserClient next = VfioUserClient.connect(server.socketPath())) {
            next.negotiate();
            assertThat(next.regionReadLong(0, 0, 4)).isEqualTo(0x45524e43L);
        }
        server.close();
        device.close();
        baseline.assertBackToBaseline();
    }

    /** Runs {@code body} with a fresh, negotiated client. */
    void withClient(ThrowingConsumer<VfioUserClient> body) throws Throwable {
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            c.negotiate();
            body.accept(c);
        }
    }

    static void assertErrno(ThrowingCallable call, int errno) {
        assertThatThrownBy(call::call).isInstanceOfSatisfying(VfioUserException.class,
                e -> assertThat(e.errno()).isEqualTo(errno));
    }

    interface ThrowingCallable {
        void call() throws Exception;
    }

    static ByteBuf header(int id, int command, long size, int flags) {
        return Unpooled.buffer(16).writeShortLE(id).writeShortLE(command).writeIntLE((int) size).writeIntLE(flags)
                .writeIntLE(0);
    }

    @Test
    void shortHeaderThenHangUp() throws Throwable {
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            c.sendRaw(Unpooled.wrappedBuffer(new byte[] {1, 0, 1, 0, 20, 0, 0, 0}));
        }
    }

    @Test
    void sizeSmallerThanTheHeaderCloses() throws Throwable {
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            c.sendRaw(header(1, Command.VERSION.code, 8, 0));
            assertThat(c.awaitClosed(5000)).as("server closed the connection").isTrue();
        }
        assertThat(server.count(VfioCounter.PROTOCOL_CLOSES) + server.refusals().total()).isPositive();
    }

    @Test
    void sizeLargerThanTheLimitCloses() throws Throwable {
        withClient(c -> {
            c.sendRaw(header(7, Command.REGION_WRITE.code, (2L << 20) + 100, 0));
            assertThat(c.awaitClosed(5000)).isTrue();
        });
    }

    /**
     * A client that connects, breaks the protocol and reconnects, a hundred times: one WARN line (the refusal's
     * cause), not one per connection; every close is counted.
     */
    @Test
    void aClientReconnectingInALoopIsLoggedOnce() throws Throwable {
        ch.qos.logback.classic.Logger vfio = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                "ernic.vfiouser");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        vfio.addAppender(lines);
        try {
            for (int i = 0; i < 100; i++) {
                try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
                    c.sendRaw(header(1, Command.DEVICE_GET_INFO.code, 16, 0)); // before VERSION: fatal
                    assertThat(c.awaitClosed(Long.MAX_VALUE)).isTrue();
                }
            }
        } finally {
            vfio.detachAppender(lines);
        }
        assertThat(server.count(VfioCounter.PROTOCOL_CLOSES)).isEqualTo(100);
        assertThat(server.refusals().count("DEVICE_GET_INFO (fatal) errno " + LibC.EINVAL)).isEqualTo(100);
        assertThat(lines.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage))
                .singleElement().asString().contains("DEVICE_GET_INFO before VERSION");
    }

    @Test
    void unknownCommand() throws Throwable {
        withClient(c -> {
            for (int cmd : new int[] {0, 14, 19, 99, 0xffff}) {
                c.sendRaw(header(0x4000 + cmd, cmd, 16, 0));
            }
            // Still serving, in order:
            assertThat(c.regionReadLong(0, 0, 4)).isEqualTo(0x45524e43L);
        });
        // Five command numbers, one cause: a client cannot grow the refusal map or the log by trying them all.
        assertThat(server.refusals().count("unknown command errno " + LibC.ENOSYS)).isEqualTo(5);
        assertThat(server.refusals().snapshot().keySet()).noneMatch(k -> k.startsWith("command "));
    }

    @Test
    void replyFlagFromTheClientCloses() throws Throwable {
        withClient(c -> {
            c.sendRaw(header(3, Command.REGION_READ.code, 16, Header.TYPE_REPLY));
            assertThat(c.awaitClosed(5000)).isTrue();
        });
    }

    @Test
    void commandBeforeVersionCloses() throws Throwable {
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            assertErrno(c::deviceInfo, LibC.EINVAL);
            assertThat(c.awaitClosed(5000)).isTrue();
        }
    }

    @Test
    void badVersionJson() throws Throwable {
        String[] bad = {"{not json", "[1,2,3]", "\"text\"", "{\"capabilities\":7}",
                "{\"capabilities\":{\"max_msg_fds\":\"many\"}}", "{\"capabilities\":{\"write_multiple\":1}}"};
        for (String json : bad) {
            try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
                assertErrno(() -> c.negotiate(json), LibC.EINVAL);
                assertThat(c.awaitClosed(5000)).as(json).isTrue();
            }
        }
    }

    @Test
    void versionWithoutNulOrOtherMajor() throws Throwable {
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            byte[] json = "{}".getBytes(StandardCharsets.UTF_8);
            ByteBuf p = Unpooled.buffer().writeShortLE(0).writeShortLE(0).writeBytes(json); // no NUL
            assertErrno(() -> c.call(Command.VERSION, p), LibC.EINVAL);
            assertThat(c.awaitClosed(5000)).isTrue();
        }
        try (VfioUserClient c = VfioUserClient.connect(server.socketPath())) {
            assertErrno(() -> c.call(Command.VERSION, new Version(1, 0, "{}").encode(c.alloc())), LibC.ENOTSUP);
            assertThat(c.awaitClosed(5000)).isTrue();
        }
    }

    @Test
    void badDmaMaps() throws Throwable {
        try (GuestRam ram = new GuestRam(0x100000, 1 << 20)) {
            withClient(c -> {
                c.map(ram);
                // overlapping
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x180000, 0x1000), ram.fd()), LibC.EEXIST);
                // unaligned address, size, offset
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x800123, 0x1000), ram.fd()), LibC.EINVAL);
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x800000, 0x1001), ram.fd()), LibC.EINVAL);
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 12, 0x800000, 0x1000), ram.fd()), LibC.EINVAL);
                // past the end of the fd
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x800000, 2 << 20), ram.fd()), LibC.EINVAL);
                // wrapping the address space
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0xffff_ffff_ffff_f000L, 0x2000), ram.fd()), LibC.EINVAL);
                // no fd, overlapping: refused like any other overlap
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x100000, 0x1000)), LibC.EEXIST);
                // read/write flags missing
                assertErrno(() -> c.dmaMap(new DmaMap(32, 0, 0, 0x800000, 0x1000), ram.fd()), LibC.EINVAL);
                // two fds
                assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0x800000, 0x1000), ram.fd(), ram.fd()), LibC.EINVAL);
                // a short payload
                assertErrno(() -> c.call(Command.DMA_MAP, Unpooled.buffer().writeIntLE(32)), LibC.EINVAL);
                assertThat(server.connection().dmaSpace().mappingCount()).isEqualTo(1);
            });
        }
    }

    @Test
    void deviceDmaIntoAReadOnlyMapFaultsInsteadOfCrashing() throws Throwable {
        try (GuestRam ram = new GuestRam(0x100000, 1 << 20)) {
            withClient(c -> {
                c.dmaMap(new DmaMap(32, DmaMap.FLAG_READ, 0, ram.iova(), ram.size()), ram.fd());
                c.regionWriteLong(0, 0x10, 8, ram.iova());
                c.regionWriteLong(0, 0x18, 4, 64);
                c.regionWriteLong(0, 0x1c, 4, 1);
                assertThat(c.regionReadLong(0, 0x20, 4)).as("DMA status: fault").isEqualTo(1);
            });
        }
    }

    @Test
    void mapsPastTheAddressSpaceAreRefused() throws Throwable {
        withClient(c -> {
            // Without an fd nothing bounds the size but the address space: 2^52.
            assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, 0, 1L << 53)), LibC.EINVAL);
            assertErrno(() -> c.dmaMap(new DmaMap(32, 3, 0, (1L << 52) - 0x1000, 0x2000)), LibC.EINVAL);
            c.dmaMap(new DmaMap(32, 3, 0, 0, 1L << 48)); // large but possible: no memory is allocated for it
        });
    }

    @Test
    void regionAccessesOutOfRange() throws Throwable {
        withClient(c -> {
            assertErrno(() -> c.regionRead(9, 0, 4), LibC.EINVAL);
            assertErrno(() -> c.regionRead(1, 0, 4), LibC.EINVAL); // absent BAR
            assertErrno(() -> c.regionRead(0, 8190, 4), LibC.EINVAL);
            assertErrno(() -> c.regionRead(0, -8, 4), LibC.EINVAL);
            assertErrno(() -> c.regionRead(7, 4094, 4), LibC.EINVAL);
            assertErrno(() -> c.regionWrite(0, 8192, new byte[1]), LibC.EINVAL);
            assertErrno(() -> c.regionRead(0, 0, 0), LibC.EINVAL);
            // count that disagrees with the data
            assertErrno(() -> c.call(Command.REGION_WRITE, new RegionAccess(4, 0, 8).encodeHead(c.alloc(), 4)
                    .writeIntLE(1)), LibC.EINVAL);
        });
    }

    /**
     * Posted writes (NO_REPLY, how QEMU sends BAR stores and every doorbell) take the path that handles them where
     * they lie; the ones it cannot take are refused as any message is, counted, and answered with nothing.
     */
    @Test
    void postedWritesLandAndTheBadOnesAreCountedWithoutAnAnswer() throws Throwable {
        withClient(c -> {
            c.regionWritePosted(0, 0x4, 4, 0x1234_5678L);            // scratch register
            c.regionWritePosted(0, 0x100, 8, 0x1122_3344_5566_7788L); // scratch bytes, 8 at once
            c.regionWritePosted(0, 0x108, 3, 0xabcdefL);
            c.regionWritePosted(0, 0x10c, 12, 0);                    // longer than a doorbell: the message path
            c.regionWritePosted(0, SampleDevice.BAR0_SIZE - 2, 4, 1); // past the end
            c.regionWritePosted(1, 0, 4, 1);                          // no BAR 1
            c.regionWritePosted(9, 0, 4, 1);                          // no region 9
            c.sendRaw(header(7, Command.REGION_WRITE.code, 16 + 16 + 2, Header.FLAG_NO_REPLY)
                    .writeLongLE(0x4).writeIntLE(0).writeIntLE(4).writeShortLE(1)); // count 4 with 2 bytes
            assertThat(c.regionReadLong(0, 0x4, 4)).isEqualTo(0x1234_5678L);
            assertThat(c.regionReadLong(0, 0x100, 8)).isEqualTo(0x1122_3344_5566_7788L);
            assertThat(c.regionReadLong(0, 0x108, 4)).isEqualTo(0xabcdefL);
            assertThat(c.regionReadLong(0, 0x10c, 8)).isZero();
            assertThat(c.regionReadLong(0, 0x24, 4)).as("writes BAR 0 saw").isEqualTo(4);
        });
        assertThat(server.count(VfioCounter.REGION_WRITES)).isEqualTo(4);
        assertThat(server.count(VfioCounter.ERROR_REPLIES)).as("posted: no answers").isZero();
        assertThat(server.refusals().count("REGION_WRITE errno " + LibC.EINVAL)).isEqualTo(4);
    }

    @Test
    void setIrqsWithTheWrongFdCount() throws Throwable {
        try (EventFd a = new EventFd(); EventFd b = new EventFd()) {
            withClient(c -> {
                assertErrno(() -> c.setIrqs(new SetIrqs(20, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER,
                        IrqType.MSIX.index(), 0, 3, null), a.fd(), b.fd()), LibC.EINVAL);
                assertErrno(() -> c.setIrqs(new SetIrqs(20, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER,
                        IrqType.MSIX.index(), 3, 2, null), a.fd(), b.fd()), LibC.EINVAL); // past the count
                assertErrno(() -> c.setIrqs(new SetIrqs(20, SetIrqs.DATA_NONE | SetIrqs.ACTION_TRIGGER,
                        IrqType.MSIX.index(), 0, 1, null), a.fd()), LibC.EINVAL); // fds without DATA_EVENTFD
                assertErrno(() -> c.setIrqs(new SetIrqs(20, SetIrqs.DATA_EVENTFD | SetIrqs.DATA_BOOL
                        | SetIrqs.ACTION_TRIGGER, IrqType.MSIX.index(), 0, 1, new byte[1]), a.fd()), LibC.EINVAL);
                assertErrno(() -> c.setIrqs(new SetIrqs(20, SetIrqs.DATA_NONE | SetIrqs.ACTION_TRIGGER, 9, 0, 1, null)),
                        LibC.EINVAL);
            });
        }
    }

    @Test
    void fdsOnACommandThatTakesNone() throws Throwable {
        try (EventFd a = new EventFd()) {
            withClient(c -> assertErrno(() -> c.call(Command.REGION_READ,
                    new RegionAccess(0, 0, 4).encodeHead(c.alloc(), 0), a.fd()), LibC.EINVAL));
        }
    }

    @Test
    void fdsThatArriveInsideAMessageAreClosed() throws Throwable {
        try (EventFd a = new EventFd()) {
            withClient(c -> {
                // header in one send, its payload (with an fd on it) in another
                c.sendRaw(header(5, Command.REGION_READ.code, 32, 0));
                Thread.sleep(100); // its own read, so the fd below comes in the middle of the message
                c.sendRaw(new RegionAccess(0, 0, 4).encodeHead(c.alloc(), 0), a.fd());
                assertThat(c.regionReadLong(0, 0, 4)).isEqualTo(0x45524e43L);
            });
        }
    }
}
