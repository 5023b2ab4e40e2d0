package ernic.vfiouser;

import ernic.vfiouser.server.VfioCounter;
import ernic.vfiouser.client.EventFd;
import ernic.vfiouser.client.GuestRam;
import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.client.VfioUserException;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.Capabilities;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.server.VfioUserServer;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.testing.Leaks;
import ernic.vfiouser.testing.TestSockets;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Messages.DeviceFeature;
import ernic.vfiouser.wire.Messages.DeviceInfo;
import ernic.vfiouser.wire.Messages.DmaUnmap;
import ernic.vfiouser.wire.Messages.IrqInfo;
import ernic.vfiouser.wire.Messages.MigData;
import ernic.vfiouser.wire.Messages.RegionInfo;
import ernic.vfiouser.wire.Messages.RegionIoFds;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.WriteEntry;
import ernic.vfiouser.wire.Messages.WriteMulti;
import ernic.vfiouser.wire.VfioUserMessage;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Client and server on one machine, every command of the protocol, with the sample device. */
class RoundTripTest {
    static final int BAR0 = 0, BAR2 = 2, CONFIG = 7;
    static final long MAGIC = 0x00, SCRATCH = 0x04, RAISE = 0x08, DMA_ADDR = 0x10, DMA_LEN = 0x18, DMA_CMD = 0x1c,
            DMA_STATUS = 0x20, WRITES = 0x24, ARRAY = 0x100;
    static final long RAM_IOVA = 0x100000;

    Leaks baseline;
    SampleDevice device;
    VfioUserServer server;
    VfioUserClient client;
    final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        baseline = Leaks.baseline();
        device = new SampleDevice();
        server = VfioUserServer.start(device, VfioUserServer.Options.defaults(TestSockets.newPath("rt"))
                .withMaxDataXferSize(8 << 20));
        client = VfioUserClient.connect(server.socketPath());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.close();
        for (AutoCloseable c : closeables) {
            c.close();
        }
        device.close();
        baseline.assertBackToBaseline();
    }

    <T extends AutoCloseable> T track(T c) {
        closeables.add(c);
        return c;
    }

    /**
     * VERSION, then {@code bytes} of guest RAM at {@link #RAM_IOVA} mapped with its memfd or, {@code withFd} false,
     * without one (the server reaches it by DMA messages).
     */
    GuestRam negotiateAndMap(int bytes, boolean withFd) throws Exception {
        client.negotiate();
        GuestRam ram = track(new GuestRam(RAM_IOVA, bytes));
        if (withFd) {
            client.map(ram);
        } else {
            client.mapWithoutFd(ram);
        }
        return ram;
    }

    @Test
    void versionNegotiatesCapabilitiesBothWays() throws Exception {
        Capabilities caps = client.negotiate();
        assertThat(caps.maxMsgFds()).isEqualTo(16);
        assertThat(caps.maxDataXferSize()).isEqualTo(8 << 20);
        assertThat(caps.pgsizes()).isEqualTo(4096);
        assertThat(caps.maxDmaMaps()).isEqualTo(65535);
        assertThat(caps.writeMultiple()).isTrue();
        assertThat(server.count(VfioCounter.VERSIONS_NEGOTIATED)).isEqualTo(1);
        assertThat(server.lastClientVersionJson()).contains("\"max_msg_fds\":16");
    }

    @Test
    void deviceRegionAndIrqInfo() throws Exception {
        client.negotiate();
        DeviceInfo info = client.deviceInfo();
        assertThat(info.flags()).isEqualTo(DeviceInfo.FLAG_RESET | DeviceInfo.FLAG_PCI);
        assertThat(info.numRegions()).isEqualTo(9);
        assertThat(info.numIrqs()).isEqualTo(5);

        RegionInfo bar0 = client.regionInfo(BAR0).info();
        assertThat(bar0.size()).isEqualTo(8192);
        assertThat(bar0.flags()).isEqualTo(RegionInfo.FLAG_READ | RegionInfo.FLAG_WRITE);

        VfioUserClient.RegionInfoReply bar2 = client.regionInfo(BAR2);
        try {
            assertThat(bar2.info().size()).isEqualTo(4 << 20);
            assertThat(bar2.info().flags()).isEqualTo(RegionInfo.FLAG_READ | RegionInfo.FLAG_WRITE
                    | RegionInfo.FLAG_MMAP | RegionInfo.FLAG_CAPS);
            assertThat(bar2.info().sparseAreas()).hasSize(1);
            assertThat(bar2.info().sparseAreas().get(0).size()).isEqualTo(4 << 20);
            assertThat(bar2.fd()).as("region fd passed with the reply").isGreaterThanOrEqualTo(0);
            assertThat(LibC.fileSize(bar2.fd())).isGreaterThanOrEqualTo(4 << 20);
        } finally {
            LibC.close(bar2.fd());
        }
        assertThat(client.regionInfo(1).info().size()).as("absent BAR").isZero();
        assertThat(client.regionInfo(CONFIG).info().size()).isEqualTo(4096);

        IrqInfo msix = client.irqInfo(IrqType.MSIX);
        assertThat(msix.count()).isEqualTo(4);
        assertThat(msix.flags() & IrqInfo.FLAG_EVENTFD).isNotZero();
        assertThat(client.irqInfo(IrqType.INTX).count()).isEqualTo(1);

        VfioUserMessage ioFds = client.call(Command.DEVICE_GET_REGION_IO_FDS,
                new RegionIoFds(RegionIoFds.SIZE, 0, BAR2, 0).encode(client.alloc()));
        try {
            assertThat(RegionIoFds.decode(ioFds.payload()).count()).isZero();
        } finally {
            ioFds.release();
        }
    }

    @Test
    void configSpaceReadsAndBarSizing() throws Exception {
        client.negotiate();
        assertThat(client.regionReadLong(CONFIG, 0, 2)).isEqualTo(0x494f);
        assertThat(client.regionReadLong(CONFIG, 2, 2)).isEqualTo(0x0dc8);
        client.regionWriteLong(CONFIG, 0x10, 4, 0xffffffffL);
        assertThat(client.regionReadLong(CONFIG, 0x10, 4) & ~0xfL).isEqualTo(~(8192L - 1) & 0xffffffffL);
        client.regionWriteLong(CONFIG, 0x10, 4, 0xfe000000L);
        assertThat(client.regionReadLong(CONFIG, 0x10, 4) & ~0xfL).isEqualTo(0xfe000000L);
    }

    @Test
    void registersScratchAndCounters() throws Exception {
        client.negotiate();
        assertThat(client.regionReadLong(BAR0, MAGIC, 4)).isEqualTo(0x45524e43L);
        client.regionWriteLong(BAR0, SCRATCH, 4, 0xdeadbeefL);
        assertThat(client.regionReadLong(BAR0, SCRATCH, 4)).isEqualTo(0xdeadbeefL);
        byte[] bulk = new byte[3000];
        new Random(1).nextBytes(bulk);
        client.regionWrite(BAR0, ARRAY, bulk);
        assertThat(client.regionRead(BAR0, ARRAY, bulk.length)).isEqualTo(bulk);
    }

    @Test
    void dmaMapWithMemfdAndInterruptOnEventfd() throws Exception {
        GuestRam ram = negotiateAndMap(1 << 20, true);
        assertThat(server.count(VfioCounter.DMA_MAPS_WITH_FD)).isEqualTo(1);
        EventFd irq = track(new EventFd());
        client.setIrqEventfds(IrqType.MSIX, 0, irq.fd());
        for (int i = 0; i < 100; i++) {
            ram.memory().set(ValueLayout.JAVA_BYTE, 4096 + i, (byte) i);
        }
        client.regionWriteLong(BAR0, DMA_ADDR, 8, RAM_IOVA + 4096);
        client.regionWriteLong(BAR0, DMA_LEN, 4, 100);
        client.regionWriteLong(BAR0, DMA_CMD, 4, 1);
        assertThat(irq.await(5000)).isEqualTo(1);
        assertThat(client.regionReadLong(BAR0, DMA_STATUS, 4)).isZero();
        var dma = server.connection().dmaSpace();
        assertThat(server.eventLoop().submit(() -> dma.isDirty(RAM_IOVA + 4096)).get()).as("written page dirty").isTrue();
        assertThat(server.eventLoop().submit(() -> dma.isDirty(RAM_IOVA + 8192)).get()).as("untouched page").isFalse();
        server.eventLoop().submit(dma::clearDirty).get();
        assertThat(server.eventLoop().submit(() -> dma.isDirty(RAM_IOVA + 4096)).get()).isFalse();
        assertThat(server.connection().irqTable().signalled()).isEqualTo(1);
        for (int i = 0; i < 100; i++) {
            assertThat(ram.memory().get(ValueLayout.JAVA_BYTE, 4096 + i)).isEqualTo((byte) (i + 1));
        }
        // An address that is not mapped gives a fault status, not a crash.
        client.regionWriteLong(BAR0, DMA_ADDR, 8, 0x7000_0000L);
        client.regionWriteLong(BAR0, DMA_CMD, 4, 1);
        assertThat(client.regionReadLong(BAR0, DMA_STATUS, 4)).isEqualTo(1);
    }

    @Test
    void severalEventfdsMaskingAndPendingBitArray() throws Exception {
        client.negotiate();
        EventFd[] irqs = new EventFd[4];
        int[] fds = new int[4];
        for (int i = 0; i < 4; i++) {
            irqs[i] = track(new EventFd());
            fds[i] = irqs[i].fd();
        }
        client.setIrqEventfds(IrqType.MSIX, 0, fds);
        assertThat(server.count(VfioCounter.IRQ_EVENTFDS)).isEqualTo(4);
        for (int v = 0; v < 4; v++) {
            client.regionWriteLong(BAR0, RAISE, 4, v);
            assertThat(irqs[v].await(5000)).as("vector %d", v).isEqualTo(1);
        }
        client.setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_NONE | SetIrqs.ACTION_MASK, IrqType.MSIX.index(), 2, 1, null));
        client.regionWriteLong(BAR0, RAISE, 4, 2);
        assertThat(irqs[2].await(200)).as("masked vector stays quiet").isZero();
        long pbaOffset = 0x1800;
        assertThat(client.regionReadLong(BAR0, pbaOffset, 8)).as("PBA shows the pending bit").isEqualTo(1L << 2);
        client.setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_NONE | SetIrqs.ACTION_UNMASK, IrqType.MSIX.index(), 2, 1, null));
        assertThat(irqs[2].await(5000)).as("delivered on unmask").isEqualTo(1);
        assertThat(client.regionReadLong(BAR0, pbaOffset, 8)).isZero();
        // De-assign: no fds for the range.
        client.setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER, IrqType.MSIX.index(), 0, 4, null));
        client.regionWriteLong(BAR0, RAISE, 4, 0);
        assertThat(irqs[0].await(200)).isZero();
        assertThat(server.connection().irqTable().lost()).as("raised with no eventfd").isEqualTo(1);
    }

    @Test
    void messagesOverOneMebibyte() throws Exception {
        client.negotiate();
        byte[] big = new byte[(2 << 20) + 123];
        new Random(7).nextBytes(big);
        client.regionWrite(BAR2, 4096, big);
        assertThat(client.regionRead(BAR2, 4096, big.length)).isEqualTo(big);
    }

    @Test
    void pipelinedBurstOfPostedWrites() throws Exception {
        client.negotiate();
        long before = client.regionReadLong(BAR0, WRITES, 4);
        int n = 5000;
        for (int i = 0; i < n; i++) {
            client.regionWritePosted(BAR0, SCRATCH, 4, i);
        }
        // Commands are processed in order: this read sees every write before it.
        assertThat(client.regionReadLong(BAR0, SCRATCH, 4)).isEqualTo(n - 1);
        assertThat(client.regionReadLong(BAR0, WRITES, 4) - before).isEqualTo(n);
        // A burst of replied reads in flight at once.
        List<CompletableFuture<VfioUserMessage>> inFlight = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            inFlight.add(client.send(Command.REGION_READ,
                    new ernic.vfiouser.wire.Messages.RegionAccess(SCRATCH, BAR0, 4).encodeHead(client.alloc(), 0), false));
        }
        for (CompletableFuture<VfioUserMessage> f : inFlight) {
            VfioUserMessage r = f.get(10, TimeUnit.SECONDS);
            assertThat(r.isError()).isFalse();
            r.release();
        }
    }

    @Test
    void writeMultiAppliesEveryWrite() throws Exception {
        client.negotiate();
        List<WriteEntry> writes = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            writes.add(new WriteEntry(ARRAY + 8L * i, BAR0, 8, 0x0101010101010101L * (i & 0x7f)));
        }
        client.call(Command.REGION_WRITE_MULTI, new WriteMulti(writes).encode(client.alloc())).release();
        assertThat(client.regionReadLong(BAR0, ARRAY + 8 * 199, 8)).isEqualTo(0x0101010101010101L * (199 & 0x7f));
    }

    @Test
    void resetReturnsToPowerOn() throws Exception {
        client.negotiate();
        client.regionWriteLong(BAR0, SCRATCH, 4, 42);
        client.regionWriteLong(CONFIG, 4, 2, 0x6); // memory space + bus master
        client.reset();
        assertThat(client.regionReadLong(BAR0, SCRATCH, 4)).isZero();
        assertThat(client.regionReadLong(CONFIG, 4, 2)).isZero();
        assertThat(server.count(VfioCounter.RESETS)).isEqualTo(1);
    }

    @Test
    void unmapAndUnmapAll() throws Exception {
        client.negotiate();
        GuestRam a = track(new GuestRam(RAM_IOVA, 1 << 20));
        GuestRam b = track(new GuestRam(RAM_IOVA + (4 << 20), 1 << 20));
        client.map(a);
        client.map(b);
        DmaUnmap echo = client.dmaUnmap(a.iova(), a.size(), 0);
        assertThat(echo.addr()).isEqualTo(a.iova());
        assertThat(echo.size()).isEqualTo(a.size());
        assertThatThrownBy(() -> client.dmaUnmap(a.iova(), a.size(), 0))
                .isInstanceOfSatisfying(VfioUserException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOENT));
        client.dmaUnmap(0, 0, DmaUnmap.FLAG_ALL);
        assertThat(server.connection().dmaSpace().mappingCount()).isZero();
    }

    @Test
    void reconnectAfterDisconnect() throws Exception {
        client.negotiate();
        client.map(track(new GuestRam(RAM_IOVA, 1 << 20)));
        client.close();
        for (int round = 0; round < 3; round++) {
            client = VfioUserClient.connect(server.socketPath());
            client.negotiate();
            assertThat(client.regionReadLong(BAR0, MAGIC, 4)).isEqualTo(0x45524e43L);
            if (round < 2) {
                client.close();
            }
        }
        assertThat(server.count(VfioCounter.CONNECTIONS)).isEqualTo(4);
    }

    @Test
    void secondClientWaitsForTheFirst() throws Exception {
        client.negotiate();
        VfioUserClient second = VfioUserClient.connect(server.socketPath());
        try {
            CompletableFuture<VfioUserMessage> version = second.send(Command.VERSION,
                    new ernic.vfiouser.wire.Messages.Version(0, 0, VfioUserClient.QEMU_CAPABILITIES).encode(second.alloc()), false);
            Thread.sleep(300);
            assertThat(version).as("not served while the first client is connected").isNotDone();
            client.close();
            version.get(10, TimeUnit.SECONDS).release();
            client = second;
        } catch (Exception e) {
            second.close();
            throw e;
        }
    }

    @Test
    void unsupportedFeaturesAndMigration() throws Exception {
        client.negotiate();
        assertThatThrownBy(() -> client.call(Command.DEVICE_FEATURE,
                new DeviceFeature(8, DeviceFeature.PROBE | 1).encode(client.alloc())))
                .isInstanceOfSatisfying(VfioUserException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOTSUP));
        assertThatThrownBy(() -> client.call(Command.MIG_DATA_READ, new MigData(8, 16).encode(client.alloc())))
                .isInstanceOfSatisfying(VfioUserException.class, e -> assertThat(e.errno()).isEqualTo(LibC.ENOTSUP));
    }

    @Test
    void messageDmaWhenAMappingHasNoFd() throws Exception {
        GuestRam ram = negotiateAndMap(1 << 16, false);
        assertThat(server.count(VfioCounter.DMA_MAPS_WITHOUT_FD)).isEqualTo(1);
        ram.memory().set(ValueLayout.JAVA_LONG, 64, 0x1122334455667788L);
        var conn = server.connection();
        ByteBuf read = server.eventLoop().submit(() -> conn.dmaRead(RAM_IOVA + 64, 8)).get().get(10, TimeUnit.SECONDS);
        try {
            assertThat(read.getLongLE(0)).isEqualTo(0x1122334455667788L);
        } finally {
            read.release();
        }
        server.eventLoop().submit(() -> conn.dmaWrite(RAM_IOVA + 128,
                io.netty.buffer.Unpooled.buffer(8).writeLongLE(0xcafeL))).get().get(10, TimeUnit.SECONDS);
        assertThat(ram.memory().get(ValueLayout.JAVA_LONG, 128)).isEqualTo(0xcafeL);
        // The device cannot reach it directly: its DMA reports a fault, and the server goes on.
        client.regionWriteLong(BAR0, DMA_ADDR, 8, RAM_IOVA);
        client.regionWriteLong(BAR0, DMA_LEN, 4, 16);
        client.regionWriteLong(BAR0, DMA_CMD, 4, 1);
        assertThat(client.regionReadLong(BAR0, DMA_STATUS, 4)).isEqualTo(1);
    }

    @Test
    void callsFromSeveralThreadsShareTheSocket() throws Exception {
        client.negotiate();
        int threads = 4, rounds = 2000;
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long slot = ARRAY + 8L * t;
            workers.add(CompletableFuture.runAsync(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        long v = (long) slot << 32 | i;
                        client.regionWriteLong(BAR0, slot, 8, v);
                        assertThat(client.regionReadLong(BAR0, slot, 8)).isEqualTo(v);
                        if (i % 100 == 0) {
                            // A future among the blocking calls: whoever reads completes it.
                            VfioUserMessage r = client.send(Command.REGION_READ,
                                    new ernic.vfiouser.wire.Messages.RegionAccess(slot, BAR0, 8).encodeHead(client.alloc(), 0),
                                    false).get();
                            r.release();
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, command -> Thread.ofPlatform().start(command)));
        }
        for (CompletableFuture<Void> w : workers) {
            w.get();
        }
        assertThat(server.count(VfioCounter.REGION_WRITES)).isEqualTo((long) threads * rounds);
    }

    @Test
    void messageDmaWhileCallsAreWaiting() throws Exception {
        GuestRam ram = negotiateAndMap(1 << 16, false);
        var conn = server.connection();
        int n = 200;
        // The server asks for guest memory while the client's caller is busy with its own calls: the
        // caller that reads the socket serves the requests on the way.
        List<CompletableFuture<?>> dma = new ArrayList<>();
        CompletableFuture<Void> asked = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < n; i++) {
                long at = RAM_IOVA + 8L * i;
                dma.add(conn.dmaWrite(at, io.netty.buffer.Unpooled.buffer(8).writeLongLE(i * 3L))
                        .thenCompose(v -> conn.dmaRead(at, 8))
                        .thenApply(b -> {
                            try {
                                return b.getLongLE(0);
                            } finally {
                                b.release();
                            }
                        }));
            }
        }, server.eventLoop());
        for (int i = 0; i < 500; i++) {
            client.regionWriteLong(BAR0, SCRATCH, 4, i);
        }
        asked.get();
        for (int i = 0; i < n; i++) {
            assertThat(dma.get(i).get()).isEqualTo(i * 3L);
        }
        assertThat(client.regionReadLong(BAR0, SCRATCH, 4)).isEqualTo(499);
    }
}
