/**
 * The attachment interfaces: all an in-process peer (the NVMe-oF target, the S3 store) sees of the device.
 * {@link ernic.attach.HostMemory}: guest memory by rkey; {@link ernic.attach.Attachment} and
 * {@link ernic.attach.GuestQps}: a peer on the RDMA side; {@link ernic.attach.FrameClaimer}: a host on the guest's
 * Ethernet segment. The device implements them and names no peer; the peers depend on nothing else of it, so they
 * are tested with a byte array standing in for guest memory.
 */
package ernic.attach;
