/**
 * The P4 engine's hooks on the device: the Ethernet frame filter ({@link ernic.ionic.eth.FrameFilter}), the WQE
 * pipeline ({@link ernic.ionic.rdma.WqeFilter}) and device commands 70-72, as far as {@code --p4-guest-scope}
 * allows. The engine core (module p4-engine, {@code ernic.p4}) knows nothing of ionic; this package is where the two meet.
 * Everything runs on the device thread.
 */
package ernic.ionic.p4hook;
