package ernic.ionic.layout;

import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.LE;

/**
 * Base of the flyweights: a view of one guest-visible structure at {@code base} inside a segment.
 * A flyweight is re-pointed with {@link #wrap} and never copies; the segment may be a BAR register
 * file, a scratch buffer, or guest memory.
 */
public abstract class Struct<T extends Struct<T>> {
    protected MemorySegment seg;
    protected long base;

    @SuppressWarnings("unchecked")
    public final T wrap(MemorySegment segment, long offset) {
        this.seg = segment;
        this.base = offset;
        return (T) this;
    }

    public final MemorySegment segment() {
        return seg;
    }

    public final long base() {
        return base;
    }

    protected final int u8(long o) {
        return LE.u8(seg, base + o);
    }

    protected final int u16(long o) {
        return LE.u16(seg, base + o);
    }

    protected final int u32(long o) {
        return LE.u32(seg, base + o);
    }

    protected final long u64(long o) {
        return LE.u64(seg, base + o);
    }

    protected final void put8(long o, int v) {
        LE.put8(seg, base + o, v);
    }

    protected final void put16(long o, int v) {
        LE.put16(seg, base + o, v);
    }

    protected final void put32(long o, int v) {
        LE.put32(seg, base + o, v);
    }

    protected final void put64(long o, long v) {
        LE.put64(seg, base + o, v);
    }

    /** Zeroes the structure's first {@code size} bytes in place (no slice: the data path allocates nothing). */
    protected final void zero(long size) {
        long o = 0;
        for (; o + 8 <= size; o += 8) {
            LE.put64(seg, base + o, 0);
        }
        for (; o < size; o++) {
            LE.put8(seg, base + o, 0);
        }
    }
}
