package ernic.vfiouser.server;

import ernic.vfiouser.pci.PciConfigSpace;

import java.util.List;

/**
 * What a device gives the server framework: its PCI config space, its BAR regions, its interrupt
 * counts, and what to do on attach, reset and detach. Every method is called on the server's event
 * loop (the device thread), so a device needs no locks.
 */
public interface VfioUserDevice {
    /** The PCI function: config space and BAR regions, fixed when the device is made. */
    PciFunction pci();

    /** The config space served as region 7 (VFIO_PCI_CONFIG_REGION_INDEX). */
    default PciConfigSpace configSpace() {
        return pci().configSpace();
    }

    /** The BAR regions (indices 0-5) the device implements; absent indices have size 0. */
    default List<Region> regions() {
        return pci().regions();
    }

    /**
     * Vectors per interrupt type: INTx, MSI, MSI-X, ERR, REQ (the VFIO PCI IRQ indices 0-4). By default what the
     * config space declares: one INTx line when it has an interrupt pin, the MSI-X table's vectors, no others.
     */
    default int irqCount(IrqType type) {
        PciConfigSpace config = configSpace();
        return switch (type) {
            case INTX -> config.interruptPin() != 0 ? 1 : 0;
            case MSIX -> config.msix() != null ? config.msix().tableSize() : 0;
            default -> 0;
        };
    }

    /** A client connected and negotiated: the device may now use guest memory and interrupts. */
    void attach(DeviceContext context);

    /** DEVICE_RESET: back to the power-on state; the client stays attached. */
    void reset();

    /**
     * The client went away: its memory and interrupts are gone, and the device must return to the
     * power-on state (the default does it with {@link #reset()}).
     */
    default void detach() {
        reset();
    }
}
