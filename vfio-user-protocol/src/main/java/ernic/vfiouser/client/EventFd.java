package ernic.vfiouser.client;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** An eventfd a client hands the server for an interrupt, and waits on. */
public final class EventFd implements AutoCloseable {
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment counter = arena.allocate(ValueLayout.JAVA_LONG);

    public EventFd() throws ErrnoException {
        this.fd = LibC.eventfd(true);
    }

    public int fd() {
        return fd;
    }

    /** Waits up to {@code timeoutMillis} for the eventfd to be signalled; returns the count read (0 on timeout). */
    public long await(int timeoutMillis) throws ErrnoException {
        if (!LibC.pollIn(fd, timeoutMillis)) {
            return 0;
        }
        return poll();
    }

    /** Reads and clears the count without waiting. */
    public long poll() {
        long n = LibC.read(fd, counter, 8);
        return n == 8 ? counter.get(ValueLayout.JAVA_LONG, 0) : 0;
    }

    @Override
    public void close() {
        LibC.close(fd);
        arena.close();
    }
}
