package ernic.vfiouser.server;

/** Raising the interrupts the client gave eventfds for. */
public interface Interrupts {
    /**
     * Raise vector {@code vector} of {@code type}. A masked vector latches its pending bit and fires
     * when unmasked; a vector with no eventfd is counted as lost. Returns true when it was signalled.
     */
    boolean trigger(IrqType type, int vector);

    /** True when the client has set an eventfd for this vector. */
    boolean hasEventfd(IrqType type, int vector);

    /** True when the vector's pending bit is set (masked while raised). */
    boolean pending(IrqType type, int vector);
}
