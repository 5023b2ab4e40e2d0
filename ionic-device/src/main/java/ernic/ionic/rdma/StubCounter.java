package ernic.ionic.rdma;

import ernic.counters.Counter;

/**
 * The RDMA resource commands answered as stubs under {@code --backend none} ({@link RdmaLif#stubResources}),
 * by opcode, under {@code rdma.stub.}; zero in every other mode.
 */
public enum StubCounter implements Counter {
    CREATE_CQ(V1.ADMIN_CREATE_CQ), DESTROY_CQ(V1.ADMIN_DESTROY_CQ),
    CREATE_QP(V1.ADMIN_CREATE_QP), MODIFY_QP(V1.ADMIN_MODIFY_QP),
    DESTROY_QP(V1.ADMIN_DESTROY_QP),
    /** Answered BAD_INDEX: a stub keeps no QP whose attributes it could report. */
    QUERY_QP(V1.ADMIN_QUERY_QP),
    CREATE_MR(V1.ADMIN_CREATE_MR), DESTROY_MR(V1.ADMIN_DESTROY_MR),
    CREATE_AH(V1.ADMIN_CREATE_AH), DESTROY_AH(V1.ADMIN_DESTROY_AH);

    private static final StubCounter[] ALL = values();

    final int opcode;

    StubCounter(int opcode) {
        this.opcode = opcode;
    }

    /** The stubbed command of an admin opcode, or null for one that runs as usual (the STATS commands, NOOP). */
    static StubCounter of(int opcode) {
        for (StubCounter c : ALL) {
            if (c.opcode == opcode) {
                return c;
            }
        }
        return null;
    }
}
