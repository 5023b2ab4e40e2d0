package ernic.vfiouser.sys;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The Linux system calls this project makes, bound through FFM (no JNI). Every call captures errno;
 * failures become {@link ErrnoException}s, except where a caller asks for the raw result (the
 * non-blocking socket paths, which must tell EAGAIN from a real error without allocating).
 */
public final class LibC {
    private LibC() {}

    public static final int AF_UNIX = 1;
    public static final int SOCK_STREAM = 1;
    public static final int SOCK_NONBLOCK = 0x800;
    public static final int SOCK_CLOEXEC = 0x80000;
    public static final int SOL_SOCKET = 1;
    public static final int SCM_RIGHTS = 1;
    public static final int MSG_DONTWAIT = 0x40;
    public static final int MSG_CTRUNC = 0x8;
    public static final int MSG_NOSIGNAL = 0x4000;
    public static final int MSG_CMSG_CLOEXEC = 0x40000000;
    public static final int PROT_READ = 1;
    public static final int PROT_WRITE = 2;
    public static final int MAP_SHARED = 1;
    public static final int MFD_CLOEXEC = 1;
    public static final int EFD_CLOEXEC = 0x80000;
    public static final int EFD_NONBLOCK = 0x800;
    public static final int F_GETFD = 1, F_GETFL = 3, F_SETFL = 4, O_NONBLOCK = 0x800;
    public static final int O_RDWR = 2;
    public static final int O_CLOEXEC = 0x80000;
    public static final int POLLIN = 1;

    public static final int EPERM = 1, ENOENT = 2, EINTR = 4, EIO = 5, EAGAIN = 11, ENOMEM = 12,
            EFAULT = 14, EBUSY = 16, EEXIST = 17, EINVAL = 22, ENOSPC = 28, ERANGE = 34,
            ENOSYS = 38, EMSGSIZE = 90, ENOTSUP = 95, ENOTCONN = 107;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CCS = Linker.Option.captureCallState("errno");

    /** struct msghdr (x86-64). */
    public static final StructLayout MSGHDR = MemoryLayout.structLayout(
            ADDRESS.withName("msg_name"), JAVA_INT.withName("msg_namelen"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("msg_iov"), JAVA_LONG.withName("msg_iovlen"),
            ADDRESS.withName("msg_control"), JAVA_LONG.withName("msg_controllen"),
            JAVA_INT.withName("msg_flags"), MemoryLayout.paddingLayout(4));
    public static final long MSG_IOV = 16, MSG_IOVLEN = 24, MSG_CONTROL = 32, MSG_CONTROLLEN = 40, MSG_FLAGS = 48;
    /** struct cmsghdr: len (size_t), level (int), type (int), then data, 8-byte aligned. */
    public static final long CMSG_HDR = 16;
    /** struct stat: st_size at 48 (x86-64). */
    private static final long STAT_SIZE = 144, ST_SIZE = 48;

    /** A downcall to libc's {@code name} that captures errno, with {@code variadic} for a variadic function. */
    private static MethodHandle fn(String name, FunctionDescriptor fd, Linker.Option... variadic) {
        Linker.Option[] options = new Linker.Option[variadic.length + 1];
        options[0] = CCS;
        System.arraycopy(variadic, 0, options, 1, variadic.length);
        return LINKER.downcallHandle(LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError(name)), fd, options);
    }

    // Each function is linked on its first call, in a holder class of its own (the JVM initialises a class on its
    // first use, and the handle is still a constant the JIT inlines): linking spins classes for each signature, and
    // a server opens its socket with four of these 24 functions, long before a client needs the others.
    private static final class Socket {
        static final MethodHandle H = fn("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    }

    private static final class Bind {
        static final MethodHandle H = fn("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Connect {
        static final MethodHandle H = fn("connect", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Listen {
        static final MethodHandle H = fn("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    }

    private static final class Accept4 {
        static final MethodHandle H = fn("accept4",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    }

    private static final class Recvmsg {
        static final MethodHandle H = fn("recvmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Sendmsg {
        static final MethodHandle H = fn("sendmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Read {
        static final MethodHandle H = fn("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    }

    private static final class Write {
        static final MethodHandle H = fn("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    }

    private static final class Close {
        static final MethodHandle H = fn("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private static final class Mmap {
        static final MethodHandle H = fn("mmap",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG));
    }

    private static final class Munmap {
        static final MethodHandle H = fn("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    }

    private static final class Fstat {
        static final MethodHandle H = fn("fstat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }

    private static final class MemfdCreate {
        static final MethodHandle H = fn("memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Ftruncate {
        static final MethodHandle H = fn("ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    }

    private static final class Eventfd {
        static final MethodHandle H = fn("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    }

    private static final class Chmod {
        static final MethodHandle H = fn("chmod", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Unlink {
        static final MethodHandle H = fn("unlink", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    private static final class Fcntl {
        static final MethodHandle H = fn("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    }

    private static final class Fcntl3 {
        static final MethodHandle H = fn("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
                Linker.Option.firstVariadicArg(2));
    }

    private static final class IoctlPtr {
        static final MethodHandle H = fn("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
                Linker.Option.firstVariadicArg(2));
    }

    private static final class Poll {
        static final MethodHandle H = fn("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    }

    private static final class Open {
        static final MethodHandle H = fn("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    }

    private static final class Strerror {
        static final MethodHandle H = LINKER.downcallHandle(LIBC.find("strerror").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    /**
     * Per-thread space for the captured errno. Each thread that makes system calls gets its own, so a
     * call allocates nothing.
     */
    private static final ThreadLocal<MemorySegment> CAPTURED = ThreadLocal.withInitial(
            () -> Arena.ofAuto().allocate(CAPTURE));

    /** errno of the last call made on this thread through this class. */
    public static int errno() {
        return (int) ERRNO.get(CAPTURED.get(), 0L);
    }

    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) Strerror.H.invokeExact(errno);
            return s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    private static int check(String what, int rc) throws ErrnoException {
        if (rc < 0) {
            throw new ErrnoException(what, errno());
        }
        return rc;
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---- sockets -------------------------------------------------------------------------------

    /** A sockaddr_un for {@code path}; the path must fit in 107 bytes. */
    private static MemorySegment sockaddrUn(Arena arena, String path) throws ErrnoException {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        if (p.length > 107) {
            throw new ErrnoException("socket path longer than 107 bytes: " + path, ENAMETOOLONG);
        }
        MemorySegment sa = arena.allocate(110);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
        MemorySegment.copy(p, 0, sa, ValueLayout.JAVA_BYTE, 2, p.length);
        return sa;
    }

    private static final int ENAMETOOLONG = 36;

    public static int socketUnixStream(boolean nonBlocking) throws ErrnoException {
        try {
            int type = SOCK_STREAM | SOCK_CLOEXEC | (nonBlocking ? SOCK_NONBLOCK : 0);
            return check("socket", (int) Socket.H.invokeExact(CAPTURED.get(), AF_UNIX, type, 0));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void bindUnix(int fd, String path) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            check("bind " + path, (int) Bind.H.invokeExact(CAPTURED.get(), fd, sockaddrUn(arena, path), 110));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Blocking connect of a blocking or non-blocking socket; returns 0 or -errno. */
    public static int connectUnix(int fd, String path) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) Connect.H.invokeExact(CAPTURED.get(), fd, sockaddrUn(arena, path), 110);
            return rc < 0 ? -errno() : 0;
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void listen(int fd, int backlog) throws ErrnoException {
        try {
            check("listen", (int) Listen.H.invokeExact(CAPTURED.get(), fd, backlog));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** accept4 with SOCK_NONBLOCK|SOCK_CLOEXEC; returns the fd, or -errno (EAGAIN when none is waiting). */
    public static int accept(int fd) {
        try {
            int rc = (int) Accept4.H.invokeExact(CAPTURED.get(), fd, MemorySegment.NULL, MemorySegment.NULL,
                    SOCK_NONBLOCK | SOCK_CLOEXEC);
            return rc < 0 ? -errno() : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** recvmsg; returns the byte count or -errno. */
    public static long recvmsg(int fd, MemorySegment msghdr, int flags) {
        try {
            long rc = (long) Recvmsg.H.invokeExact(CAPTURED.get(), fd, msghdr, flags);
            return rc < 0 ? -errno() : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** sendmsg; returns the byte count or -errno. */
    public static long sendmsg(int fd, MemorySegment msghdr, int flags) {
        try {
            long rc = (long) Sendmsg.H.invokeExact(CAPTURED.get(), fd, msghdr, flags);
            return rc < 0 ? -errno() : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- plain fds ------------------------------------------------------------------------------

    /** read(2); returns the count or -errno. */
    public static long read(int fd, MemorySegment buf, long count) {
        try {
            long rc = (long) Read.H.invokeExact(CAPTURED.get(), fd, buf, count);
            return rc < 0 ? -errno() : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** write(2); returns the count or -errno. */
    public static long write(int fd, MemorySegment buf, long count) {
        try {
            long rc = (long) Write.H.invokeExact(CAPTURED.get(), fd, buf, count);
            return rc < 0 ? -errno() : rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Closes {@code fd}, ignoring errors (there is nothing a caller could do about them). */
    public static void close(int fd) {
        if (fd < 0) {
            return;
        }
        try {
            int ignored = (int) Close.H.invokeExact(CAPTURED.get(), fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** True when {@code fd} is an open descriptor of this process. */
    public static boolean isOpen(int fd) {
        try {
            return (int) Fcntl.H.invokeExact(CAPTURED.get(), fd, F_GETFD) >= 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void setNonBlocking(int fd) throws ErrnoException {
        try {
            int flags = check("fcntl(F_GETFL)", (int) Fcntl.H.invokeExact(CAPTURED.get(), fd, F_GETFL));
            check("fcntl(F_SETFL)", (int) Fcntl3.H.invokeExact(CAPTURED.get(), fd, F_SETFL, flags | O_NONBLOCK));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int open(String path, int flags) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            return check("open " + path, (int) Open.H.invokeExact(CAPTURED.get(), arena.allocateFrom(path), flags));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ioctl(fd, request, arg) with a pointer argument. */
    public static void ioctl(int fd, long request, MemorySegment arg, String what) throws ErrnoException {
        try {
            check(what, (int) IoctlPtr.H.invokeExact(CAPTURED.get(), fd, request, arg));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Size of the file behind {@code fd} (fstat st_size). */
    public static long fileSize(int fd) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = arena.allocate(STAT_SIZE, 8);
            check("fstat", (int) Fstat.H.invokeExact(CAPTURED.get(), fd, st));
            return st.get(JAVA_LONG, ST_SIZE);
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** mmap(MAP_SHARED) of {@code length} bytes of {@code fd} from {@code offset}; unmap with {@link #munmap}. */
    public static MemorySegment mmapShared(int fd, long offset, long length, int prot) throws ErrnoException {
        try {
            MemorySegment p = (MemorySegment) Mmap.H.invokeExact(CAPTURED.get(), MemorySegment.NULL, length, prot,
                    MAP_SHARED, fd, offset);
            if (p.address() == -1L) {
                throw new ErrnoException("mmap", errno());
            }
            return p.reinterpret(length);
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void munmap(MemorySegment mapping) {
        try {
            int ignored = (int) Munmap.H.invokeExact(CAPTURED.get(), mapping, mapping.byteSize());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A new memfd of {@code size} bytes. */
    public static int memfd(String name, long size) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            int fd = check("memfd_create", (int) MemfdCreate.H.invokeExact(CAPTURED.get(), arena.allocateFrom(name),
                    MFD_CLOEXEC));
            int rc = (int) Ftruncate.H.invokeExact(CAPTURED.get(), fd, size);
            if (rc < 0) {
                int e = errno();
                close(fd);
                throw new ErrnoException("ftruncate", e);
            }
            return fd;
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int eventfd(boolean nonBlocking) throws ErrnoException {
        try {
            return check("eventfd", (int) Eventfd.H.invokeExact(CAPTURED.get(), 0,
                    EFD_CLOEXEC | (nonBlocking ? EFD_NONBLOCK : 0)));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** poll(2) on one fd for POLLIN; returns true when readable before {@code timeoutMillis}. */
    public static boolean pollIn(int fd, int timeoutMillis) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(8, 4);
            pfd.set(JAVA_INT, 0, fd);
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
            int rc = (int) Poll.H.invokeExact(CAPTURED.get(), pfd, 1L, timeoutMillis);
            if (rc < 0) {
                int e = errno();
                if (e == EINTR) {
                    return false;
                }
                throw new ErrnoException("poll", e);
            }
            return rc > 0;
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static void chmod(String path, int mode) throws ErrnoException {
        try (Arena arena = Arena.ofConfined()) {
            check("chmod " + path, (int) Chmod.H.invokeExact(CAPTURED.get(), arena.allocateFrom(path), mode));
        } catch (ErrnoException e) {
            throw e;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** unlink(2); returns 0 or -errno. */
    public static int unlink(String path) {
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) Unlink.H.invokeExact(CAPTURED.get(), arena.allocateFrom(path));
            return rc < 0 ? -errno() : 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Writes 1 to an eventfd (how a device raises an interrupt); returns 0 or -errno. */
    public static int eventfdSignal(int fd, MemorySegment one) {
        long rc = write(fd, one, 8);
        return rc < 0 ? (int) rc : 0;
    }

    /** Counts this process's open fds (for leak checks). */
    public static int openFdCount() {
        String[] names = new java.io.File("/proc/self/fd").list();
        return names == null ? -1 : names.length;
    }

    /**
     * Counts this process's mappings of memfds (guest RAM, device regions): the mappings this project
     * makes, for leak checks. The JVM's own mappings come and go and are not counted.
     */
    public static long memfdMappingCount() {
        try (var lines = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.contains("/memfd:")).count();
        } catch (IOException e) {
            return -1;
        }
    }
}
