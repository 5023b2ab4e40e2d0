package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.ScmRights;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;

/**
 * The inbound side of one vfio-user stream, for the server and the client alike: where the messages
 * begin and end, and which message gets the file descriptors of each read. The caller keeps the
 * bytes (a Netty buffer on the server, a native buffer in the client); this class keeps the stream
 * offsets and the fds not yet given to a message.
 *
 * <p>Which message do fds belong to? A sender passes fds with one sendmsg, that is one message. The
 * kernel's recvmsg on a stream socket may return bytes of earlier fd-less sends before that one, but
 * stops right after the send that carried the fds (or inside it, when the buffer is full). So the
 * fds of a read belong to the last message that starts within the bytes of that read: a message
 * starting inside the read and reaching its end. Fds no message can claim are closed. A header
 * whose size is below 16 or above the limit cannot be resynchronised: the stream is broken.
 */
public final class MessageStream {
    private static final Logger LOG = LoggerFactory.getLogger(MessageStream.class);

    /** The caller's bytes not yet cut, from the first one on. */
    public interface Buffered {
        /** The size field (unsigned) of the header that starts the buffered bytes. */
        long sizeField();

        /**
         * The whole message of {@code size} bytes at the start is cut: consume it. {@code fds} (never
         * null) are now the callee's. Returns false to stop cutting (the connection went).
         */
        boolean message(int size, int[] fds);
    }

    /** Fds that arrived with the stream bytes [start, end). */
    private record PendingFds(long start, long end, int[] fds) {}

    private final long maxMessageSize;
    /** Stream offset of the first byte not yet cut. */
    private long consumed;
    /** Stream offset just past the last byte received. */
    private long received;
    private final ArrayDeque<PendingFds> pendingFds = new ArrayDeque<>();

    /** @param maxMessageSize the largest whole message (header included) accepted */
    public MessageStream(long maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    /** One read of {@code n} bytes arrived, with {@code fds} (null or empty: none), which the stream now owns. */
    public void received(long n, int[] fds) {
        if (fds != null && fds.length > 0) {
            pendingFds.add(new PendingFds(received, received + n, fds));
        }
        received += n;
    }

    /** Bytes received and not yet cut. */
    public long buffered() {
        return received - consumed;
    }

    /**
     * Cuts every whole message at the start of {@code b}, each with its fds. Returns 0, or the size
     * of the incomplete message that starts the buffered bytes (so the caller can make room for it).
     *
     * @throws ProtocolException (fatal) for a size that cannot be resynchronised
     */
    public long cut(Buffered b) throws ProtocolException {
        while (buffered() >= Header.SIZE) {
            long size = b.sizeField();
            if (size < Header.SIZE || size > maxMessageSize) {
                throw new ProtocolException(LibC.EINVAL, "message size " + size + " outside ["
                        + Header.SIZE + ", " + maxMessageSize + "]", true);
            }
            if (buffered() < size) {
                return size;
            }
            int[] fds = claimFds(consumed, consumed + size);
            consumed += size;
            if (!b.message((int) size, fds)) {
                return 0;
            }
        }
        return 0;
    }

    /** The fds of the read in which the message [start, end) is the last to start; closes unclaimable ones. */
    private int[] claimFds(long start, long end) {
        while (!pendingFds.isEmpty()) {
            PendingFds p = pendingFds.peek();
            if (p.end <= start) {
                // No message started in that read and reached its end: nobody sent these fds.
                pendingFds.poll();
                LOG.warn("closing {} fd(s) that arrived with no message of their own", p.fds.length);
                ScmRights.closeAll(p.fds);
            } else if (p.start <= start && end >= p.end) {
                pendingFds.poll();
                return p.fds;
            } else {
                return VfioUserMessage.NO_FDS; // they belong to a later message in the same read
            }
        }
        return VfioUserMessage.NO_FDS;
    }

    /** The stream ends: closes every fd no message took. */
    public void close() {
        while (!pendingFds.isEmpty()) {
            ScmRights.closeAll(pendingFds.poll().fds);
        }
    }
}
