package ernic.vfiouser.wire;

/**
 * A message that breaks the protocol. With {@code fatal} the connection is closed; otherwise the
 * request gets an error reply with {@code errno}.
 */
public final class ProtocolException extends Exception {
    private final int errno;
    private final boolean fatal;

    public ProtocolException(int errno, String reason) {
        this(errno, reason, false);
    }

    public ProtocolException(int errno, String reason, boolean fatal) {
        super(reason, null, false, false);
        this.errno = errno;
        this.fatal = fatal;
    }

    public int errno() {
        return errno;
    }

    public boolean fatal() {
        return fatal;
    }
}
