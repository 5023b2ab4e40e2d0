/**
 * A small device on the server framework, to copy from and to test the framework with: registers,
 * a doorbell, DMA and MSI-X. Depends on {@code server}, {@code pci}, {@code wire} and {@code sys};
 * the server module may start it, nothing else depends on it.
 */
package ernic.vfiouser.sample;
