package ernic.ionic.rdma;

import ernic.ionic.base.Dma;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Where an object's bytes live in guest memory: one contiguous bus-address range, or pages of
 * {@code 2^pageShift} bytes from a page table the driver gave (read once, at registration). Offsets
 * run from 0 to {@link #size()}; {@link #addr} and {@link #run} translate them.
 */
public final class PageTable {
    /** Page tables longer than this are refused (2^24 pages: 64 GiB of 4 KiB pages). */
    public static final int MAX_PAGES = 1 << 24;
    private static final ValueLayout.OfLong LE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final long size;
    private final long base;
    private final long[] pages;
    private final int pageShift;
    /** Offset of byte 0 within the first page (an MR's va & page mask). */
    private final long first;

    private PageTable(long size, long base, long[] pages, int pageShift, long first) {
        this.size = size;
        this.base = base;
        this.pages = pages;
        this.pageShift = pageShift;
        this.first = first;
    }

    /** A contiguous range; null when it overflows the bus address space. */
    public static PageTable contiguous(long base, long size) {
        if (!Dma.validRange(base, size)) {
            return null;
        }
        return new PageTable(size, base, null, 0, 0);
    }

    /**
     * Reads {@code count} le64 page addresses at {@code tableAddr}. Byte 0 is at {@code first} in
     * the first page. Null when the geometry is wrong (too few or too many pages for the size, a page
     * address out of range) or the table cannot be read.
     */
    public static PageTable read(Dma dma, long tableAddr, int count, int pageShift, long first, long size) {
        if (count <= 0 || count > MAX_PAGES || pageShift < 12 || pageShift > 30 || size < 0 || first < 0
                || first >= 1L << pageShift) {
            return null;
        }
        long pageSize = 1L << pageShift;
        long need = (first + size + pageSize - 1) >>> pageShift;
        if (need > count || need + 1 < count || !Dma.validRange(tableAddr, 8L * count)) {
            return null;
        }
        long[] pages = new long[count];
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(8L * count, 8);
            if (!dma.read(tableAddr, buf, 0, 8L * count)) {
                return null;
            }
            for (int i = 0; i < count; i++) {
                long p = buf.getAtIndex(LE64, i);
                if ((p & (pageSize - 1)) != 0 && i > 0 || !Dma.validRange(p, pageSize)) {
                    return null;
                }
                pages[i] = p & ~(pageSize - 1);
            }
        }
        return new PageTable(size, 0, pages, pageShift, first);
    }

    /** Page addresses this table holds (0 for a contiguous range): what it costs the device's page budget. */
    public int entries() {
        return pages == null ? 0 : pages.length;
    }

    public long size() {
        return size;
    }

    /** The bus address of byte {@code offset}; -1 outside. */
    public long addr(long offset) {
        if (offset < 0 || offset >= size) {
            return -1;
        }
        if (pages == null) {
            return base + offset;
        }
        long at = first + offset;
        return pages[(int) (at >>> pageShift)] + (at & ((1L << pageShift) - 1));
    }

    /** How many bytes from {@code offset} (at most {@code max}) are contiguous in bus address space. */
    public long run(long offset, long max) {
        long limit = Math.min(max, size - offset);
        if (pages == null || limit <= 0) {
            return Math.max(0, limit);
        }
        long pageSize = 1L << pageShift;
        long at = first + offset;
        int p = (int) (at >>> pageShift);
        long n = pageSize - (at & (pageSize - 1));
        while (n < limit && p + 1 < pages.length && pages[p + 1] == pages[p] + pageSize) {
            p++;
            n += pageSize;
        }
        return Math.min(n, limit);
    }
}
