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
    /**
     * A frame that came in as a memory segment ({@code P4Engine.process(MemorySegment, int)}) stays there: its bytes
     * are copied into {@link #in} as the program reads them ({@link #need}), so a payload nobody reads is never
     * copied. {@link #inFilled} bytes of {@link #in} hold the frame; {@link #source} is null when all do.
     */
    java.lang.foreign.MemorySegment source;
    int inFilled;
    /** {@link #in} and {@link #out} as segments (a segment-to-segment copy costs less than an array's). */
    final java.lang.foreign.MemorySegment inSegment = java.lang.foreign.MemorySegment.ofArray(in);
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
    /**
     * The headers the parser extracted, in order, while they lie end to end from the frame's first byte to
     * {@link #parsedEnd}: packable headers (see {@link HeaderType}), each extracted once, no advance between them
     * ({@link #asParsed} false otherwise). Their fields as extracted are in {@link Phv#parsedVal}. A deparser that
     * emits exactly these, with those values, would write the frame's bytes as they were: it does not write them.
     */
    static final int MAX_PARSED = 32;
    final int[] parsed = new int[MAX_PARSED];
    int parsedCount;
    int parsedEnd;
    boolean asParsed;
    /** Microseconds since the engine's time origin when the frame entered (what meters read). */
    long micros;
    /**
     * The frame as it leaves: the headers the deparser emitted, {@link #headLen} bytes, then the payload, which stays
     * in the input from {@link #payloadAt} until something asks for the whole output ({@link #completeOutput}):
     * most frames leave with their payload untouched, and copying it is most of the cost of a large frame. (When
     * the deparser finds the headers unchanged it emits none: the whole input, from 0, is then the "payload".)
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
        filled(len);
        started(len);
    }

    /** Starts a frame that stays in {@code frame} until the program reads its bytes. */
    void start(java.lang.foreign.MemorySegment frame) {
        source = frame;
        inFilled = 0;
        started((int) frame.byteSize());
    }

    /** The first {@code len} bytes of {@link #in} hold the frame (written there whole). */
    void filled(int len) {
        source = null;
        inFilled = len;
    }

    /** Makes the frame's bytes up to {@code upTo} (at most {@link #inLen}) readable in {@link #in}. */
    void need(int upTo) {
        if (upTo > inFilled) {
            // Up to the next eight bytes: a header's bytes and no more (an Ethernet header, two longs), so a
            // program that reads one header does not pay for the cache line after it.
            int to = Math.min(inLen, (upTo + 7) & ~7);
            int at = inFilled;
            if (to - at <= SMALL_COPY) {
                // Eight bytes at a time: for the headers' few dozen bytes this costs less than the set-up of
                // MemorySegment.copy (measured: about 3 ns against 8 for 64 bytes).
                for (; at + 8 <= to; at += 8) {
                    LONG.set(in, at, source.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, at));
                }
                for (; at < to; at++) {
                    in[at] = source.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at);
                }
            } else {
                java.lang.foreign.MemorySegment.copy(source, at, inSegment, at, to - at);
            }
            inFilled = to;
        }
    }

    /** Up to this many bytes {@link #need} copies eight at a time; more go through MemorySegment.copy. */
    private static final int SMALL_COPY = 128;
    /** A long in a byte array in the machine's order, as {@code JAVA_LONG_UNALIGNED} reads it from a segment. */
    private static final java.lang.invoke.VarHandle LONG = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            long[].class, java.nio.ByteOrder.nativeOrder());

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
        parsedCount = 0;
        parsedEnd = 0;
        asParsed = true;
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
            need(inLen);
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
        need(headLen);
        // A loop, not Arrays.equals: headers are a few dozen bytes, too few for its vectorised compare to pay.
        for (int i = 0; i < headLen; i++) {
            if (out[i] != in[i]) {
                return false;
            }
        }
        return true;
    }
}
