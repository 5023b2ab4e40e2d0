package ernic.vfiouser.sample;

import ernic.vfiouser.pci.PciConfigSpace;
import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.server.PciFunction;
import ernic.vfiouser.server.Region;
import ernic.vfiouser.server.RegionHandler;
import ernic.vfiouser.server.VfioUserDevice;
import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Messages.SparseArea;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * A small device to show how the library is used and to give QEMU and tests a first target. It
 * wears the PCI id of libvfio-user's gpio sample (ACCES PCI-IDIO-16, 494f:0dc8), so nothing binds a
 * real driver to it.
 *
 * <p>BAR 0, 8 KiB, 32-bit memory; little-endian registers, any access width 1..8 at any offset:
 * <pre>
 * 0x000 u32 RO magic 0x45524e43
 * 0x004 u32 RW scratch
 * 0x008 u32 W  raise: writing v raises MSI-X vector v, or INTx 0 when vector v has no eventfd
 * 0x010 u64 RW dma_addr
 * 0x018 u32 RW dma_len
 * 0x01c u32 W  dma_cmd: 1 = add 1 to each of the dma_len bytes at dma_addr, then raise vector 0
 * 0x020 u32 RO dma_status: 0 ok, 1 fault (unmapped), 2 too long (over 1 MiB)
 * 0x024 u32 RO number of writes to BAR 0
 * 0x100 .. 0xfff  scratch bytes
 * 0x1000 MSI-X table (QEMU serves it; reads 0 here), 0x1800 MSI-X PBA (QEMU forwards reads here)
 * </pre>
 * Write-only registers read 0; a partial write to one of them acts with the unwritten bytes as 0.
 * Reserved offsets read 0 and ignore writes. In a write that covers several registers, the stored
 * values land first and the actions run after, in address order (so one u64 write at 0x18 sets
 * dma_len and starts the command).
 *
 * <p>BAR 2, 4 MiB, 64-bit prefetchable memory backed by a memfd the client may map. Reset leaves
 * its contents alone.
 */
public final class SampleDevice implements VfioUserDevice, AutoCloseable {
    public static final int VENDOR_ID = 0x494f, DEVICE_ID = 0x0dc8, CLASS_CODE = 0xff0000;
    public static final int MSIX_VECTORS = 4;
    public static final long BAR0_SIZE = 8 * 1024, BAR2_SIZE = 4L * 1024 * 1024;
    public static final long MSIX_TABLE_OFFSET = 0x1000, MSIX_PBA_OFFSET = 0x1800;

    // BAR 0 registers.
    public static final int REG_MAGIC = 0x00, REG_SCRATCH = 0x04, REG_RAISE = 0x08, REG_DMA_ADDR = 0x10,
            REG_DMA_LEN = 0x18, REG_DMA_CMD = 0x1c, REG_DMA_STATUS = 0x20, REG_WRITE_COUNT = 0x24;
    public static final int SCRATCH_ARRAY = 0x100, SCRATCH_ARRAY_END = 0x1000;
    public static final int MAGIC = 0x45524e43;
    public static final int DMA_CMD_INCREMENT = 1;
    public static final int DMA_OK = 0, DMA_FAULT = 1, DMA_TOO_LONG = 2;
    public static final int DMA_MAX = 1 << 20;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    /** The register block 0x000..0x0ff: what it reads, and which bytes a write may store. */
    private static final int REG_BLOCK = SCRATCH_ARRAY;
    private static final byte[] STORED = new byte[REG_BLOCK];

    static {
        for (int r : new int[] {REG_SCRATCH, REG_DMA_LEN}) {
            java.util.Arrays.fill(STORED, r, r + 4, (byte) 0xff);
        }
        java.util.Arrays.fill(STORED, REG_DMA_ADDR, REG_DMA_ADDR + 8, (byte) 0xff);
    }

    private final PciConfigSpace config;
    private final Arena arena = Arena.ofShared();
    /** Registers 0x000..0x0ff as they read; write-only registers stay 0. */
    private final MemorySegment regs = arena.allocate(REG_BLOCK, 8);
    private final MemorySegment scratch = arena.allocate(SCRATCH_ARRAY_END - SCRATCH_ARRAY, 8);
    /** Bytes of one write-only register as written, the rest 0. */
    private final MemorySegment action = arena.allocate(4, 4);
    private final int bar2Fd;
    private final MemorySegment bar2;
    private final PciFunction pci;
    private DeviceContext context;
    private boolean closed;

    public SampleDevice() throws ErrnoException {
        config = PciConfigSpace.builder()
                .vendorId(VENDOR_ID).deviceId(DEVICE_ID)
                .subsystemVendorId(VENDOR_ID).subsystemId(DEVICE_ID)
                .classCode(CLASS_CODE)
                .interruptPin(1)
                .memoryBar(0, BAR0_SIZE, false, false)
                .memoryBar(2, BAR2_SIZE, true, true)
                .powerManagement()
                .msix(new PciConfigSpace.Msix(MSIX_VECTORS, 0, MSIX_TABLE_OFFSET, 0, MSIX_PBA_OFFSET))
                .pciExpress(3, 1)
                .build();
        int fd = LibC.memfd("sample-bar2", BAR2_SIZE);
        try {
            bar2 = LibC.mmapShared(fd, 0, BAR2_SIZE, LibC.PROT_READ | LibC.PROT_WRITE);
        } catch (ErrnoException e) {
            LibC.close(fd);
            arena.close();
            throw e;
        }
        bar2Fd = fd;
        pci = new PciFunction(config, List.of(
                Region.of(0, BAR0_SIZE, new Bar0()),
                new Region(2, BAR2_SIZE, true, true, new Bar2(), bar2Fd, 0, List.of(new SparseArea(0, BAR2_SIZE)))));
        reset();
    }

    @Override
    public PciFunction pci() {
        return pci;
    }

    @Override
    public void attach(DeviceContext context) {
        this.context = context;
    }

    @Override
    public void reset() {
        config.reset();
        if (closed) {
            return;
        }
        regs.fill((byte) 0);
        scratch.fill((byte) 0);
        regs.set(U32, REG_MAGIC, MAGIC);
    }

    @Override
    public void detach() {
        context = null;
        reset();
    }

    /** Unmaps and closes BAR 2; accesses after this read 0 and drop writes. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LibC.munmap(bar2);
        LibC.close(bar2Fd);
        arena.close();
    }

    private final class Bar0 implements RegionHandler {
        @Override
        public void read(long offset, MemorySegment dst) {
            if (closed) {
                dst.fill((byte) 0);
                return;
            }
            for (long done = 0; done < dst.byteSize(); ) {
                long at = offset + done;
                long left = dst.byteSize() - done;
                MemorySegment part;
                if (at < REG_BLOCK) {
                    part = dst.asSlice(done, Math.min(left, REG_BLOCK - at));
                    MemorySegment.copy(regs, at, part, 0, part.byteSize());
                } else if (at < SCRATCH_ARRAY_END) {
                    part = dst.asSlice(done, Math.min(left, SCRATCH_ARRAY_END - at));
                    MemorySegment.copy(scratch, at - SCRATCH_ARRAY, part, 0, part.byteSize());
                } else if (at >= MSIX_PBA_OFFSET && at < MSIX_PBA_OFFSET + 8) {
                    part = dst.asSlice(done, Math.min(left, MSIX_PBA_OFFSET + 8 - at));
                    readPba(at - MSIX_PBA_OFFSET, part);
                } else {
                    long end = at < MSIX_PBA_OFFSET ? MSIX_PBA_OFFSET : BAR0_SIZE;
                    part = dst.asSlice(done, Math.min(left, end - at));
                    part.fill((byte) 0);
                }
                done += part.byteSize();
            }
        }

        @Override
        public void write(long offset, MemorySegment src) {
            if (closed) {
                return;
            }
            regs.set(U32, REG_WRITE_COUNT, regs.get(U32, REG_WRITE_COUNT) + 1);
            if (offset < REG_BLOCK) {
                long n = Math.min(src.byteSize(), REG_BLOCK - offset);
                writeRegisters((int) offset, src.asSlice(0, n));
            }
            long from = Math.max(offset, SCRATCH_ARRAY);
            long to = Math.min(offset + src.byteSize(), SCRATCH_ARRAY_END);
            if (from < to) {
                MemorySegment.copy(src, from - offset, scratch, from - SCRATCH_ARRAY, to - from);
            }
            // Writes to the MSI-X table and PBA (QEMU keeps them) and to reserved space are dropped.
        }
    }

    /** The PBA as the interrupt layer sees it: bit v set while vector v is pending. */
    private void readPba(long at, MemorySegment dst) {
        long bits = 0;
        DeviceContext c = context;
        if (c != null) {
            for (int v = 0; v < MSIX_VECTORS; v++) {
                if (c.interrupts().pending(IrqType.MSIX, v)) {
                    bits |= 1L << v;
                }
            }
        }
        for (long i = 0; i < dst.byteSize(); i++) {
            dst.set(ValueLayout.JAVA_BYTE, i, (byte) (bits >>> 8 * (at + i)));
        }
    }

    private void writeRegisters(int offset, MemorySegment src) {
        int end = offset + (int) src.byteSize();
        for (int i = offset; i < end; i++) {
            byte b = src.get(ValueLayout.JAVA_BYTE, i - offset);
            regs.set(ValueLayout.JAVA_BYTE, i, (byte) (regs.get(ValueLayout.JAVA_BYTE, i) & ~STORED[i] | b & STORED[i]));
        }
        if (offset < REG_RAISE + 4 && end > REG_RAISE) {
            raise(actionValue(REG_RAISE, offset, src));
        }
        if (offset < REG_DMA_CMD + 4 && end > REG_DMA_CMD) {
            dmaCommand(actionValue(REG_DMA_CMD, offset, src));
        }
    }

    /** The u32 a write gives register {@code reg}: the bytes it covers, 0 elsewhere. */
    private int actionValue(int reg, int offset, MemorySegment src) {
        action.fill((byte) 0);
        int from = Math.max(reg, offset);
        int to = Math.min(reg + 4, offset + (int) src.byteSize());
        MemorySegment.copy(src, from - offset, action, from - reg, to - from);
        return action.get(U32, 0);
    }

    private void raise(int vector) {
        DeviceContext c = context;
        if (c == null) {
            return;
        }
        // The vector is a guest value: only 0..3 can have an eventfd; anything else falls back to INTx.
        if (vector >= 0 && vector < MSIX_VECTORS && c.interrupts().hasEventfd(IrqType.MSIX, vector)) {
            c.interrupts().trigger(IrqType.MSIX, vector);
        } else {
            c.interrupts().trigger(IrqType.INTX, 0);
        }
    }

    private void dmaCommand(int cmd) {
        if (cmd != DMA_CMD_INCREMENT) {
            return;
        }
        regs.set(U32, REG_DMA_STATUS, increment(regs.get(U64, REG_DMA_ADDR), Integer.toUnsignedLong(regs.get(U32, REG_DMA_LEN))));
        raise(0);
    }

    /** Adds 1 to each byte of guest memory at [addr, addr + len); returns the dma_status. */
    private int increment(long addr, long len) {
        if (len > DMA_MAX) {
            return DMA_TOO_LONG;
        }
        DeviceContext c = context;
        if (c == null) {
            return DMA_FAULT;
        }
        if (len == 0) {
            return DMA_OK;
        }
        GuestMemory memory = c.memory();
        // Inside one mapping: work in place. Across mappings: copy out and back.
        MemorySegment direct = memory.writableSegment(addr, len);
        if (direct != null) {
            addOne(direct);
            memory.markDirty(addr, len);
            return DMA_OK;
        }
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment buf = tmp.allocate(len);
            if (!memory.read(addr, buf)) {
                return DMA_FAULT;
            }
            addOne(buf);
            return memory.write(addr, buf) ? DMA_OK : DMA_FAULT;
        }
    }

    private static void addOne(MemorySegment s) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (s.get(ValueLayout.JAVA_BYTE, i) + 1));
        }
    }

    private final class Bar2 implements RegionHandler {
        @Override
        public void read(long offset, MemorySegment dst) {
            if (closed) {
                dst.fill((byte) 0);
                return;
            }
            MemorySegment.copy(bar2, offset, dst, 0, dst.byteSize());
        }

        @Override
        public void write(long offset, MemorySegment src) {
            if (closed) {
                return;
            }
            MemorySegment.copy(src, 0, bar2, offset, src.byteSize());
        }
    }
}
