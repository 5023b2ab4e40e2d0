package ernic.vfiouser.client;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.ScmRights;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The client's connected UNIX stream socket in blocking mode, with the fds of SCM_RIGHTS, used
 * directly by the threads that call the client (no event loop). Sending and receiving each have
 * their own native buffer and msghdr: the send side is used under the client's send lock, the
 * receive side only by the thread that holds the client's reader role. Nothing here allocates per
 * message.
 */
final class ClientSocket implements AutoCloseable {
    static final int BUFFER_SIZE = 256 * 1024;
    private static final int SHUT_RDWR = 2, SO_RCVTIMEO = 20, POLLIN = 1;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SHUTDOWN = LINKER.downcallHandle(
            LINKER.defaultLookup().find("shutdown").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle SETSOCKOPT = LINKER.downcallHandle(
            LINKER.defaultLookup().find("setsockopt").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));

    private final int fd;
    /** Wakes the background reader out of poll when the client closes. */
    private final int wakeFd;
    private final Arena arena = Arena.ofShared();

    // send side (under the client's send lock)
    final MemorySegment sendBuffer = arena.allocate(BUFFER_SIZE, 64);
    private final ScmRights sending = new ScmRights(arena);

    // receive side (by the reader)
    final MemorySegment recvBuffer = arena.allocate(BUFFER_SIZE, 64);
    private final ScmRights receiving = new ScmRights(arena);

    // poll: [socket, wake eventfd] (by the background reader)
    private final MemorySegment pollFds = arena.allocate(16, 8);
    private final MemorySegment one = arena.allocate(8, 8);

    // The arena outlives every call: close() runs only when no thread reads or sends.

    private ClientSocket(int fd, int wakeFd) {
        this.fd = fd;
        this.wakeFd = wakeFd;
        pollFds.set(JAVA_INT, 0, fd);
        pollFds.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
        pollFds.set(JAVA_INT, 8, wakeFd);
        pollFds.set(ValueLayout.JAVA_SHORT, 12, (short) POLLIN);
        one.set(JAVA_LONG, 0, 1);
    }

    /** Connects to {@code path}: a blocking socket whose blocking reads give up after a second. */
    static ClientSocket connect(String path) throws IOException {
        int fd = LibC.socketUnixStream(false);
        int rc = LibC.connectUnix(fd, path);
        if (rc < 0) {
            LibC.close(fd);
            throw new ErrnoException("connect " + path, -rc);
        }
        int wake;
        try {
            wake = LibC.eventfd(true);
        } catch (ErrnoException e) {
            LibC.close(fd);
            throw e;
        }
        ClientSocket s = new ClientSocket(fd, wake);
        s.setReceiveTimeout(1);
        return s;
    }

    int fd() {
        return fd;
    }

    private void setReceiveTimeout(int seconds) throws IOException {
        MemorySegment tv = arena.allocate(16, 8);
        tv.set(JAVA_LONG, 0, seconds);
        try {
            int rc = (int) SETSOCKOPT.invokeExact(fd, LibC.SOL_SOCKET, SO_RCVTIMEO, tv, 16);
            if (rc < 0) {
                throw new IOException("setsockopt SO_RCVTIMEO failed");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Sends {@code length} bytes of {@link #sendBuffer}, all of them (blocking), with {@code fds} on
     * the first byte. Returns 0 or -errno.
     */
    long sendAll(long length, int[] fds) {
        long done = 0;
        int[] first = fds;
        while (done < length) {
            long n = sending.send(fd, sendBuffer.address() + done, length - done, first, LibC.MSG_NOSIGNAL);
            if (n == -LibC.EINTR) {
                continue;
            }
            if (n < 0) {
                return n;
            }
            first = NO_FDS; // sent with the first byte; never again
            done += n;
        }
        return 0;
    }

    private static final int[] NO_FDS = new int[0];

    /**
     * One recvmsg into {@code dst} at {@code offset} (at most {@code max} bytes, which the caller has
     * checked fit), blocking for at most the receive time-out unless {@code dontWait}. Returns the
     * count, 0 at end of file, or -errno (-EAGAIN when nothing came, -EMSGSIZE when the control
     * message was truncated: its fds are closed). The fds that came wait in {@link #takeReceivedFds}.
     */
    long recv(MemorySegment dst, long offset, long max, boolean dontWait) {
        return receiving.receive(fd, dst.address() + offset, max, dontWait ? LibC.MSG_DONTWAIT : 0);
    }

    /** The fds of the last {@link #recv}, or null; the caller now owns them. */
    int[] takeReceivedFds() {
        return receiving.takeReceived();
    }

    /** Bit 0: the socket has something (bytes, end of file or an error); bit 1: woken. */
    static final int SOCKET_READY = 1, WOKEN = 2;

    /**
     * poll(2) on the socket and the wake eventfd ({@code withSocket}), or on the wake eventfd alone, for
     * at most {@code timeoutMillis} (-1: no limit). Returns {@link #SOCKET_READY} | {@link #WOKEN}.
     */
    int poll(boolean withSocket, int timeoutMillis) {
        pollFds.set(JAVA_INT, 0, withSocket ? fd : -1); // poll ignores a negative fd
        pollFds.set(JAVA_INT, 4, POLLIN); // events, and revents cleared
        pollFds.set(JAVA_INT, 12, POLLIN);
        int rc;
        try {
            rc = (int) POLL.invokeExact(pollFds, 2L, timeoutMillis);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc <= 0) {
            return 0;
        }
        int ready = 0;
        if (pollFds.get(ValueLayout.JAVA_SHORT, 6) != 0) {
            ready |= SOCKET_READY;
        }
        if (pollFds.get(ValueLayout.JAVA_SHORT, 14) != 0) {
            ready |= WOKEN;
        }
        return ready;
    }

    /** Wakes a poll and every blocked send or receive: they see end of file or EPIPE. */
    void shutdown() {
        LibC.write(wakeFd, one, 8);
        try {
            int ignored = (int) SHUTDOWN.invokeExact(fd, SHUT_RDWR);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Closes the fds and frees the buffers; only when no thread uses the socket any more. */
    @Override
    public void close() {
        ScmRights.closeAll(receiving.takeReceived());
        LibC.close(fd);
        LibC.close(wakeFd);
        arena.close();
    }
}
