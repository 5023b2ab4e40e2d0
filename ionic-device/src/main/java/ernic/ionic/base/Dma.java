package ernic.ionic.base;

import ernic.vfiouser.server.GuestMemory;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;

/**
 * The device's DMA engine: copies between device buffers and guest memory, only while a client is
 * attached and bus mastering is on. Guest addresses are untrusted; every method answers false rather
 * than throwing.
 */
public final class Dma {
    /** The device decodes 52-bit bus addresses (IONIC_ADDR_LEN). */
    public static final long ADDRESS_LIMIT = 1L << 52;

    private GuestMemory memory;
    /** See {@link #offset()}. */
    private long foundAt;
    private BooleanSupplier busMaster = () -> true;

    public void attach(GuestMemory memory, BooleanSupplier busMaster) {
        this.memory = memory;
        this.busMaster = busMaster;
    }

    public void detach() {
        memory = null;
    }

    public boolean enabled() {
        return memory != null && busMaster.getAsBoolean();
    }

    /** True when {@code [iova, iova + length)} is a valid device address range (no overflow, below 2^52). */
    public static boolean validRange(long iova, long length) {
        return iova >= 0 && length >= 0 && iova < ADDRESS_LIMIT && length <= ADDRESS_LIMIT - iova;
    }

    /** True when every byte of the range is in guest memory (the range may span mappings). */
    public boolean mapped(long iova, long length) {
        if (!enabled() || !validRange(iova, length)) {
            return false;
        }
        long at = iova, left = length;
        while (left > 0) {
            MemorySegment run = memory.run(at, left);
            if (run == null || run.byteSize() == 0) {
                return false;
            }
            at += run.byteSize();
            left -= run.byteSize();
        }
        return true;
    }

    /**
     * Guest {@code [iova, iova + length)} as a segment to read from, when it lies in one mapping: the range starts at
     * {@link #offset()} of it (the segment is the whole mapping, so that the data path allocates nothing); null
     * otherwise (the caller then copies with {@link #read}).
     */
    public MemorySegment readable(long iova, long length) {
        return find(iova, length, false);
    }

    /**
     * Guest {@code [iova, iova + length)} as a segment the caller writes at once (the range is marked dirty now),
     * at {@link #offset()} of it, when it lies in one writable mapping; null otherwise.
     */
    public MemorySegment writable(long iova, long length) {
        MemorySegment direct = find(iova, length, true);
        if (direct != null) {
            memory.markDirty(iova, length);
        }
        return direct;
    }

    /** Where the range of the last {@link #readable} or {@link #writable} that found one starts in its segment. */
    public long offset() {
        return foundAt;
    }

    private MemorySegment find(long iova, long length, boolean write) {
        if (!enabled() || !validRange(iova, length)) {
            return null;
        }
        MemorySegment whole = memory.mappingMemory(iova, length, write);
        if (whole != null) {
            foundAt = iova - memory.mappingBase(iova);
            return whole;
        }
        foundAt = 0;
        return write ? memory.writableSegment(iova, length) : memory.segment(iova, length);
    }

    /** Guest {@code [iova, iova + length)} into {@code dst} at {@code offset}. */
    public boolean read(long iova, MemorySegment dst, long offset, long length) {
        if (length == 0) {
            return true;
        }
        MemorySegment direct = readable(iova, length);
        if (direct != null) {
            MemorySegment.copy(direct, foundAt, dst, offset, length);
            return true;
        }
        return enabled() && validRange(iova, length) && memory.read(iova, dst.asSlice(offset, length));
    }

    /** {@code src} at {@code offset} into guest {@code [iova, iova + length)}, marking it dirty. */
    public boolean write(long iova, MemorySegment src, long offset, long length) {
        if (length == 0) {
            return true;
        }
        MemorySegment direct = writable(iova, length);
        if (direct != null) {
            MemorySegment.copy(src, offset, direct, foundAt, length);
            return true;
        }
        return enabled() && validRange(iova, length) && memory.write(iova, src.asSlice(offset, length));
    }

    /**
     * Writes a ring entry of {@code length} bytes from {@code src} so that the bytes
     * {@code [publishOffset, publishOffset + publishLength)} (the color byte, or an event id) land
     * last: a host polling the entry never sees it valid with stale contents.
     */
    public boolean publish(long iova, MemorySegment src, long length, long publishOffset, long publishLength) {
        MemorySegment direct = writable(iova, length);
        long bodyEnd = publishOffset + publishLength;
        if (direct != null) {
            long at = foundAt;
            MemorySegment.copy(src, 0, direct, at, publishOffset);
            MemorySegment.copy(src, bodyEnd, direct, at + bodyEnd, length - bodyEnd);
            VarHandle.releaseFence();
            MemorySegment.copy(src, publishOffset, direct, at + publishOffset, publishLength);
            return true;
        }
        if (!enabled() || !validRange(iova, length)) {
            return false;
        }
        return (publishOffset == 0 || memory.write(iova, src.asSlice(0, publishOffset)))
                && (bodyEnd == length || memory.write(iova + bodyEnd, src.asSlice(bodyEnd, length - bodyEnd)))
                && memory.write(iova + publishOffset, src.asSlice(publishOffset, publishLength));
    }
}
