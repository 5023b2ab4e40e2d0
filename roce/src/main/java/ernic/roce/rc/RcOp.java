package ernic.roce.rc;

import ernic.roce.IbOpcode;

/**
 * The operations an RC send queue carries (rdma-core's {@code ibv_wr_opcode}), each with the IBTA opcode of its
 * single-packet form, from which {@link IbOpcode#packet} cuts longer messages.
 */
public enum RcOp {
    SEND(IbOpcode.RC_SEND_ONLY),
    SEND_WITH_IMM(IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE),
    SEND_WITH_INV(IbOpcode.RC_SEND_ONLY_WITH_INVALIDATE),
    RDMA_WRITE(IbOpcode.RC_RDMA_WRITE_ONLY),
    RDMA_WRITE_WITH_IMM(IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE),
    RDMA_READ(IbOpcode.RC_RDMA_READ_REQUEST),
    ATOMIC_CMP_AND_SWP(IbOpcode.RC_CMP_SWAP),
    ATOMIC_FETCH_AND_ADD(IbOpcode.RC_FETCH_ADD);

    /** The opcode of a one-packet message of this operation. */
    public final IbOpcode only;

    RcOp(IbOpcode only) {
        this.only = only;
    }

    /** A READ or an atomic: answered with data, and bounded in flight by max_rd_atomic. */
    public boolean readOrAtomic() {
        return this == RDMA_READ || atomic();
    }

    public boolean atomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** May ask for a solicited event (the SE bit): a SEND of any kind or an RDMA WRITE with immediate. */
    public boolean mayBeSolicited() {
        return this == SEND || this == SEND_WITH_IMM || this == SEND_WITH_INV || this == RDMA_WRITE_WITH_IMM;
    }

    /** Carries a payload from the requester (SEND and WRITE kinds). */
    public boolean carriesPayload() {
        return !readOrAtomic();
    }
}
