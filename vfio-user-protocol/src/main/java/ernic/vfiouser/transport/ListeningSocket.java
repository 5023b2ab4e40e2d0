package ernic.vfiouser.transport;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * A UNIX socket bound to its path and listening, before there is any channel or event loop: a server opens it first,
 * so that its socket file exists and a client's connect succeeds (the connection waits in the backlog) while the
 * rest of the server starts. An {@link FdServerChannel} made with it takes it over; until then {@link #close} removes
 * it. Binding replaces a stale socket file (one nobody listens on) and refuses to replace anything else; the file gets
 * {@code mode} (0600 unless the owner asks for group access).
 */
public final class ListeningSocket implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ListeningSocket.class);

    private final int fd;
    private final String path;
    private boolean takenOver;

    private ListeningSocket(int fd, String path) {
        this.fd = fd;
        this.path = path;
    }

    /** A non-blocking socket bound to {@code path}, with {@code mode}, listening. */
    public static ListeningSocket open(String path, int mode) throws IOException {
        removeStaleSocket(path);
        int fd = LibC.socketUnixStream(true);
        try {
            bind(fd, path, mode);
        } catch (IOException | RuntimeException e) {
            LibC.close(fd);
            throw e;
        }
        return new ListeningSocket(fd, path);
    }

    /** Binds {@code fd} to {@code path}, sets the file's mode and listens; a file left by a failed step is removed. */
    static void bind(int fd, String path, int mode) throws ErrnoException {
        LibC.bindUnix(fd, path);
        try {
            LibC.chmod(path, mode);
            LibC.listen(fd, BACKLOG);
        } catch (ErrnoException e) {
            LibC.unlink(path);
            throw e;
        }
    }

    /** Pending connections the kernel keeps: one client is served at a time, a few may wait. */
    static final int BACKLOG = 4;

    /** Removes a socket file nobody listens on; refuses to touch a live socket or a non-socket. */
    static void removeStaleSocket(String p) throws IOException {
        Path file = Path.of(p);
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Object kind = Files.getAttribute(file, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (((Integer) kind & 0170000) != 0140000) {
            throw new IOException(p + " exists and is not a socket; not replacing it");
        }
        int probe = LibC.socketUnixStream(false);
        try {
            if (LibC.connectUnix(probe, p) == 0) {
                throw new IOException(p + " is in use by a running server");
            }
        } finally {
            LibC.close(probe);
        }
        LOG.info("replacing stale socket {}", p);
        LibC.unlink(p);
    }

    public String path() {
        return path;
    }

    /** The fd, for the channel that takes the socket over (and from then on closes it). */
    int takeOver() {
        if (takenOver) {
            throw new IllegalStateException("the listening socket " + path + " has a channel already");
        }
        takenOver = true;
        return fd;
    }

    /** Closes the socket and removes its file, unless a channel has taken it over (the channel does that then). */
    @Override
    public void close() {
        if (!takenOver) {
            takenOver = true;
            LibC.close(fd);
            LibC.unlink(path);
        }
    }
}
