/**
 * What the Ethernet and RDMA sides share: the DMA engine into guest memory, the handler interfaces
 * through which {@code eth} hands on what it does not own (doorbells of the RDMA queue types, the RDMA
 * bootstrap device commands 50..53), and the RDMA part of LIF_IDENTIFY (queue types and table sizes).
 * It serves no one structure of its own. Anyone in the module may depend on it; it depends on no
 * other ionic package.
 */
package ernic.ionic.base;
