/**
 * The in-process S3 store: HTTP/1.1 with SigV4 over the {@link ernic.ipstack} TCP endpoint on the guest's Ethernet,
 * buckets and objects in memory, and the {@code x-amz-rdma-token} extension that moves an object's bytes by rkey
 * through {@link ernic.attach.HostMemory}. Depends on ernic.ipstack, ernic.attach, ernic.counters and ernic.common
 * only (docs/s3.md).
 */
package ernic.s3;
