package ernic.vfiouser.testing;

import ernic.vfiouser.pci.PciConfigSpace;

import static org.assertj.core.api.Assertions.assertThat;

/** What lspci and the kernel's PCI core read first from a device's config space, as the tests check it. */
public record PciIdentity(int vendor, int device, int subsystemVendor, int subsystem, int classCode) {
    /**
     * Asserts this identity in {@code cs}: vendor and device ID (0x00, 0x02), subsystem vendor and ID (0x2c, 0x2e),
     * the class code (the upper 24 bits at 0x08), and interrupt pin INTA (0x3d).
     */
    public void assertIn(PciConfigSpace cs) {
        assertThat(cs.readU16(0x00)).as("vendor").isEqualTo(vendor);
        assertThat(cs.readU16(0x02)).as("device").isEqualTo(device);
        assertThat(cs.readU16(0x2c)).as("subsystem vendor").isEqualTo(subsystemVendor);
        assertThat(cs.readU16(0x2e)).as("subsystem").isEqualTo(subsystem);
        assertThat(cs.readU32(0x08) >>> 8).as("class code").isEqualTo(classCode);
        assertThat(cs.readU8(0x3d)).as("interrupt pin").isEqualTo(1);
    }
}
