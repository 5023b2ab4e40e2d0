package ernic.nvmeof;

import ernic.counters.Counter;

/**
 * The target's side of the guest's RDMA traffic, registered under {@code rdma.} (as {@code rdma.target.*}, the names
 * they had when the data path counted them itself).
 */
public enum PathCounter implements Counter {
    /** CM MADs the guest sent to the target's address, and those it dropped (not CM, malformed). */
    MADS, MADS_DROPPED,
    /** Replies of the target's CM delivered into the guest's GSI QP. */
    MADS_SENT,
    /** Command capsules handed to the target; response capsules delivered; responses held for a receive. */
    CAPSULES, RESPONSES, RESPONSES_HELD,
    /** Responses dropped: the guest's QP was gone, in ERROR, or never posted a receive. */
    DROPPED;

    /** {@code target.} and the constant in lower case. */
    @Override
    public String key() {
        return "target." + Counter.super.key();
    }
}
