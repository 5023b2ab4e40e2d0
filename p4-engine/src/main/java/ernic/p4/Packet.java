package ernic.p4;

/**
 * One frame going through the engine: its bytes, the header state the parser fills, the action data of
 * the entry being executed and the flags the primitives set. Preallocated once; nothing is allocated per
 * frame.
 */
final class Packet {
    /** The largest frame the engine takes (a jumbo frame with room to spare). */
    static final int MAX_FRAME = 16384;
    /** Room for headers a program adds in front of the payload. */
    static final int HEADROOM = 1024;

    final Phv phv;
    final Externs externs;
    final byte[] in = new byte[MAX_FRAME];
    int inLen;
    /** Bytes of {@link #in} the parser has consumed; the payload starts here. */
    int cursor;
    long[] args;
    byte[][] wideArgs;
    /** exit: the rest of this pipeline is skipped. */
    boolean exit;
    /** An assert or assume failed: the frame is dropped. */
    boolean assertFailed;
    /** truncate(n): at most n bytes leave, or -1. */
    int truncateTo = -1;
    /**
     * simple_switch's packet length register: the frame's length, plus the bytes of headers add_header made valid,
     * minus those remove_header made invalid; egress starts with standard_metadata.packet_length set to it.
     */
    long lengthRegister;
    /** clone_*_pkt_to_egress: the mirror session (-1: none) and the field list id (0: none). */
    int cloneSession = -1;
    int cloneFieldList;
    /** resubmit, recirculate, generate_digest: the field or learn list id, 0 when not asked for. */
    int resubmitList;
    int recirculateList;
    int learnList;
    /** Microseconds since the engine's time origin when the frame entered (what meters read). */
    long micros;
    /**
     * The frame as it leaves: the headers the deparser emitted, {@link #headLen} bytes, then the payload, which stays
     * in {@link #in} from {@link #payloadAt} until something asks for the whole output ({@link #completeOutput}):
     * most frames leave with their payload untouched, and copying it is most of the cost of a large frame.
     */
    final byte[] out = new byte[MAX_FRAME + HEADROOM];
    int outLen;
    int headLen;
    int payloadAt;
    /** The payload is in {@link #out} too (or there is none). */
    boolean payloadOut;
    /** {@link #in} holds the frame as it came in (no recirculation or clone has replaced it). */
    boolean inIsInput;

    Packet(Layout layout, Externs externs) {
        this.phv = new Phv(layout);
        this.externs = externs;
    }

    /** Starts a frame: copies its bytes and resets every header and flag. */
    void start(byte[] frame, int off, int len) {
        System.arraycopy(frame, off, in, 0, len);
        started(len);
    }

    /** Starts a frame of {@code len} bytes already copied into {@link #in}. */
    void started(int len) {
        inLen = len;
        lengthRegister = len;
        cursor = 0;
        exit = false;
        assertFailed = false;
        truncateTo = -1;
        outLen = 0;
        headLen = 0;
        payloadOut = true;
        cloneSession = -1;
        cloneFieldList = 0;
        resubmitList = 0;
        recirculateList = 0;
        learnList = 0;
        phv.reset();
    }

    /** Copies the payload after the emitted headers, once: {@link #out} then holds the whole output. */
    void completeOutput() {
        if (!payloadOut) {
            int n = outLen - headLen; // negative when truncate cut into the headers
            if (n > 0) {
                System.arraycopy(in, payloadAt, out, headLen, n);
            }
            payloadOut = true;
        }
    }

    /**
     * True when the output is, byte for byte, the frame as it came in: the headers emitted are the bytes they were
     * parsed from and the payload follows them where it was (truncate cut nothing).
     */
    boolean outputIsInput() {
        if (!inIsInput || outLen != inLen || headLen != payloadAt) {
            return false;
        }
        // A loop, not Arrays.equals: headers are a few dozen bytes, too few for its vectorised compare to pay.
        for (int i = 0; i < headLen; i++) {
            if (out[i] != in[i]) {
                return false;
            }
        }
        return true;
    }
}
