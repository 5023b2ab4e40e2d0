package ernic.nvmeof;

import java.lang.foreign.MemorySegment;

/**
 * What a {@link HostQueue} needs of the host QP it is bound to (supplied by {@link NvmeofAttachment}): deliver a response
 * capsule into the host's next posted receive, and tear the connection down. Device thread only.
 */
public interface HostConnection {
    /**
     * Sends the response capsule {@code cqe} (16 bytes, valid only during the call). With {@code invalidate}
     * the response goes as SEND_INV carrying {@code rkey}, as the keyed SGL asked, which saves the host its
     * LOCAL_INV.
     */
    void respond(MemorySegment cqe, boolean invalidate, int rkey);

    /**
     * The controller of this queue failed (a transfer refused on the host's key, keep-alive expiry, a
     * malformed capsule): disconnect this QP's connection (DREQ), as nvmet-rdma does; the host's error
     * recovery reconnects. No response is sent for the commands that were in flight.
     */
    void disconnect();
}
