package ernic.vfiouser.client;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;

import java.lang.foreign.MemorySegment;

/** Memory a client shares with the server as guest RAM: a memfd mapped here at guest address {@code iova}. */
public final class GuestRam implements AutoCloseable {
    private final int fd;
    private final long iova;
    private final MemorySegment memory;

    public GuestRam(long iova, long size) throws ErrnoException {
        this.fd = LibC.memfd("ernic-guest-ram", size);
        try {
            this.memory = LibC.mmapShared(fd, 0, size, LibC.PROT_READ | LibC.PROT_WRITE);
        } catch (ErrnoException e) {
            LibC.close(fd);
            throw e;
        }
        this.iova = iova;
    }

    public int fd() {
        return fd;
    }

    public long iova() {
        return iova;
    }

    public long size() {
        return memory.byteSize();
    }

    /** This RAM as seen by the client; offset 0 is guest address {@link #iova()}. */
    public MemorySegment memory() {
        return memory;
    }

    /** The segment at guest address {@code addr}. */
    public MemorySegment at(long addr, long length) {
        return memory.asSlice(addr - iova, length);
    }

    @Override
    public void close() {
        LibC.munmap(memory);
        LibC.close(fd);
    }
}
