package ernic.ionic.base;

/** Handles doorbells of queue types the Ethernet side does not own (the RDMA types 5..9 of {@link RdmaIdentity}). */
@FunctionalInterface
public interface DoorbellHandler {
    /** True when the type was handled. */
    boolean doorbell(int page, int qtype, long value);
}
