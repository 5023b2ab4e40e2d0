/**
 * In-process targets: the other end of the guest's RDMA conversation, inside the server (the NVMe-oF
 * controller in {@code target.nvmeof}, the S3 store in {@code target.s3}). A target sees the guest only
 * through {@link ernic.ionic.target.HostMemory} and plugs into the data path as an end
 * ({@code ernic.ionic.rdma.End}); it depends on nothing else of the device, so it is tested with a byte
 * array standing in for guest memory.
 */
package ernic.ionic.target;
