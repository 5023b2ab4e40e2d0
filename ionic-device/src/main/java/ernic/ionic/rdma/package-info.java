/**
 * The RDMA side, what {@code ionic_rdma} and libionic drive (ionic_fw.h, "fw abi v1"): the bootstrap
 * commands, event queues, the RDMA admin queue and its commands (CQ, QP, MR, AH lifecycle, QUERY_QP,
 * STATS), the local data path and, in a mesh, the remote one ({@code ernic.mesh}). May use
 * {@code base}, {@code layout}, {@code regs}, {@code fault} and {@code profile}; never {@code eth} nor
 * the root package. The root package, the server and in-process targets depend on it.
 */
package ernic.ionic.rdma;
