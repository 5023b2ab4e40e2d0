package ernic.attach;

import java.lang.foreign.MemorySegment;

/**
 * How an in-process target (the NVMe-oF controller, the S3 store) reaches the initiator's memory: by the
 * rkey and address the initiator handed it, as a remote peer's RDMA READ ({@link #fromHost}) and WRITE
 * ({@link #toHost}) would. The device resolves the key in the guest's MR table, checked for remote access
 * and bounds; key 0 (which would reach all of guest memory) moves nothing. Tests stand a byte array in for
 * guest memory. This is all a target sees of the guest.
 */
public interface HostMemory {
    /** Copies {@code dst.byteSize()} bytes at {@code addr} under {@code rkey} into {@code dst}; false when refused. */
    boolean fromHost(int rkey, long addr, MemorySegment dst);

    /** Copies {@code src} to {@code addr} under {@code rkey}; false when refused. */
    boolean toHost(int rkey, long addr, MemorySegment src);
}
