package ernic.it.fuzz;

import ernic.ionic.IonicDevice;
import ernic.model.DeviceBinding;
import ernic.model.InProcessBinding;
import ernic.model.IonicDriverModel;
import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.DmaSpace;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.server.Region;
import ernic.vfiouser.sys.LibC;
import io.netty.channel.EventLoop;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * An {@link IonicDevice} under the driver model's in-process binding, as ionic-device's tests wire it: region
 * accesses go to the device's handlers (checked against the region as the vfio-user server checks them), the
 * model's memfd guest RAM is mapped into a {@link DmaSpace} as a DMA_MAP would map it, MSI-X reaches the model.
 * No event loop: the device works inside each access, and the fuzzer ticks its timers.
 */
final class FuzzGuest implements DeviceContext, Interrupts, AutoCloseable {
    static final long RAM_IOVA = IonicDriverModel.RAM_IOVA;

    final IonicDevice dev;
    final DmaSpace dma = new DmaSpace(4);
    final InProcessBinding binding;
    final IonicDriverModel drv;
    private final int vectors;

    FuzzGuest(IonicDevice dev, long ramBytes) throws IOException {
        this.dev = dev;
        this.vectors = dev.irqCount(IrqType.MSIX);
        this.binding = InProcessBinding.builder(vectors, RAM_IOVA, ramBytes)
                .regions(this::read, this::write)
                .progress(() -> { })
                .reset(dev::reset)
                .ram(this::map)
                .build();
        dev.attach(this);
        IonicDriverModel d;
        try {
            d = new IonicDriverModel(binding);
        } catch (IOException | RuntimeException e) {
            close(null);
            throw e;
        }
        this.drv = d;
    }

    private void map(long iova, long size, int fd, MemorySegment memory) {
        try {
            int own = LibC.open("/proc/self/fd/" + fd, LibC.O_RDWR | LibC.O_CLOEXEC);
            dma.map(iova, size, 0, 3, own);
        } catch (Exception e) {
            throw new IllegalStateException("mapping the model's guest RAM", e);
        }
    }

    /** The guest's own mistake (an access outside a region): refused before the device sees it, as the server does. */
    static final class Refused extends RuntimeException {
        Refused(String m) {
            super(m, null, false, false);
        }
    }

    private Region region(int index, long offset, long length) {
        for (Region r : dev.regions()) {
            if (r.index() == index) {
                if (offset < 0 || length > r.size() - offset) {
                    throw new Refused("access of " + length + " at " + offset + " outside region " + index);
                }
                return r;
            }
        }
        throw new Refused("no region " + index);
    }

    private int config(long offset, long length) {
        int size = dev.configSpace().size();
        if (offset < 0 || length > size - offset) {
            throw new Refused("config access of " + length + " at " + offset);
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
        if (type == IrqType.MSIX && vector >= 0 && vector < vectors) {
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

    /** Detaches the device (back to power-on) and frees the guest RAM. */
    @Override
    public void close() {
        close(drv);
    }

    private void close(IonicDriverModel d) {
        dev.detach();
        dma.unmapAll();
        if (d != null) {
            d.close();
        } else {
            binding.close();
        }
    }
}
