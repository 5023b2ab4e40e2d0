package ernic.ipstack;

/**
 * The application side of one TCP connection (HTTP). Called on the device thread while the endpoint
 * processes a frame or a tick; it reads and writes through its {@link TcpConnection}.
 */
public interface StreamHandler {
    /** New bytes (or the peer's FIN) are in the connection's receive buffer. */
    void onReadable();

    /** The send buffer has room again after the peer acknowledged data. */
    void onWritable();

    /** The connection is gone (closed, reset or timed out); nothing may be written any more. */
    void onClosed();
}
