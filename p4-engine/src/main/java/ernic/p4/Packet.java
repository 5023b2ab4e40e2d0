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
    final byte[] out = new byte[MAX_FRAME + HEADROOM];
    int outLen;

    Packet(Layout layout, Externs externs) {
        this.phv = new Phv(layout);
        this.externs = externs;
    }

    /**
     * Whether {@code index} is within an extern array or a header stack of {@code length} cells; an index outside is
     * counted, and the access it was for does nothing (a read gives 0 or the stack's scratch header).
     */
    boolean inBounds(long index, int length) {
        if (index < 0 || index >= length) {
            externs.counters.inc(P4Counter.OUT_OF_BOUNDS);
            return false;
        }
        return true;
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
        cloneSession = -1;
        cloneFieldList = 0;
        resubmitList = 0;
        recirculateList = 0;
        learnList = 0;
        phv.reset();
    }
}
