package ernic.vfiouser.sample;

import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.server.Region;
import ernic.vfiouser.server.RegionHandler;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.testing.PciIdentity;
import ernic.vfiouser.wire.Messages.SparseArea;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static ernic.vfiouser.sample.SampleDevice.*;
import static org.assertj.core.api.Assertions.assertThat;

class SampleDeviceTest {
    static final long IOVA = 0x10000;
    static final long RAM = 2L << 20;

    /** Guest RAM: one mapping at IOVA. With {@code direct} false it behaves like a mapping without an fd. */
    static final class FakeMemory implements GuestMemory {
        final MemorySegment ram;
        boolean direct = true;
        final List<long[]> dirty = new ArrayList<>();

        FakeMemory(Arena arena) {
            ram = arena.allocate(RAM, 8);
        }

        private MemorySegment slice(long iova, long length) {
            long off = iova - IOVA;
            if (length < 0 || Long.compareUnsigned(iova, IOVA) < 0 || Long.compareUnsigned(off, RAM) > 0
                    || length > RAM - off) {
                return null;
            }
            return ram.asSlice(off, length);
        }

        @Override public MemorySegment segment(long iova, long length) { return direct ? slice(iova, length) : null; }

        @Override public MemorySegment writableSegment(long iova, long length) { return segment(iova, length); }

        @Override public MemorySegment run(long iova, long length) {
            long off = iova - IOVA;
            if (Long.compareUnsigned(iova, IOVA) < 0 || Long.compareUnsigned(off, RAM) >= 0 || length < 0) {
                return null;
            }
            return ram.asSlice(off, Math.min(length, RAM - off));
        }

        @Override public boolean read(long iova, MemorySegment dst) {
            MemorySegment s = slice(iova, dst.byteSize());
            if (s == null) {
                return false;
            }
            dst.copyFrom(s);
            return true;
        }

        @Override public boolean write(long iova, MemorySegment src) {
            MemorySegment s = slice(iova, src.byteSize());
            if (s == null) {
                return false;
            }
            s.copyFrom(src);
            dirty.add(new long[] {iova, src.byteSize()});
            return true;
        }

        @Override public void markDirty(long iova, long length) { dirty.add(new long[] {iova, length}); }

        @Override public int mappingCount() { return 1; }
    }

    /** Records what the device raised. */
    static final class RecordingInterrupts implements Interrupts {
        final Set<Integer> msixEventfds = new HashSet<>();
        final Set<Integer> msixPending = new HashSet<>();
        final List<String> raised = new ArrayList<>();

        @Override public boolean trigger(IrqType type, int vector) {
            raised.add(type + ":" + vector);
            return hasEventfd(type, vector);
        }

        @Override public boolean hasEventfd(IrqType type, int vector) {
            return type == IrqType.INTX ? vector == 0 : type == IrqType.MSIX && msixEventfds.contains(vector);
        }

        @Override public boolean pending(IrqType type, int vector) {
            return type == IrqType.MSIX && msixPending.contains(vector);
        }
    }

    Arena arena;
    FakeMemory memory;
    RecordingInterrupts irqs;
    SampleDevice dev;
    RegionHandler bar0;
    RegionHandler bar2;

    @BeforeEach
    void setUp() throws Exception {
        arena = Arena.ofConfined();
        memory = new FakeMemory(arena);
        irqs = new RecordingInterrupts();
        dev = new SampleDevice();
        bar0 = region(0).handler();
        bar2 = region(2).handler();
        dev.attach(new DeviceContext() {
            @Override public GuestMemory memory() { return memory; }
            @Override public Interrupts interrupts() { return irqs; }
            @Override public EventLoop eventLoop() { return null; }
        });
    }

    @AfterEach
    void tearDown() {
        dev.close();
        arena.close();
    }

    Region region(int index) {
        return dev.regions().stream().filter(r -> r.index() == index).findFirst().orElseThrow();
    }

    long read(long offset, int width) {
        MemorySegment dst = MemorySegment.ofArray(new byte[width]);
        bar0.read(offset, dst);
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = v << 8 | dst.get(ValueLayout.JAVA_BYTE, i) & 0xff;
        }
        return v;
    }

    void write(long offset, int width, long value) {
        MemorySegment src = MemorySegment.ofArray(new byte[width]);
        for (int i = 0; i < width; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (value >>> 8 * i));
        }
        bar0.write(offset, src);
    }

    @Test
    void identityAndRegions() {
        var cs = dev.configSpace();
        new PciIdentity(0x494f, 0x0dc8, 0x494f, 0x0dc8, 0xff0000).assertIn(cs);
        assertThat(cs.readU32(0x10)).isZero();
        assertThat(cs.readU32(0x18)).isEqualTo(0xc);
        assertThat(cs.msix()).isEqualTo(new ernic.vfiouser.pci.PciConfigSpace.Msix(4, 0, 0x1000, 0, 0x1800));
        assertThat(cs.size()).isEqualTo(4096);
        int exp = 0x54; // PM (8) and MSI-X (12) come first
        assertThat(cs.readU8(exp)).isEqualTo(0x10);
        assertThat(cs.readU16(exp + 0x12)).isEqualTo(3 | 1 << 4); // 8 GT/s x1

        assertThat(dev.regions()).extracting(Region::index).containsExactly(0, 2);
        assertThat(region(0).size()).isEqualTo(8192);
        assertThat(region(0).mmapFd()).isNegative();
        Region r2 = region(2);
        assertThat(r2.size()).isEqualTo(4L << 20);
        assertThat(r2.mmapFd()).isNotNegative();
        assertThat(LibC.isOpen(r2.mmapFd())).isTrue();
        assertThat(r2.sparseAreas()).containsExactly(new SparseArea(0, 4L << 20));

        assertThat(dev.irqCount(IrqType.INTX)).isEqualTo(1);
        assertThat(dev.irqCount(IrqType.MSI)).isZero();
        assertThat(dev.irqCount(IrqType.MSIX)).isEqualTo(4);
    }

    @Test
    void magicReadsAtAnyWidthAndIgnoresWrites() {
        assertThat(read(0, 4)).isEqualTo(0x45524e43L);
        assertThat(read(0, 1)).isEqualTo((long) 'C');
        assertThat(read(1, 1)).isEqualTo((long) 'N');
        assertThat(read(2, 2)).isEqualTo(0x4552);
        assertThat(read(1, 3)).isEqualTo(0x45524e);
        write(0, 4, 0);
        write(2, 1, 0);
        assertThat(read(0, 4)).isEqualTo(MAGIC);
        write(4, 4, 0xdeadbeefL);
        assertThat(read(0, 8)).isEqualTo(0xdeadbeef_45524e43L);
    }

    @Test
    void scratchRegisterKeepsWhatIsWritten() {
        write(4, 4, 0x11223344);
        assertThat(read(4, 4)).isEqualTo(0x11223344);
        write(6, 1, 0xaa);
        assertThat(read(4, 4)).isEqualTo(0x11aa3344);
        write(3, 2, 0xffff); // straddles magic and scratch
        assertThat(read(0, 8)).isEqualTo(0x11aa33ff_45524e43L);
    }

    @Test
    void raiseUsesMsixWhenItHasAnEventfdElseIntx() {
        irqs.msixEventfds.add(2);
        write(REG_RAISE, 4, 2);
        write(REG_RAISE, 4, 1);
        write(REG_RAISE, 4, 0xffff_ffffL);
        write(REG_RAISE, 1, 2);
        write(REG_RAISE + 1, 1, 0); // partial write: value 0, no eventfd for 0
        assertThat(irqs.raised).containsExactly("MSIX:2", "INTX:0", "INTX:0", "MSIX:2", "INTX:0");
        assertThat(read(REG_RAISE, 4)).isZero();
    }

    @Test
    void nothingIsRaisedOrMovedWhenDetached() {
        dev.detach();
        write(REG_RAISE, 4, 0);
        write(REG_DMA_LEN, 4, 16);
        write(REG_DMA_CMD, 4, 1);
        assertThat(irqs.raised).isEmpty();
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_FAULT);
    }

    void fillGuest(long iova, int length) {
        for (int i = 0; i < length; i++) {
            memory.ram.set(ValueLayout.JAVA_BYTE, iova - IOVA + i, (byte) i);
        }
    }

    void assertIncremented(long iova, int length) {
        for (int i = 0; i < length; i++) {
            assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, iova - IOVA + i)).as("byte %d", i).isEqualTo((byte) (i + 1));
        }
    }

    @Test
    void dmaAddsOneToEachByteAndRaisesVectorZero() {
        irqs.msixEventfds.add(0);
        fillGuest(IOVA + 0x100, 300);
        write(REG_DMA_ADDR, 8, IOVA + 0x100);
        write(REG_DMA_LEN, 4, 300);
        write(REG_DMA_CMD, 4, DMA_CMD_INCREMENT);
        assertIncremented(IOVA + 0x100, 300);
        assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, 0x100 + 300)).isZero(); // one past the end: untouched
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_OK);
        assertThat(irqs.raised).containsExactly("MSIX:0");
        assertThat(memory.dirty).singleElement().satisfies(d -> assertThat(d).containsExactly(IOVA + 0x100, 300));
        assertThat(read(REG_DMA_ADDR, 8)).isEqualTo(IOVA + 0x100);
        assertThat(read(REG_DMA_LEN, 4)).isEqualTo(300);
        assertThat(read(REG_DMA_CMD, 4)).isZero();
    }

    @Test
    void oneWideWriteSetsLengthThenStartsTheCommand() {
        fillGuest(IOVA, 64);
        write(REG_DMA_ADDR, 4, IOVA);
        write(REG_DMA_LEN, 8, 1L << 32 | 64);
        assertIncremented(IOVA, 64);
        assertThat(irqs.raised).containsExactly("INTX:0"); // vector 0 has no eventfd
    }

    @Test
    void dmaAcrossMappingsWithoutFdUsesCopies() {
        memory.direct = false;
        fillGuest(IOVA + 4096, 1000);
        write(REG_DMA_ADDR, 8, IOVA + 4096);
        write(REG_DMA_LEN, 4, 1000);
        write(REG_DMA_CMD, 4, 1);
        assertIncremented(IOVA + 4096, 1000);
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_OK);
    }

    @Test
    void dmaOfOneMebibyteWorksAndOneMoreByteIsTooLong() {
        write(REG_DMA_ADDR, 8, IOVA);
        write(REG_DMA_LEN, 4, DMA_MAX + 1);
        write(REG_DMA_CMD, 4, 1);
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_TOO_LONG);
        assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, 0)).isZero();
        assertThat(irqs.raised).hasSize(1); // completion is signalled either way

        write(REG_DMA_LEN, 4, DMA_MAX);
        write(REG_DMA_CMD, 4, 1);
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_OK);
        assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, DMA_MAX - 1)).isEqualTo((byte) 1);
        assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, DMA_MAX)).isZero();

        write(REG_DMA_LEN, 4, 0xffff_ffffL);
        write(REG_DMA_CMD, 4, 1);
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_TOO_LONG);
    }

    @Test
    void dmaToUnmappedAddressesFaults() {
        for (long addr : new long[] {0, IOVA - 1, IOVA + RAM - 8, 0xffff_ffff_ffff_fff0L, Long.MIN_VALUE}) {
            for (boolean direct : new boolean[] {true, false}) {
                memory.direct = direct;
                write(REG_DMA_ADDR, 8, addr);
                write(REG_DMA_LEN, 4, 16);
                write(REG_DMA_CMD, 4, 1);
                assertThat(read(REG_DMA_STATUS, 4)).as("0x%x", addr).isEqualTo(DMA_FAULT);
            }
        }
        write(REG_DMA_ADDR, 8, IOVA);
        write(REG_DMA_CMD, 4, 1);
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_OK);
        write(REG_DMA_STATUS, 4, 7); // read-only
        assertThat(read(REG_DMA_STATUS, 4)).isEqualTo(DMA_OK);
    }

    @Test
    void otherCommandsDoNothing() {
        write(REG_DMA_ADDR, 8, IOVA);
        write(REG_DMA_LEN, 4, 16);
        write(REG_DMA_CMD, 4, 2);
        write(REG_DMA_CMD, 4, 0x101);
        assertThat(irqs.raised).isEmpty();
        assertThat(memory.ram.get(ValueLayout.JAVA_BYTE, 0)).isZero();
    }

    @Test
    void writeCounterCountsEveryWriteAndIsReadOnly() {
        write(REG_SCRATCH, 4, 1);
        write(0x200, 1, 1);
        write(0x1000, 8, 1); // MSI-X table: dropped, still a write to BAR 0
        write(REG_WRITE_COUNT, 4, 0);
        assertThat(read(REG_WRITE_COUNT, 4)).isEqualTo(4);
        bar0.read(0, MemorySegment.ofArray(new byte[8]));
        assertThat(read(REG_WRITE_COUNT, 4)).isEqualTo(4);
    }

    @Test
    void reservedAndMsixTableReadZero() {
        write(0x28, 8, -1L);
        write(0x0c, 4, -1L);
        write(0x1000, 8, -1L);
        assertThat(read(0x28, 8)).isZero();
        assertThat(read(0x0c, 4)).isZero();
        assertThat(read(0x1000, 8)).isZero();
        assertThat(read(0x1ff8, 8)).isZero();
    }

    @Test
    void pbaShowsPendingVectors() {
        assertThat(read(MSIX_PBA_OFFSET, 8)).isZero();
        irqs.msixPending.add(1);
        irqs.msixPending.add(3);
        assertThat(read(MSIX_PBA_OFFSET, 8)).isEqualTo(0b1010);
        assertThat(read(MSIX_PBA_OFFSET, 1)).isEqualTo(0b1010);
        assertThat(read(MSIX_PBA_OFFSET + 1, 1)).isZero();
        assertThat(read(MSIX_PBA_OFFSET - 4, 8)).isEqualTo(0b1010L << 32);
        write(MSIX_PBA_OFFSET, 8, 0);
        assertThat(read(MSIX_PBA_OFFSET, 8)).isEqualTo(0b1010);
    }

    @Test
    void scratchArrayTakesBulkAccesses() {
        byte[] data = new byte[SCRATCH_ARRAY_END - SCRATCH_ARRAY];
        new Random(1).nextBytes(data);
        bar0.write(SCRATCH_ARRAY, MemorySegment.ofArray(data));
        byte[] back = new byte[data.length];
        bar0.read(SCRATCH_ARRAY, MemorySegment.ofArray(back));
        assertThat(back).isEqualTo(data);
        write(0xfff, 1, 0x5a);
        assertThat(read(0xffc, 8)).isEqualTo(0x5aL << 24 | read(0xffc, 3));
    }

    @Test
    void oneAccessSpanningRegistersScratchAndMsixSpace() {
        byte[] all = new byte[(int) BAR0_SIZE];
        java.util.Arrays.fill(all, (byte) 0x77);
        bar0.write(0, MemorySegment.ofArray(all)); // also writes raise (0x77777777) and dma_cmd (not 1)
        byte[] back = new byte[(int) BAR0_SIZE];
        bar0.read(0, MemorySegment.ofArray(back));
        MemorySegment b = MemorySegment.ofArray(back);
        assertThat(b.get(ValueLayout.JAVA_INT_UNALIGNED, REG_MAGIC)).isEqualTo(MAGIC);
        assertThat(b.get(ValueLayout.JAVA_INT_UNALIGNED, REG_SCRATCH)).isEqualTo(0x77777777);
        assertThat(b.get(ValueLayout.JAVA_INT_UNALIGNED, REG_RAISE)).isZero();
        assertThat(b.get(ValueLayout.JAVA_INT_UNALIGNED, REG_WRITE_COUNT)).isEqualTo(1);
        assertThat(back[0xff]).isZero();
        assertThat(back[0x100]).isEqualTo((byte) 0x77);
        assertThat(back[0xfff]).isEqualTo((byte) 0x77);
        assertThat(back[0x1000]).isZero();
        assertThat(irqs.raised).containsExactly("INTX:0");
    }

    @Test
    void everyWidthAtEveryOffsetIsAccepted() {
        irqs.msixEventfds.add(0);
        Random random = new Random(7);
        for (int offset = 0; offset < BAR0_SIZE; offset++) {
            for (int width = 1; width <= 8 && offset + width <= BAR0_SIZE; width++) {
                write(offset, width, random.nextLong());
                read(offset, width);
            }
        }
        assertThat(read(0, 4)).isEqualTo(MAGIC);
    }

    @Test
    void resetZeroesRegistersButNotBar2() {
        write(REG_SCRATCH, 4, 5);
        write(REG_DMA_ADDR, 8, 0x1234);
        write(REG_DMA_LEN, 4, DMA_MAX + 1);
        write(REG_DMA_CMD, 4, 1);
        write(0x400, 4, 9);
        bar2.write(100, MemorySegment.ofArray(new byte[] {1, 2, 3}));
        byte[] cmd = {6, 0};
        dev.configSpace().write(4, MemorySegment.ofArray(cmd));
        assertThat(dev.configSpace().busMasterEnabled()).isTrue();

        dev.reset();
        assertThat(read(0, 4)).isEqualTo(MAGIC);
        for (int reg : new int[] {REG_SCRATCH, REG_DMA_ADDR, REG_DMA_ADDR + 4, REG_DMA_LEN, REG_DMA_STATUS,
                REG_WRITE_COUNT, 0x400}) {
            assertThat(read(reg, 4)).as("0x%x", reg).isZero();
        }
        assertThat(dev.configSpace().busMasterEnabled()).isFalse();
        byte[] back = new byte[3];
        bar2.read(100, MemorySegment.ofArray(back));
        assertThat(back).containsExactly(1, 2, 3);
    }

    @Test
    void bar2IsTheMemfdAndTakesLargeAccesses() throws Exception {
        byte[] data = new byte[3 << 20];
        new Random(3).nextBytes(data);
        bar2.write(1 << 20, MemorySegment.ofArray(data));
        byte[] back = new byte[data.length];
        bar2.read(1 << 20, MemorySegment.ofArray(back));
        assertThat(back).isEqualTo(data);

        // What the client maps is the same memory.
        Region r2 = region(2);
        MemorySegment mapped = LibC.mmapShared(r2.mmapFd(), r2.mmapOffset(), r2.size(), LibC.PROT_READ | LibC.PROT_WRITE);
        try {
            assertThat(mapped.asSlice(1 << 20, 16).toArray(ValueLayout.JAVA_BYTE))
                    .containsExactly(java.util.Arrays.copyOf(data, 16));
            mapped.set(ValueLayout.JAVA_LONG_UNALIGNED, (4L << 20) - 8, 0x0102030405060708L);
        } finally {
            LibC.munmap(mapped);
        }
        MemorySegment last = MemorySegment.ofArray(new byte[8]);
        bar2.read((4L << 20) - 8, last);
        assertThat(last.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(0x0102030405060708L);
    }

    @Test
    void closeReleasesTheMemfdAndLaterAccessesAreHarmless() {
        int fd = region(2).mmapFd();
        dev.close();
        assertThat(LibC.isOpen(fd)).isFalse();
        MemorySegment dst = MemorySegment.ofArray(new byte[] {9, 9, 9, 9});
        bar2.read(0, dst);
        assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).containsOnly(0);
        bar2.write(0, MemorySegment.ofArray(new byte[4]));
        write(REG_RAISE, 4, 0);
        dev.reset();
        dev.close();
    }
}
