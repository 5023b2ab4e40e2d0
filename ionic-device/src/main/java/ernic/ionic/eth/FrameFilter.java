package ernic.ionic.eth;

import java.lang.foreign.MemorySegment;

/**
 * The program every frame between the guest and the TAP goes through (the P4 engine's Ethernet hook), after
 * the in-process endpoints had their chance to claim it. Ports as in docs/p4.md: the TAP is {@link #TAP}, the
 * guest {@link #GUEST}. Called on the device thread.
 */
public interface FrameFilter {
    int TAP = 0, GUEST = 1, DROP = -1;

    /**
     * Runs {@code frame}, which came from {@code from}. Returns where it goes ({@link #TAP}, {@link #GUEST}) or
     * {@link #DROP}; the frame to send is then {@link #output()}.
     */
    int filter(MemorySegment frame, int from);

    /** The frame the last {@link #filter} sent, in native memory; valid until the next call. */
    MemorySegment output();
}
