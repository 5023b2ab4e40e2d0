package ernic.it.fuzz;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** The fds a hostile client attaches to messages: memfds of odd sizes, pipes, eventfds. The caller closes them. */
final class Fds {
    private Fds() {}

    private static final int O_CLOEXEC = 0x80000;
    private static final MethodHandle PIPE2 = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("pipe2").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    /** Both ends of a new pipe. */
    static int[] pipe() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment two = a.allocate(8, 4);
            int rc = (int) PIPE2.invokeExact(two, O_CLOEXEC);
            if (rc != 0) {
                throw new IllegalStateException("pipe2 failed");
            }
            return new int[] {two.get(JAVA_INT, 0), two.get(JAVA_INT, 4)};
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** One fd of a random kind; the kind is appended to {@code what}. */
    static int any(SplittableRandom r, StringBuilder what) throws ErrnoException {
        switch (r.nextInt(5)) {
            case 0 -> {
                int[] p = pipe();
                int keep = r.nextInt(2);
                LibC.close(p[1 - keep]);
                what.append(keep == 0 ? "pipe-r " : "pipe-w ");
                return p[keep];
            }
            case 1 -> {
                what.append("eventfd ");
                return LibC.eventfd(r.nextBoolean());
            }
            case 2 -> {
                long size = r.nextInt(4) == 0 ? r.nextInt(1, 5000) : 4096L << r.nextInt(6);
                what.append("memfd(").append(size).append(") ");
                return LibC.memfd("fuzz", size);
            }
            case 3 -> {
                what.append("memfd(0) ");
                return LibC.memfd("fuzz-empty", 0);
            }
            default -> {
                what.append("/dev/null ");
                return LibC.open("/dev/null", LibC.O_RDWR | LibC.O_CLOEXEC);
            }
        }
    }

    static void closeAll(int[] fds) {
        for (int fd : fds) {
            LibC.close(fd);
        }
    }
}
