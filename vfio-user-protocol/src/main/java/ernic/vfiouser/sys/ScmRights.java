package ernic.vfiouser.sys;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * sendmsg / recvmsg of one byte range with the file descriptors of SCM_RIGHTS: the one place that
 * writes and reads the control messages, for the server's channel and the client's socket alike.
 * Each instance owns a native msghdr, iovec and control buffer and serves one thread at a time
 * (the event loop, or the client's sender or reader); a call allocates nothing unless fds arrive.
 *
 * <p>Receiving keeps the received fds for {@link #takeReceived()} and closes them itself whenever
 * nobody can own them: when the kernel truncated the control data (MSG_CTRUNC: more fds than
 * {@link #maxFds}, or the receiver's fd table full), or at end of file.
 */
public final class ScmRights {
    /** The most fds one message may carry: the kernel's SCM_MAX_FD. */
    public static final int MAX_FDS = 253;

    private final int maxFds;
    private final long controlSize;
    private final MemorySegment msghdr;
    /**
     * msghdr as passed to the calls: a view with no owner, so a call does not acquire a shared arena
     * (an atomic update per call). The owner keeps the arena open while any call may run.
     */
    private final MemorySegment msghdrArg;
    private final MemorySegment iov;
    private final MemorySegment control;
    private int[] received;

    /** Control room for {@link #MAX_FDS} fds, in {@code arena}. */
    public ScmRights(Arena arena) {
        this(arena, MAX_FDS);
    }

    /** Control room for {@code maxFds} fds (1 to {@link #MAX_FDS}); more in one read truncates it. */
    public ScmRights(Arena arena, int maxFds) {
        if (maxFds < 1 || maxFds > MAX_FDS) {
            throw new IllegalArgumentException("maxFds " + maxFds + " outside [1, " + MAX_FDS + "]");
        }
        this.maxFds = maxFds;
        this.controlSize = space(maxFds);
        this.msghdr = arena.allocate(LibC.MSGHDR);
        this.msghdrArg = MemorySegment.ofAddress(msghdr.address()).reinterpret(msghdr.byteSize());
        this.iov = arena.allocate(16, 8);
        this.control = arena.allocate(controlSize, 8);
        msghdr.set(ValueLayout.ADDRESS, LibC.MSG_IOV, iov);
        msghdr.set(ValueLayout.JAVA_LONG, LibC.MSG_IOVLEN, 1);
    }

    public int maxFds() {
        return maxFds;
    }

    /** CMSG_SPACE for {@code n} fds: header and data, 8-byte aligned. */
    static long space(int n) {
        return LibC.CMSG_HDR + align8(4L * n);
    }

    private static long align8(long n) {
        return (n + 7) & ~7L;
    }

    /**
     * sendmsg of the {@code length} bytes at {@code address} with {@code fds} (none: no control data).
     * The fds stay the caller's: the kernel passes duplicates. Returns the count sent or -errno.
     *
     * @throws IllegalArgumentException for more than {@link #maxFds} fds
     */
    public long send(int socket, long address, long length, int[] fds, int flags) {
        iov.set(ValueLayout.JAVA_LONG, 0, address);
        iov.set(ValueLayout.JAVA_LONG, 8, length);
        if (fds.length == 0) {
            msghdr.set(ValueLayout.ADDRESS, LibC.MSG_CONTROL, MemorySegment.NULL);
            msghdr.set(ValueLayout.JAVA_LONG, LibC.MSG_CONTROLLEN, 0);
        } else {
            encode(fds);
        }
        msghdr.set(ValueLayout.JAVA_INT, LibC.MSG_FLAGS, 0);
        return LibC.sendmsg(socket, msghdrArg, flags);
    }

    /** Writes one SCM_RIGHTS control message holding {@code fds} and points the msghdr at it. */
    private void encode(int[] fds) {
        if (fds.length > maxFds) {
            throw new IllegalArgumentException(fds.length + " fds in one message (at most " + maxFds + ")");
        }
        long dataLen = 4L * fds.length;
        control.set(ValueLayout.JAVA_LONG, 0, LibC.CMSG_HDR + dataLen);
        control.set(ValueLayout.JAVA_INT, 8, LibC.SOL_SOCKET);
        control.set(ValueLayout.JAVA_INT, 12, LibC.SCM_RIGHTS);
        for (int i = 0; i < fds.length; i++) {
            control.set(ValueLayout.JAVA_INT, LibC.CMSG_HDR + 4L * i, fds[i]);
        }
        msghdr.set(ValueLayout.ADDRESS, LibC.MSG_CONTROL, control);
        msghdr.set(ValueLayout.JAVA_LONG, LibC.MSG_CONTROLLEN, space(fds.length));
    }

    /**
     * recvmsg into the {@code max} bytes at {@code address} (MSG_CMSG_CLOEXEC added to {@code flags}).
     * Returns the count, 0 at end of file, -errno, or -EMSGSIZE when the control data was truncated.
     * The fds that came wait in {@link #takeReceived()}; on end of file or truncation they are closed.
     */
    public long receive(int socket, long address, long max, int flags) {
        closeAll(takeReceived()); // a caller that never took them: they have no owner
        iov.set(ValueLayout.JAVA_LONG, 0, address);
        iov.set(ValueLayout.JAVA_LONG, 8, max);
        msghdr.set(ValueLayout.ADDRESS, LibC.MSG_CONTROL, control);
        msghdr.set(ValueLayout.JAVA_LONG, LibC.MSG_CONTROLLEN, controlSize);
        msghdr.set(ValueLayout.JAVA_INT, LibC.MSG_FLAGS, 0);
        long n = LibC.recvmsg(socket, msghdrArg, flags | LibC.MSG_CMSG_CLOEXEC);
        if (n < 0) {
            return n;
        }
        long controlLen = msghdr.get(ValueLayout.JAVA_LONG, LibC.MSG_CONTROLLEN);
        received = controlLen > 0 ? decode(Math.min(controlLen, controlSize)) : null;
        if ((msghdr.get(ValueLayout.JAVA_INT, LibC.MSG_FLAGS) & LibC.MSG_CTRUNC) != 0) {
            closeAll(takeReceived());
            return -LibC.EMSGSIZE;
        }
        if (n == 0) {
            closeAll(takeReceived());
        }
        return n;
    }

    /**
     * The fds of every SCM_RIGHTS message in the first {@code controlLen} bytes of the control
     * buffer, or null. A header whose length does not fit ends the walk.
     */
    private int[] decode(long controlLen) {
        int[] fds = null;
        long off = 0;
        while (off + LibC.CMSG_HDR <= controlLen) {
            long len = control.get(ValueLayout.JAVA_LONG, off);
            if (len < LibC.CMSG_HDR || len > controlLen - off) {
                break;
            }
            if (control.get(ValueLayout.JAVA_INT, off + 8) == LibC.SOL_SOCKET
                    && control.get(ValueLayout.JAVA_INT, off + 12) == LibC.SCM_RIGHTS) {
                int count = (int) ((len - LibC.CMSG_HDR) / 4);
                int base = fds == null ? 0 : fds.length;
                fds = fds == null ? new int[count] : Arrays.copyOf(fds, base + count);
                for (int i = 0; i < count; i++) {
                    fds[base + i] = control.get(ValueLayout.JAVA_INT, off + LibC.CMSG_HDR + 4L * i);
                }
            }
            off += align8(len);
        }
        return fds;
    }

    /** The fds of the last {@link #receive}, or null when none came; the caller now owns them. */
    public int[] takeReceived() {
        int[] fds = received;
        received = null;
        return fds;
    }

    /** Closes fds nobody may keep ({@code null}: none). */
    public static void closeAll(int[] fds) {
        if (fds != null) {
            for (int fd : fds) {
                LibC.close(fd);
            }
        }
    }
}
