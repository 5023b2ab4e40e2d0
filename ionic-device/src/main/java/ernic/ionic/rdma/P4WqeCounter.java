package ernic.ionic.rdma;

import ernic.counters.Counter;

/** The P4 engine's WQE hook (prefix {@code p4.wqe.}): WQEs run, dropped, and each extern's operations. */
public enum P4WqeCounter implements Counter {
    /** Send WQEs the program ran on. */
    WQES("wqes"),
    /** WQEs the program dropped (completed with the local protection error). */
    DROPPED("dropped"),
    /** RDMA WRITEs turned into an fp8 accumulate, and the fp8 values they added. */
    FP8_ACCUMULATE_OPS("fp8_accumulate.ops"), FP8_ACCUMULATE_VALUES("fp8_accumulate.values"),
    /** RDMA WRITEs turned into a format conversion, and the values they converted. */
    FORMAT_CONVERT_OPS("format_convert.ops"), FORMAT_CONVERT_VALUES("format_convert.values"),
    /**
     * Extern selections refused: not a plain RDMA WRITE, formats the extern does not take, a length that is not
     * a whole number of values.
     */
    EXTERN_BAD_REQUEST("extern.bad_request"),
    /** Extern operands refused: a destination on another node or in-process target, key 0, a bad rkey or range. */
    EXTERN_BAD_OPERAND("extern.bad_operand");

    private final String key;

    P4WqeCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
