package ernic.nvmeof;

import ernic.attach.HostMemory;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;

/** A byte array standing in for guest memory, reached by rkeys registered over ranges of it. */
final class ArrayHost implements HostMemory {
    static final long BASE = 0x7f00_0000_0000L;
    final byte[] mem = new byte[4 << 20];
    final MemorySegment seg = MemorySegment.ofArray(mem);
    private final Map<Integer, long[]> keys = new HashMap<>();
    int refused, moved;

    /** Registers {@code key} for {@code length} bytes at guest address {@code BASE + offset}. */
    long register(int key, int offset, int length) {
        keys.put(key, new long[] {BASE + offset, length});
        return BASE + offset;
    }

    void invalidate(int key) {
        keys.remove(key);
    }

    private MemorySegment at(int key, long addr, long len) {
        long[] r = keys.get(key);
        if (key == 0 || r == null || addr < r[0] || len > r[1] || addr - r[0] > r[1] - len) {
            refused++;
            return null;
        }
        moved++;
        return seg.asSlice(addr - BASE, len);
    }

    @Override
    public boolean fromHost(int rkey, long addr, MemorySegment dst) {
        return copy(at(rkey, addr, dst.byteSize()), dst);
    }

    @Override
    public boolean toHost(int rkey, long addr, MemorySegment src) {
        return copy(src, at(rkey, addr, src.byteSize()));
    }

    /** Copies {@code from} into {@code to} unless one is null (a range the host refused). */
    private static boolean copy(MemorySegment from, MemorySegment to) {
        if (from == null || to == null) {
            return false;
        }
        to.copyFrom(from);
        return true;
    }
}
