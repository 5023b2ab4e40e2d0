package ernic.vfiouser.server;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.ProtocolException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The DMA mappings of one client connection: guest physical ranges the client shared by DMA_MAP,
 * each mapped into this process with mmap(MAP_SHARED) when it came with an fd. Lookups are a binary
 * search over a sorted array (mappings change rarely, lookups happen on every guest access), with
 * the last hit cached. Only the device thread touches it.
 */
public final class DmaSpace implements GuestMemory {
    public static final long PAGE_SIZE = 4096;
    /** The end of guest physical address space we accept: 52 bits, the widest x86-64 physical address. */
    public static final long MAX_ADDRESS = 1L << 52;

    /** One DMA_MAP: [iova, iova + size), its host memory (null without an fd) and dirty bitmap. */
    public static final class Mapping {
        final long iova;
        final long size;
        final boolean writable;
        final MemorySegment memory;
        /** {@link #memory} as the device may use it: read-only unless the mapping is writable (made once). */
        final MemorySegment view;
        final long[] dirty;

        Mapping(long iova, long size, boolean writable, MemorySegment memory) {
            this.iova = iova;
            this.size = size;
            this.writable = writable;
            this.memory = memory;
            this.view = memory == null || writable ? memory : memory.asReadOnly();
            // Only memory we can touch gets a bitmap: its size is bounded by a real file. A mapping
            // without an fd is whatever size the client says, so it gets none.
            this.dirty = memory == null ? null : new long[(int) ((size / PAGE_SIZE + 63) / 64)];
        }

        public long iova() {
            return iova;
        }

        public long size() {
            return size;
        }

        public boolean hasMemory() {
            return memory != null;
        }

        long end() {
            return iova + size; // checked not to overflow at map time
        }
    }

    private final int maxMappings;
    private long[] starts = new long[0];
    private Mapping[] maps = new Mapping[0];
    private Mapping last;

    public DmaSpace(int maxMappings) {
        this.maxMappings = maxMappings;
    }

    /**
     * Adds a mapping. {@code fd} (taken over: closed here whatever happens) may be -1 for a mapping
     * served by DMA_READ / DMA_WRITE messages.
     */
    public void map(long iova, long size, long fdOffset, int flags, int fd) throws ProtocolException {
        try {
            if (size <= 0 || (iova | size | fdOffset) % PAGE_SIZE != 0 || fdOffset < 0) {
                throw new ProtocolException(LibC.EINVAL, "DMA_MAP of " + Long.toHexString(iova) + "+"
                        + Long.toHexString(size) + " (fd offset " + fdOffset + ") is not page-aligned or empty");
            }
            if (iova < 0 || size > MAX_ADDRESS - iova) {
                // Past 2^52 (no guest has such addresses): refused, so all iova arithmetic stays signed-safe.
                throw new ProtocolException(LibC.EINVAL, "DMA_MAP " + Long.toHexString(iova) + "+"
                        + Long.toHexString(size) + " ends past 2^52");
            }
            if ((flags & ~3) != 0 || (flags & 3) == 0) {
                throw new ProtocolException(LibC.EINVAL, "DMA_MAP flags " + flags);
            }
            for (Mapping m : maps) {
                if (iova < m.end() && m.iova < iova + size) {
                    throw new ProtocolException(LibC.EEXIST, "DMA_MAP " + Long.toHexString(iova) + "+"
                            + Long.toHexString(size) + " overlaps " + Long.toHexString(m.iova));
                }
            }
            if (maps.length >= maxMappings) {
                throw new ProtocolException(LibC.ENOSPC, "more than " + maxMappings + " DMA mappings");
            }
            MemorySegment memory = null;
            if (fd >= 0) {
                long fileSize = LibC.fileSize(fd);
                if (fdOffset > fileSize || size > fileSize - fdOffset) {
                    throw new ProtocolException(LibC.EINVAL, "DMA_MAP past the end of its fd: offset " + fdOffset
                            + " size " + size + " file " + fileSize);
                }
                boolean writable = (flags & 2) != 0;
                memory = LibC.mmapShared(fd, fdOffset, size, LibC.PROT_READ | (writable ? LibC.PROT_WRITE : 0));
            }
            insert(new Mapping(iova, size, (flags & 2) != 0, memory));
        } catch (ErrnoException e) {
            throw new ProtocolException(e.errno(), "DMA_MAP: " + e.getMessage());
        } finally {
            LibC.close(fd);
        }
    }

    private void insert(Mapping m) {
        int i = Arrays.binarySearch(starts, m.iova);
        int at = -i - 1;
        long[] s = new long[starts.length + 1];
        Mapping[] ms = new Mapping[maps.length + 1];
        System.arraycopy(starts, 0, s, 0, at);
        System.arraycopy(maps, 0, ms, 0, at);
        s[at] = m.iova;
        ms[at] = m;
        System.arraycopy(starts, at, s, at + 1, starts.length - at);
        System.arraycopy(maps, at, ms, at + 1, maps.length - at);
        starts = s;
        maps = ms;
    }

    /**
     * Removes every mapping inside {@code [iova, iova + size)}; one that only partly overlaps the range
     * is refused (EINVAL), and a range with no mapping is ENOENT. Returns the bytes unmapped.
     */
    public long unmap(long iova, long size) throws ProtocolException {
        if (size <= 0 || iova < 0 || size > Long.MAX_VALUE - iova) {
            throw new ProtocolException(LibC.EINVAL, "DMA_UNMAP of an empty or wrapping range");
        }
        List<Mapping> gone = new ArrayList<>();
        for (Mapping m : maps) {
            boolean inside = m.iova >= iova && m.end() <= iova + size;
            boolean overlaps = iova < m.end() && m.iova < iova + size;
            if (inside) {
                gone.add(m);
            } else if (overlaps) {
                throw new ProtocolException(LibC.EINVAL, "DMA_UNMAP splits the mapping at "
                        + Long.toHexString(m.iova));
            }
        }
        if (gone.isEmpty()) {
            throw new ProtocolException(LibC.ENOENT, "DMA_UNMAP of " + Long.toHexString(iova) + ": nothing mapped");
        }
        long bytes = 0;
        for (Mapping m : gone) {
            bytes += m.size;
            remove(m);
        }
        return bytes;
    }

    /** Removes every mapping (DMA_UNMAP with the ALL flag, and disconnect). */
    public void unmapAll() {
        for (Mapping m : maps.clone()) {
            remove(m);
        }
    }

    private void remove(Mapping m) {
        int at = Arrays.binarySearch(starts, m.iova);
        long[] s = new long[starts.length - 1];
        Mapping[] ms = new Mapping[maps.length - 1];
        System.arraycopy(starts, 0, s, 0, at);
        System.arraycopy(maps, 0, ms, 0, at);
        System.arraycopy(starts, at + 1, s, at, starts.length - at - 1);
        System.arraycopy(maps, at + 1, ms, at, maps.length - at - 1);
        starts = s;
        maps = ms;
        if (last == m) {
            last = null;
        }
        if (m.memory != null) {
            LibC.munmap(m.memory);
        }
    }

    /** The mapping holding {@code iova}, or null. */
    public Mapping find(long iova) {
        Mapping l = last;
        if (l != null && iova - l.iova >= 0 && iova - l.iova < l.size) {
            return l;
        }
        int i = Arrays.binarySearch(starts, iova);
        int at = i >= 0 ? i : -i - 2;
        if (at < 0) {
            return null;
        }
        Mapping m = maps[at];
        if (iova - m.iova >= 0 && iova - m.iova < m.size) {
            last = m;
            return m;
        }
        return null;
    }

    @Override
    public int mappingCount() {
        return maps.length;
    }

    @Override
    public MemorySegment segment(long iova, long length) {
        if (length < 0) {
            return null;
        }
        Mapping m = find(iova);
        if (m == null || m.memory == null || length > m.end() - iova) {
            return null;
        }
        return m.view.asSlice(iova - m.iova, length);
    }

    @Override
    public MemorySegment mappingMemory(long iova, long length, boolean write) {
        Mapping m = find(iova);
        if (m == null || m.memory == null || length < 0 || length > m.end() - iova || write && !m.writable) {
            return null;
        }
        return m.view;
    }

    @Override
    public long mappingBase(long iova) {
        Mapping m = find(iova);
        return m == null ? iova : m.iova;
    }

    @Override
    public MemorySegment writableSegment(long iova, long length) {
        Mapping m = find(iova);
        if (m == null || !m.writable || m.memory == null || length < 0 || length > m.end() - iova) {
            return null;
        }
        return m.memory.asSlice(iova - m.iova, length);
    }

    @Override
    public MemorySegment run(long iova, long length) {
        if (length <= 0) {
            return null;
        }
        Mapping m = find(iova);
        if (m == null || m.memory == null) {
            return null;
        }
        return m.view.asSlice(iova - m.iova, Math.min(length, m.end() - iova));
    }

    @Override
    public boolean read(long iova, MemorySegment dst) {
        long done = 0;
        long total = dst.byteSize();
        while (done < total) {
            long a = iova + done;
            if (a < iova) {
                return false; // wrapped
            }
            Mapping m = find(a);
            if (m == null || m.memory == null) {
                return false;
            }
            long n = Math.min(total - done, m.end() - a);
            MemorySegment.copy(m.memory, a - m.iova, dst, done, n);
            done += n;
        }
        return true;
    }

    @Override
    public boolean write(long iova, MemorySegment src) {
        long total = src.byteSize();
        // Check the whole range first so a refused write changes nothing.
        for (long done = 0; done < total; ) {
            long a = iova + done;
            Mapping m = a < iova ? null : find(a);
            if (m == null || m.memory == null || !m.writable) {
                return false;
            }
            done += Math.min(total - done, m.end() - a);
        }
        for (long done = 0; done < total; ) {
            long a = iova + done;
            Mapping m = find(a);
            long n = Math.min(total - done, m.end() - a);
            MemorySegment.copy(src, done, m.memory, a - m.iova, n);
            markDirty(m, a, n);
            done += n;
        }
        return true;
    }

    @Override
    public void markDirty(long iova, long length) {
        for (long done = 0; done < length; ) {
            Mapping m = find(iova + done);
            if (m == null) {
                return;
            }
            long n = Math.min(length - done, m.end() - (iova + done));
            markDirty(m, iova + done, n);
            done += n;
        }
    }

    private static void markDirty(Mapping m, long iova, long length) {
        if (length <= 0 || m.dirty == null) {
            return;
        }
        long first = (iova - m.iova) / PAGE_SIZE;
        long lastPage = (iova - m.iova + length - 1) / PAGE_SIZE;
        for (long p = first; p <= lastPage; p++) {
            m.dirty[(int) (p >>> 6)] |= 1L << (p & 63);
        }
    }

    /** True when the page holding {@code iova} was written since the last {@link #clearDirty()}. */
    public boolean isDirty(long iova) {
        Mapping m = find(iova);
        if (m == null) {
            return false;
        }
        if (m.dirty == null) {
            return false;
        }
        long p = (iova - m.iova) / PAGE_SIZE;
        return (m.dirty[(int) (p >>> 6)] & (1L << (p & 63))) != 0;
    }

    public void clearDirty() {
        for (Mapping m : maps) {
            if (m.dirty != null) {
                Arrays.fill(m.dirty, 0);
            }
        }
    }
}
