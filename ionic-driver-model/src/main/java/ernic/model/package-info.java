/**
 * The guest-driver model: a Java stand-in for {@code ionic.ko} ({@link ernic.model.IonicDriverModel}) and, in
 * {@link ernic.model.rdma}, for {@code ionic_rdma.ko} and rdma-core's libionic, written from the Linux headers
 * and the bring-up reference, never from the device's classes.
 *
 * <p>The model reaches a device only through a {@link ernic.model.DeviceBinding}: {@link ernic.model.SocketBinding}
 * over the real vfio-user socket (what QEMU does), or {@link ernic.model.InProcessBinding} on a device's region
 * handlers in the same JVM (for the device's own unit tests). Either way the model owns the guest RAM (a memfd).
 *
 * <p>Who may depend on it: tests and benchmarks (integration-tests; ionic-device's tests). It depends on
 * vfio-user-protocol's client, wire and sys packages only: nothing of the device ({@code ernic.ionic..}) and
 * nothing of the vfio-user server ({@code ernic.vfiouser.server..}); {@code ModelArchitectureTest} holds it to that.
 */
package ernic.model;
