package ernic.ionic;

import ernic.model.InProcessBinding;
import ernic.model.IonicDriverModel;
import ernic.vfiouser.server.InProcessContext;
import ernic.vfiouser.server.IrqType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

/**
 * An {@link IonicDevice} driven by the independent driver model ({@code ionic-driver-model}, written from the
 * C headers) through its in-process binding, wired by vfio-user-protocol's {@link InProcessContext}: the model's
 * region accesses go to the device's region handlers and config space, its memfd guest RAM is mapped as a DMA_MAP
 * would, and the device's MSI-X triggers reach the model. There is no event loop: the device does its work inside
 * each access, and timers are ticked by the test. Every MSI-X is also counted here, for tests that ask how often a
 * vector fired in all (the model's wait takes the count).
 */
final class ModelGuest implements AutoCloseable {
    static final long RAM_IOVA = IonicDriverModel.RAM_IOVA;

    final IonicDevice dev;
    final InProcessContext context;
    final InProcessBinding binding;
    final IonicDriverModel drv;
    private final long[] fired;

    /** Attaches {@code dev} to a guest with {@code ramBytes} of RAM, and turns on memory space and bus mastering. */
    ModelGuest(IonicDevice dev, long ramBytes) {
        this.dev = dev;
        this.fired = new long[dev.irqCount(IrqType.MSIX)];
        this.context = new InProcessContext(dev, this::msix);
        try {
            this.binding = InProcessBinding.builder(fired.length, RAM_IOVA, ramBytes)
                    .regions(context::read, context::write)
                    .progress(() -> { }) // the device works inside each access
                    .reset(dev::reset)
                    .ram(context::map)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        context.attach();
        try {
            this.drv = new IonicDriverModel(binding);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void msix(int vector) {
        fired[vector]++;
        binding.signal(vector);
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

    /** Detaches the device and frees the guest RAM. */
    @Override
    public void close() {
        context.close();
        drv.close();
    }
}
