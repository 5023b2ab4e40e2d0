package ernic.ionic.rdma;

import java.lang.foreign.MemorySegment;

/**
 * A scatter/gather list the data path has already checked: guest ranges (through an MR's page table,
 * or raw bus addresses for key 0) and device-local bytes (inline WQE data, a GRH). Reused per WQE;
 * no allocation.
 */
final class Spans {
    /** The SGEs a 256-byte WQE can hold, plus a GRH, with room to spare. */
    static final int MAX = 32;

    final PageTable[] mem = new PageTable[MAX];
    final MemorySegment[] local = new MemorySegment[MAX];
    final long[] off = new long[MAX], len = new long[MAX];
    int count;
    long total;

    Spans clear() {
        for (int i = 0; i < count; i++) {
            mem[i] = null;
            local[i] = null;
        }
        count = 0;
        total = 0;
        return this;
    }

    /** A guest range: {@code table} null means {@code offset} is a bus address. */
    boolean addGuest(PageTable table, long offset, long length) {
        return add(table, null, offset, length);
    }

    boolean addLocal(MemorySegment segment, long offset, long length) {
        return add(null, segment, offset, length);
    }

    /** Appends device-local bytes; returns this (for a one-entry list of scratch bytes). */
    Spans local(MemorySegment segment, long length) {
        add(null, segment, 0, length);
        return this;
    }

    boolean add(PageTable table, MemorySegment segment, long offset, long length) {
        if (length == 0) {
            return true;
        }
        if (count == MAX) {
            return false;
        }
        mem[count] = table;
        local[count] = segment;
        off[count] = offset;
        len[count] = length;
        count++;
        total += length;
        return true;
    }
}
