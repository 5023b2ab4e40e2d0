package ernic.roce.rc;

import java.lang.foreign.MemorySegment;

/** The requester's outside: its messages' local buffers and its completion queue. */
public interface RcRequesterHost {
    /**
     * Copies {@code length} bytes of work request {@code wrId}'s message, from {@code offset}, to {@code dst}.
     * The engine does not call it; the packet sink does, for an {@link RcPayload.Kind#MESSAGE} payload.
     */
    void gather(long wrId, long offset, MemorySegment dst, long dstOffset, int length);

    /** Places READ response data: {@code length} bytes of {@code src} at {@code offset} of {@code wrId}'s buffer. */
    void scatter(long wrId, long offset, MemorySegment src, long srcOffset, int length);

    /** The original remote value an atomic returned. Called before that atomic's completion. */
    void atomicResult(long wrId, long original);

    /** Work request {@code wrId} completed with {@code status}; called in the order the requests were posted. */
    void completed(long wrId, RcStatus status);
}
