package ernic.ipstack;

import java.lang.foreign.MemorySegment;

/**
 * Where an in-process endpoint's frames to the guest go (the Ethernet side's receive injection). The segment is the
 * endpoint's one transmit buffer, valid only during the call: a sink that queues the frame copies it.
 */
@FunctionalInterface
public interface GuestLink {
    void send(MemorySegment frame);

    /**
     * Frames the sink takes now without dropping one. The endpoint sends data segments only while room is
     * left, so a full window never overruns the guest's queue: a dropped segment costs a retransmit.
     */
    default int room() {
        return Integer.MAX_VALUE;
    }
}
