package ernic.ionic;

import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;
import io.netty.channel.EventLoop;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** Guest RAM over an Arena segment, a recording interrupt sink, and no event loop (tests tick by hand). */
final class FakeGuest implements DeviceContext, GuestMemory, Interrupts, AutoCloseable {
    static final long BASE = 0x10_0000L;
    final Arena arena = Arena.ofConfined();
    final long size;
    final MemorySegment ram;
    final List<Integer> msix = new ArrayList<>();
    private long next = BASE;

    FakeGuest(long size) {
        this.size = size;
        this.ram = arena.allocate(size, 4096);
    }

    /** A page-aligned, zeroed block of guest memory; returns its guest address. */
    long alloc(long bytes) {
        long at = next;
        next = (next + bytes + 4095) & ~4095L;
        if (next > BASE + size) {
            throw new IllegalStateException("fake guest out of memory");
        }
        ram.asSlice(at - BASE, bytes).fill((byte) 0);
        return at;
    }

    MemorySegment at(long iova, long len) {
        return ram.asSlice(iova - BASE, len);
    }

    private boolean inside(long iova, long length) {
        return length >= 0 && iova >= BASE && iova - BASE <= size && length <= size - (iova - BASE);
    }

    @Override public GuestMemory memory() { return this; }
    @Override public Interrupts interrupts() { return this; }
    @Override public EventLoop eventLoop() { return null; }

    @Override
    public MemorySegment segment(long iova, long length) {
        return inside(iova, length) ? ram.asSlice(iova - BASE, length) : null;
    }

    @Override
    public MemorySegment writableSegment(long iova, long length) {
        return segment(iova, length);
    }

    @Override
    public MemorySegment run(long iova, long length) {
        if (!inside(iova, 1)) {
            return null;
        }
        long n = Math.min(length, size - (iova - BASE));
        return ram.asSlice(iova - BASE, n);
    }

    @Override
    public boolean read(long iova, MemorySegment dst) {
        MemorySegment s = segment(iova, dst.byteSize());
        if (s == null) {
            return false;
        }
        dst.copyFrom(s);
        return true;
    }

    @Override
    public boolean write(long iova, MemorySegment src) {
        MemorySegment s = segment(iova, src.byteSize());
        if (s == null) {
            return false;
        }
        s.copyFrom(src);
        return true;
    }

    @Override public void markDirty(long iova, long length) { }
    @Override public int mappingCount() { return 1; }

    @Override
    public boolean trigger(IrqType type, int vector) {
        if (type == IrqType.MSIX) {
            msix.add(vector);
        }
        return true;
    }

    @Override public boolean hasEventfd(IrqType type, int vector) { return true; }
    @Override public boolean pending(IrqType type, int vector) { return false; }

    long count(int vector) {
        return msix.stream().filter(v -> v == vector).count();
    }

    @Override
    public void close() {
        arena.close();
    }
}
