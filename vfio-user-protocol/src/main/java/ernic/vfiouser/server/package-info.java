/**
 * The device-agnostic vfio-user server: one client on one socket, served on one event loop (the
 * device thread), answering every command QEMU's vfio-user-pci sends for a
 * {@link ernic.vfiouser.server.VfioUserDevice}. Its counters ({@link ernic.vfiouser.server.VfioCounter})
 * are plain longs of that thread. Depends on {@code wire}, {@code transport}, {@code pci}, {@code sys}
 * and the {@code counters} module. Devices (ionic-device, {@code sample}) and the server module depend
 * on it; it depends on no device.
 */
package ernic.vfiouser.server;
