package ernic.ionic.regs;

/** enum ionic_cmd_opcode (ionic_if.h). */
public final class Opcode {
    public static final int NOP = 0;
    public static final int IDENTIFY = 1, INIT = 2, RESET = 3, GETATTR = 4, SETATTR = 5;
    public static final int PORT_IDENTIFY = 10, PORT_INIT = 11, PORT_RESET = 12, PORT_GETATTR = 13, PORT_SETATTR = 14;
    public static final int LIF_IDENTIFY = 20, LIF_INIT = 21, LIF_RESET = 22, LIF_GETATTR = 23, LIF_SETATTR = 24,
            LIF_SETPHC = 25;
    public static final int RX_MODE_SET = 30, RX_FILTER_ADD = 31, RX_FILTER_DEL = 32;
    public static final int Q_IDENTIFY = 39, Q_INIT = 40, Q_CONTROL = 41;
    /** The P4 engine's control surface (ernic's own, docs/p4.md): read, write table entries, everything. */
    public static final int P4_READ = 70, P4_TABLE_WRITE = 71, P4_CONTROL = 72;
    public static final int RDMA_RESET_LIF = 50, RDMA_CREATE_EQ = 51, RDMA_CREATE_CQ = 52, RDMA_CREATE_ADMINQ = 53;
    public static final int VF_GETATTR = 60, VF_SETATTR = 61, VF_CTRL = 62;
    public static final int DISCOVER_CMB = 80;
    public static final int FW_DOWNLOAD = 252, FW_CONTROL = 253;

    private Opcode() {}
}
