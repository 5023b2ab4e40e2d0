package ernic.ionic.rdma;

/**
 * The WQE header the data path hands the P4 program ({@link WqeFilter}): 48 bytes, every field big-endian, as a
 * P4 header type {@code ernic_wqe_t} would extract it (docs/p4.md, "The WQE header"). Bytes 0 to 36 describe the
 * WQE and are read-only for the program (a change is ignored: every region is named by the WQE, never by the
 * program); bytes 37 to 40 are zero on input and select an extern on output.
 */
public final class WqeHeader {
    public static final int SIZE = 48;
    /** ernic_wqe_t field offsets (field widths in bits: 8, 8, 16, 32, 32, 32, 32, 32, 64, 32, 8, 8, 8, 8, 8, 56). */
    public static final int OPCODE = 0;       // bit<8>  opcode: ionic_v1 op (0 SEND, 1 SEND_INV, 2 SEND_IMM, 3 READ, 4 WRITE, 5 WRITE_IMM, 6 CS, 7 FA)
    public static final int QP_TYPE = 1;      // bit<8>  qp_type: 0 RC, 1 UC, 3 UD
    public static final int FLAGS = 2;        // bit<16> flags: the WQE's base.flags (FENCE 1, SOL 2, INL 4, SIG 8)
    public static final int QPN = 4;          // bit<32> qpn: the sending QP
    public static final int DEST_QPN = 8;     // bit<32> dest_qpn: RC/UC the QP's destination, UD the WQE's
    public static final int LENGTH = 12;      // bit<32> length: payload bytes (READ: SGE total; atomics: 8)
    public static final int LKEY = 16;        // bit<32> lkey: the first SGE's key (0: inline data or no SGE)
    public static final int RKEY = 20;        // bit<32> rkey: READ, WRITE, atomics (else 0)
    public static final int REMOTE_VA = 24;   // bit<64> remote_va: READ, WRITE, atomics (else 0)
    public static final int IMM = 32;         // bit<32> imm_data: SEND_IMM and WRITE_IMM immediate, SEND_INV rkey
    public static final int DEST_LOCAL = 36;  // bit<8>  dest_local: 1 when the destination is a QP of this guest
    public static final int EXTERN = 37;      // bit<8>  extern: out, 0 none, 1 fp8 accumulate, 2 format convert
    public static final int SRC_FORMAT = 38;  // bit<8>  src_format: out, a FORMAT_ code
    public static final int DST_FORMAT = 39;  // bit<8>  dst_format: out, a FORMAT_ code
    public static final int EXTERN_FLAGS = 40; // bit<8> extern_flags: out, bit 0 = non-saturating
    // bytes 41..47: bit<56> rsvd, zero

    public static final int EXTERN_NONE = 0, EXTERN_FP8_ACCUMULATE = 1, EXTERN_FORMAT_CONVERT = 2;
    public static final int FORMAT_E4M3 = 1, FORMAT_E5M2 = 2, FORMAT_FP16 = 3, FORMAT_BF16 = 4, FORMAT_FP32 = 5;
    public static final int FLAG_NON_SATURATING = 1;
    /** The header type a program declares to have the data path run it on WQEs. */
    public static final String TYPE_NAME = "ernic_wqe_t";

    private WqeHeader() {
    }
}
