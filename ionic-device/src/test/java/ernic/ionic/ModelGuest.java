package ernic.ionic;

import ernic.model.DeviceBinding;
import ernic.model.InProcessBinding;
import ernic.model.IonicDriverModel;
import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.DmaSpace;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.server.Region;
import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import io.netty.channel.EventLoop;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * An {@link IonicDevice} driven by the independent driver model ({@code ionic-driver-model}, written from the
 * C headers) through its in-process binding: the model's region accesses go to the device's region handlers
 * and config space, its memfd guest RAM is mapped into a {@link DmaSpace} as a DMA_MAP would, and the
 * device's MSI-X triggers reach the model. There is no event loop: the device does its work inside each
 * access, and timers are ticked by the test. Every MSI-X is also counted here, for tests that ask how often a
 * vector fired in all (the model's wait takes the count).
 */
final class ModelGuest implements DeviceContext, Interrupts, AutoCloseable {
    static final long RAM_IOVA = IonicDriverModel.RAM_IOVA;

    final IonicDevice dev;
    final DmaSpace dma = new DmaSpace(4);
    final InProcessBinding binding;
    final IonicDriverModel drv;
    private final long[] fired;

    /** Attaches {@code dev} to a guest with {@code ramBytes} of RAM, and turns on memory space and bus mastering. */
    ModelGuest(IonicDevice dev, long ramBytes) {
        this.dev = dev;
        this.fired = new long[dev.irqCount(IrqType.MSIX)];
        try {
            this.binding = InProcessBinding.builder(fired.length, RAM_IOVA, ramBytes)
                    .regions(this::read, this::write)
                    .progress(() -> { }) // the device works inside each access
                    .reset(dev::reset)
                    .ram(this::map)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        dev.attach(this);
        try {
            this.drv = new IonicDriverModel(binding);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The memfd the binding owns, mapped again on a fd of its own (DmaSpace takes its fd over). */
    private void map(long iova, long size, int fd, MemorySegment memory) {
        try {
            int own = LibC.open("/proc/self/fd/" + fd, LibC.O_RDWR | LibC.O_CLOEXEC);
            dma.map(iova, size, 0, 3, own);
        } catch (ErrnoException | ProtocolException e) {
            throw new IllegalStateException("mapping the model's guest RAM", e);
        }
    }

    private Region region(int index, long offset, long length) {
        for (Region r : dev.regions()) {
            if (r.index() == index) {
                if (offset < 0 || length > r.size() - offset) {
                    throw new IllegalArgumentException("access of " + length + " at " + offset + " outside region "
                            + index + " (" + r.size() + " bytes)");
                }
                return r;
            }
        }
        throw new IllegalArgumentException("no region " + index);
    }

    /** Config space's offset, checked against its size as the vfio-user server checks a region access. */
    private int config(long offset, long length) {
        int size = dev.configSpace().size();
        if (offset < 0 || length > size - offset) {
            throw new IllegalArgumentException("config access of " + length + " at " + offset);
        }
        return (int) offset;
    }

    private void read(int index, long offset, MemorySegment buf) {
        if (index == DeviceBinding.CONFIG) {
            dev.configSpace().read(config(offset, buf.byteSize()), buf);
        } else {
            region(index, offset, buf.byteSize()).handler().read(offset, buf);
        }
    }

    private void write(int index, long offset, MemorySegment buf) {
        if (index == DeviceBinding.CONFIG) {
            dev.configSpace().write(config(offset, buf.byteSize()), buf);
        } else {
            region(index, offset, buf.byteSize()).handler().write(offset, buf);
        }
    }

    /** Guest memory at {@code iova}, as the model sees it. */
    MemorySegment at(long iova, long length) {
        return drv.mem(iova, length);
    }

    /** A zeroed, page-aligned block of guest RAM. */
    long alloc(long bytes) {
        return drv.alloc(bytes);
    }

    /** How often MSI-X {@code vector} fired since the guest came up. */
    long count(int vector) {
        return fired[vector];
    }

    @Override
    public GuestMemory memory() {
        return dma;
    }

    @Override
    public Interrupts interrupts() {
        return this;
    }

    @Override
    public EventLoop eventLoop() {
        return null;
    }

    @Override
    public boolean trigger(IrqType type, int vector) {
        if (type == IrqType.MSIX && vector >= 0 && vector < fired.length) {
            fired[vector]++;
            binding.signal(vector);
        }
        return true;
    }

    @Override
    public boolean hasEventfd(IrqType type, int vector) {
        return true;
    }

    @Override
    public boolean pending(IrqType type, int vector) {
        return false;
    }

    /** Detaches the device and frees the guest RAM. */
    @Override
    public void close() {
        dev.detach();
        dma.unmapAll();
        drv.close();
    }
}
