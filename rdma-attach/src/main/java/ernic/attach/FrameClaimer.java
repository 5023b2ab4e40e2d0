package ernic.attach;

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

    /**
     * The guest posted RX buffers and frames waiting in its queue for in-process frames went into them: the
     * queue has room again. An endpoint that stopped sending for lack of room sends what it can now, instead
     * of waiting for its next timer or the guest's next frame. Called only from the RX doorbell and RX queue
     * enable, never from {@code queueForGuest}, so frames queued here do not call it again.
     */
    default void guestQueueDrained() {
    }
}
