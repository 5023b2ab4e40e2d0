package ernic.roce.rc;

import java.lang.foreign.MemorySegment;

/** The responder's outside: memory by rkey, the receive queue and its completions. */
public interface RcResponderHost {
    /** Access bits a remote operation needs of a memory region. */
    int REMOTE_WRITE = 1, REMOTE_READ = 2, REMOTE_ATOMIC = 4;

    /** {@code [va, va + length)} is in the region of {@code rkey}, which grants {@code access}. */
    boolean checkAccess(int rkey, long va, long length, int access);

    /** Writes {@code length} bytes of {@code src} at {@code va} of {@code rkey}'s region (checked before). */
    void write(int rkey, long va, MemorySegment src, long srcOffset, int length);

    /**
     * Executes an atomic on the 8 bytes at {@code va} (checked before) and returns their original value:
     * compare-and-swap ({@code compareSwap}) or fetch-and-add of {@code swapAdd}.
     */
    long atomic(int rkey, long va, boolean compareSwap, long swapAdd, long compare);

    /** Makes the next posted receive the current one; false when none is posted. */
    boolean takeReceive();

    /** Bytes the current receive can hold. */
    long receiveCapacity();

    /** Places {@code length} bytes of {@code src} at {@code offset} of the current receive (checked before). */
    void receive(long offset, MemorySegment src, long srcOffset, int length);

    /** Invalidates {@code rkey} for a SEND with invalidate; false when it cannot be. */
    boolean invalidate(int rkey);

    /**
     * The current receive completed: {@code length} bytes (for a WRITE with immediate, the WRITE's length), the
     * immediate data or the invalidated rkey when the message carried one, and whether its last packet asked for
     * a solicited event (SE).
     */
    void receiveCompleted(RcStatus status, long length, boolean withImm, int imm, boolean withInv, int invRkey,
                          boolean solicited);

    /** The responder's QP went to the error state (a fatal NAK was sent). */
    void failed(RcStatus cause);
}
