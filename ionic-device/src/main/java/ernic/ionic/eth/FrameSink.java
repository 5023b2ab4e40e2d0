package ernic.ionic.eth;

import java.lang.foreign.MemorySegment;

/** Where transmitted frames go (the server plugs a TAP here). Called on the device thread. */
@FunctionalInterface
public interface FrameSink {
    /** Sends one frame; {@code frame} is valid only during the call. */
    void transmit(MemorySegment frame);
}
