package ernic.ionic.eth;

import java.lang.foreign.MemorySegment;

/**
 * The program every frame between the guest and the TAP goes through (the P4 engine's Ethernet hook), after
 * the in-process endpoints had their chance to claim it. Ports as in docs/p4.md: the TAP is {@link #TAP}, the
 * guest {@link #GUEST}. A frame may leave as several frames (its own output, then clones and multicast copies, in
 * the order the program made them): the caller sends each {@link #output()} before it asks for the {@link #next()}.
 * Called on the device thread.
 */
public interface FrameFilter {
    int TAP = 0, GUEST = 1, DROP = -1;

    /**
     * Runs {@code frame}, which came from {@code from}. Returns where its first output goes ({@link #TAP},
     * {@link #GUEST}), or {@link #DROP} when nothing of it leaves; that output is then {@link #output()}.
     */
    int filter(MemorySegment frame, int from);

    /**
     * Where the next output of the frame the last {@link #filter} ran goes, or {@link #DROP} when there is no more;
     * that output is then {@link #output()}.
     */
    int next();

    /** The frame to send, in native memory; valid until the next call of {@link #filter} or {@link #next}. */
    MemorySegment output();
}
