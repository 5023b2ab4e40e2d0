package ernic.it.fuzz;

import ernic.ionic.IonicDevice;
import ernic.model.InProcessBinding;
import ernic.model.IonicDriverModel;
import ernic.vfiouser.server.InProcessContext;
import ernic.vfiouser.server.IrqType;

import java.io.IOException;

/**
 * An {@link IonicDevice} under the driver model's in-process binding, wired as ionic-device's tests wire it, by
 * vfio-user-protocol's {@link InProcessContext}: region accesses go to the device's handlers (checked against the
 * region as the vfio-user server checks them; a guest's access outside one is {@link InProcessContext.Refused}), the
 * model's memfd guest RAM is mapped as a DMA_MAP would map it, MSI-X reaches the model. No event loop: the device
 * works inside each access, and the fuzzer ticks its timers.
 */
final class FuzzGuest implements AutoCloseable {
    static final long RAM_IOVA = IonicDriverModel.RAM_IOVA;

    final IonicDevice dev;
    final InProcessContext context;
    final InProcessBinding binding;
    final IonicDriverModel drv;

    FuzzGuest(IonicDevice dev, long ramBytes) throws IOException {
        this.dev = dev;
        this.context = new InProcessContext(dev, this::msix);
        this.binding = InProcessBinding.builder(dev.irqCount(IrqType.MSIX), RAM_IOVA, ramBytes)
                .regions(context::read, context::write)
                .progress(() -> { })
                .reset(dev::reset)
                .ram(context::map)
                .build();
        context.attach();
        IonicDriverModel d;
        try {
            d = new IonicDriverModel(binding);
        } catch (IOException | RuntimeException e) {
            close(null);
            throw e;
        }
        this.drv = d;
    }

    private void msix(int vector) {
        binding.signal(vector);
    }

    /** Detaches the device (back to power-on) and frees the guest RAM. */
    @Override
    public void close() {
        close(drv);
    }

    private void close(IonicDriverModel d) {
        context.close();
        if (d != null) {
            d.close();
        } else {
            binding.close();
        }
    }
}
