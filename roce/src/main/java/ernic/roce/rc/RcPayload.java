package ernic.roce.rc;

/**
 * Where a transmitted packet's payload is, by reference (the engine copies no bytes): a range of the requester's
 * message ({@link Kind#MESSAGE}: the work request id and the offset in its message, gathered by
 * {@link RcRequesterHost#gather}) or of the responder's memory ({@link Kind#MEMORY}: a READ response, read by
 * rkey and VA). A reused, mutable value, valid only during {@link RcPacketSink#transmit}.
 */
public final class RcPayload {
    /** What the payload range refers to. */
    public enum Kind { NONE, MESSAGE, MEMORY }

    public Kind kind = Kind.NONE;
    /** MESSAGE: the work request and the byte offset in its message. */
    public long wrId, offset;
    /** MEMORY: the rkey and virtual address of the first byte. */
    public int rkey;
    public long va;
    /** Bytes of payload (0 for NONE). */
    public int length;

    void none() {
        kind = Kind.NONE;
        length = 0;
    }

    void message(long wrId, long offset, int length) {
        kind = Kind.MESSAGE;
        this.wrId = wrId;
        this.offset = offset;
        this.length = length;
    }

    void memory(int rkey, long va, int length) {
        kind = Kind.MEMORY;
        this.rkey = rkey;
        this.va = va;
        this.length = length;
    }
}
