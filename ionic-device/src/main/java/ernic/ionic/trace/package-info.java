/**
 * The RDMA trace's file side: {@link ernic.ionic.trace.RoceFrame} builds one synthetic RoCEv2 frame
 * (Ethernet, IPv4, UDP 4791, BTH and its extension headers, payload, ICRC) into a byte array, and
 * {@link ernic.ionic.trace.PcapTrace} keeps classic libpcap records in preallocated buffers that a writer
 * thread of its own puts in the file. Knows nothing of the device: {@code ernic.ionic.rdma} fills the
 * frames from what its data path carries out (see docs/monitoring.md, "Seeing the traffic").
 */
package ernic.ionic.trace;
