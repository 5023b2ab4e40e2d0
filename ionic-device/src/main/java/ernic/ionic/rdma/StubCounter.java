package ernic.ionic.rdma;

import ernic.counters.Counter;

/**
 * The RDMA resource commands answered as stubs under {@code --backend none} ({@link RdmaLif#stubResources}),
 * by opcode, under {@code rdma.stub.}; zero in every other mode.
 */
public enum StubCounter implements Counter {
    CREATE_CQ("create_cq", V1.ADMIN_CREATE_CQ), DESTROY_CQ("destroy_cq", V1.ADMIN_DESTROY_CQ),
    CREATE_QP("create_qp", V1.ADMIN_CREATE_QP), MODIFY_QP("modify_qp", V1.ADMIN_MODIFY_QP),
    DESTROY_QP("destroy_qp", V1.ADMIN_DESTROY_QP),
    /** Answered BAD_INDEX: a stub keeps no QP whose attributes it could report. */
    QUERY_QP("query_qp", V1.ADMIN_QUERY_QP),
    CREATE_MR("create_mr", V1.ADMIN_CREATE_MR), DESTROY_MR("destroy_mr", V1.ADMIN_DESTROY_MR),
    CREATE_AH("create_ah", V1.ADMIN_CREATE_AH), DESTROY_AH("destroy_ah", V1.ADMIN_DESTROY_AH);

    private static final StubCounter[] ALL = values();

    private final String key;
    final int opcode;

    StubCounter(String key, int opcode) {
        this.key = key;
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

    @Override
    public String key() {
        return key;
    }
}
