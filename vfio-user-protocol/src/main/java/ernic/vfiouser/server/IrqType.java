package ernic.vfiouser.server;

/** The VFIO PCI interrupt indices. */
public enum IrqType {
    INTX, MSI, MSIX, ERR, REQ;

    public int index() {
        return ordinal();
    }

    public static IrqType of(int index) {
        return index >= 0 && index < values().length ? values()[index] : null;
    }
}
