package ernic.vfiouser.server;

import ernic.vfiouser.pci.PciConfigSpace;

import java.util.List;

/**
 * What the server framework serves of a device's PCI function: its config space and the BAR regions behind it.
 * A BAR is declared twice, by its size in the config space and by the region that answers its accesses; the two
 * must agree (same sizes, no BAR without a region, no region without a BAR), or the guest would map a BAR whose
 * accesses nothing answers.
 */
public record PciFunction(PciConfigSpace configSpace, List<Region> regions) {
    public PciFunction {
        regions = List.copyOf(regions);
        long[] served = new long[6];
        for (Region r : regions) {
            if (served[r.index()] != 0) {
                throw new IllegalArgumentException("BAR " + r.index() + " has two regions");
            }
            served[r.index()] = r.size();
        }
        for (int i = 0; i < served.length; i++) {
            if (served[i] != configSpace.barSize(i)) {
                throw new IllegalArgumentException("BAR " + i + " is " + configSpace.barSize(i)
                        + " bytes in the config space and " + served[i] + " bytes as a region");
            }
        }
    }
}
