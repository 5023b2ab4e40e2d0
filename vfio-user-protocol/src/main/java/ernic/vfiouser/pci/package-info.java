/**
 * A PCI type-0 configuration space and its builder, as the guest's PCI core and QEMU see it through
 * the config region. Depends on nothing of the project; the server and devices use it.
 */
package ernic.vfiouser.pci;
