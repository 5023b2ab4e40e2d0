package ernic.nvmeof;

import ernic.counters.Counter;

/**
 * The target's side of the guest's RDMA traffic, registered under {@code rdma.} (as {@code rdma.target.*}, the names
 * they had when the data path counted them itself).
 */
public enum PathCounter implements Counter {
    /** CM MADs the guest sent to the target's address, and those it dropped (not CM, malformed). */
    MADS("target.mads"), MADS_DROPPED("target.mads_dropped"),
    /** Replies of the target's CM delivered into the guest's GSI QP. */
    MADS_SENT("target.mads_sent"),
    /** Command capsules handed to the target; response capsules delivered; responses held for a receive. */
    CAPSULES("target.capsules"), RESPONSES("target.responses"), RESPONSES_HELD("target.responses_held"),
    /** Responses dropped: the guest's QP was gone, in ERROR, or never posted a receive. */
    DROPPED("target.dropped");

    private final String key;

    PathCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
