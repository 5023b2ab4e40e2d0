package ernic.ionic.eth;

import java.lang.foreign.MemorySegment;

/** An in-process endpoint that may take a frame before it goes on (S3, P4). Called on the device thread. */
@FunctionalInterface
public interface FrameClaimer {
    /** True when the endpoint consumed {@code frame}; {@code frame} is valid only during the call. */
    boolean claim(MemorySegment frame);

    /**
     * Every frame of one TX doorbell has been offered: an endpoint that answers per batch rather than per
     * frame (a TCP receiver acknowledging a burst once, as GRO does) answers now.
     */
    default void endOfBatch() {
    }
}
