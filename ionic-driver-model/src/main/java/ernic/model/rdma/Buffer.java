package ernic.model.rdma;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Process memory as a user buffer: whole 4 KiB pages of guest RAM at a user virtual address. When scattered,
 * neighbouring pages are swapped in guest RAM (page 0 lives at physical page 1 and so on), so only a correct page
 * table reaches the right bytes. Made by {@link RdmaVerbs#buffer}.
 */
public final class Buffer {
    public final long va, length;
    private final MemorySegment ram;
    private final long ramIova, base;
    private final int pages;
    private final boolean scattered;

    Buffer(MemorySegment ram, long ramIova, long va, long base, int pages, long length, boolean scattered) {
        this.ram = ram;
        this.ramIova = ramIova;
        this.va = va;
        this.base = base;
        this.pages = pages;
        this.length = length;
        this.scattered = scattered;
    }

    /** Guest address of page {@code p} of the buffer. */
    public long page(int p) {
        int phys = scattered && (p ^ 1) < pages ? p ^ 1 : p;
        return base + (long) phys * RdmaVerbs.PAGE;
    }

    private long ramOffset(long off) {
        return page((int) (off >>> RdmaVerbs.PAGE_SHIFT)) - ramIova + (off & (RdmaVerbs.PAGE - 1));
    }

    public void put(long off, byte[] bytes) {
        for (int i = 0; i < bytes.length; i++) {
            ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), bytes[i]);
        }
    }

    public byte[] get(long off, int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = ram.get(ValueLayout.JAVA_BYTE, ramOffset(off + i));
        }
        return b;
    }

    public void fill(long off, long len, byte value) {
        for (long i = 0; i < len; i++) {
            ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), value);
        }
    }

    /** A little-endian u64 (as the CPU stores it; atomics work on these). */
    public long getLong(long off) {
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = v << 8 | ram.get(ValueLayout.JAVA_BYTE, ramOffset(off + i)) & 0xff;
        }
        return v;
    }

    public void putLong(long off, long v) {
        for (int i = 0; i < 8; i++) {
            ram.set(ValueLayout.JAVA_BYTE, ramOffset(off + i), (byte) (v >>> 8 * i));
        }
    }

    /** The whole buffer as one segment; only for a buffer that is not scattered. */
    public MemorySegment segment() {
        if (scattered) {
            throw new IllegalStateException("a scattered buffer is not contiguous");
        }
        return ram.asSlice(base - ramIova, length);
    }
}
