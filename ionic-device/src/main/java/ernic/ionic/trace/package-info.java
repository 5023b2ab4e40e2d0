/**
 * The RDMA trace's file side: {@link ernic.ionic.trace.PcapTrace} keeps classic libpcap records (frames that
 * {@link ernic.roce.RoceFrame} lays out) in preallocated buffers that a writer thread of its own puts in the file.
 * Knows nothing of the device: {@code ernic.ionic.rdma} fills the frames from what its data path carries out (see
 * docs/monitoring.md, "Seeing the traffic").
 */
package ernic.ionic.trace;
