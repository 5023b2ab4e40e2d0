package ernic.ionic.trace;

import ernic.counters.Counter;

/** The RDMA trace's counters, under {@code rdma.trace.} (the server registers them with {@code --trace-rdma}). */
public enum TraceCounter implements Counter {
    /** Frames the writer thread put in the file. */
    FRAMES_WRITTEN,
    /** Frames lost: no free buffer when they came (the disk was slower than the traffic), or a failed write. */
    FRAMES_DROPPED,
    /** Buffers whose write to the file failed (their frames are in {@code frames_dropped}). */
    WRITE_ERRORS,
    /** Buffers handed to the writer thread (full, by the periodic flush, or at close). */
    FLUSHES
}
