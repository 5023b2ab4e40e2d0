package ernic.vfiouser.wire;

import ernic.vfiouser.sys.LibC;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The payload of every vfio-user message, as records with a decoder and an encoder. Layouts are those
 * of docs/interop/vfio-user.rst (all little-endian). {@code decode} checks lengths and throws a
 * non-fatal {@link ProtocolException} (EINVAL) for a short or malformed payload.
 */
public final class Messages {
    private Messages() {}

    static void need(ByteBuf p, int bytes, String what) throws ProtocolException {
        if (p.readableBytes() < bytes) {
            throw new ProtocolException(LibC.EINVAL, what + ": payload of " + p.readableBytes()
                    + " bytes, need " + bytes);
        }
    }

    /** VERSION: u16 major, u16 minor, NUL-terminated JSON. */
    public record Version(int major, int minor, String json) {
        public static final int FIXED = 4;

        public static Version decode(ByteBuf p) throws ProtocolException {
            need(p, FIXED + 1, "VERSION");
            int i = p.readerIndex();
            int major = p.getUnsignedShortLE(i);
            int minor = p.getUnsignedShortLE(i + 2);
            int len = p.readableBytes() - FIXED;
            if (p.getByte(i + FIXED + len - 1) != 0) {
                throw new ProtocolException(LibC.EINVAL, "VERSION: JSON is not NUL-terminated");
            }
            String json = p.toString(i + FIXED, len - 1, StandardCharsets.UTF_8);
            if (json.indexOf('\0') >= 0) {
                throw new ProtocolException(LibC.EINVAL, "VERSION: NUL inside the JSON");
            }
            return new Version(major, minor, json);
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            byte[] j = json.getBytes(StandardCharsets.UTF_8);
            ByteBuf b = alloc.buffer(FIXED + j.length + 1);
            b.writeShortLE(major).writeShortLE(minor).writeBytes(j).writeByte(0);
            return b;
        }
    }

    /** DMA_MAP: argsz, flags (bit 0 read, bit 1 write), offset (into the fd), addr, size. */
    public record DmaMap(int argsz, int flags, long offset, long addr, long size) {
        public static final int SIZE = 32;
        public static final int FLAG_READ = 1, FLAG_WRITE = 2;

        public static DmaMap decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DMA_MAP");
            int i = p.readerIndex();
            return new DmaMap(p.getIntLE(i), p.getIntLE(i + 4), p.getLongLE(i + 8), p.getLongLE(i + 16),
                    p.getLongLE(i + 24));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags).writeLongLE(offset).writeLongLE(addr)
                    .writeLongLE(size);
        }
    }

    /** DMA_UNMAP: argsz, flags (bit 1 = unmap all), addr, size; the reply echoes it. */
    public record DmaUnmap(int argsz, int flags, long addr, long size) {
        public static final int SIZE = 24;
        public static final int FLAG_GET_DIRTY_BITMAP = 1, FLAG_ALL = 2;

        public static DmaUnmap decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DMA_UNMAP");
            int i = p.readerIndex();
            return new DmaUnmap(p.getIntLE(i), p.getIntLE(i + 4), p.getLongLE(i + 8), p.getLongLE(i + 16));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags).writeLongLE(addr).writeLongLE(size);
        }
    }

    /** DEVICE_GET_INFO: argsz, flags (bit 0 reset, bit 1 PCI), num_regions, num_irqs. */
    public record DeviceInfo(int argsz, int flags, int numRegions, int numIrqs) {
        public static final int SIZE = 16;
        public static final int FLAG_RESET = 1, FLAG_PCI = 2;

        public static DeviceInfo decode(ByteBuf p) throws ProtocolException {
            need(p, 4, "DEVICE_GET_INFO");
            int i = p.readerIndex();
            int argsz = p.getIntLE(i);
            if (p.readableBytes() < SIZE) {
                return new DeviceInfo(argsz, 0, 0, 0);
            }
            return new DeviceInfo(argsz, p.getIntLE(i + 4), p.getIntLE(i + 8), p.getIntLE(i + 12));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags).writeIntLE(numRegions).writeIntLE(numIrqs);
        }
    }

    /** One area of a sparse-mmap capability: offset and size within the region. */
    public record SparseArea(long offset, long size) {}

    /**
     * DEVICE_GET_REGION_INFO: argsz, flags (read 1, write 2, mmap 4, caps 8), index, cap_offset, size,
     * offset (of the region in the fd the reply carries), then capabilities: here only
     * VFIO_REGION_INFO_CAP_SPARSE_MMAP (id 1, version 1).
     */
    public record RegionInfo(int argsz, int flags, int index, int capOffset, long size, long offset,
                             List<SparseArea> sparseAreas) {
        public static final int SIZE = 32;
        public static final int FLAG_READ = 1, FLAG_WRITE = 2, FLAG_MMAP = 4, FLAG_CAPS = 8;
        public static final int CAP_SPARSE_MMAP = 1;

        /** Bytes the capability chain needs after the fixed part. */
        public int capsSize() {
            return sparseAreas.isEmpty() ? 0 : 16 + 16 * sparseAreas.size();
        }

        public static RegionInfo decode(ByteBuf p) throws ProtocolException {
            need(p, 12, "DEVICE_GET_REGION_INFO");
            int i = p.readerIndex();
            if (p.readableBytes() < SIZE) {
                return new RegionInfo(p.getIntLE(i), p.getIntLE(i + 4), p.getIntLE(i + 8), 0, 0, 0, List.of());
            }
            int capOffset = p.getIntLE(i + 12);
            List<SparseArea> areas = new ArrayList<>();
            if (capOffset >= SIZE && capOffset + 16 <= p.readableBytes()
                    && p.getUnsignedShortLE(i + capOffset) == CAP_SPARSE_MMAP) {
                long n = p.getUnsignedIntLE(i + capOffset + 8);
                for (long k = 0; k < n && capOffset + 16 + 16 * (k + 1) <= p.readableBytes(); k++) {
                    int a = (int) (i + capOffset + 16 + 16 * k);
                    areas.add(new SparseArea(p.getLongLE(a), p.getLongLE(a + 8)));
                }
            }
            return new RegionInfo(p.getIntLE(i), p.getIntLE(i + 4), p.getIntLE(i + 8), capOffset,
                    p.getLongLE(i + 16), p.getLongLE(i + 24), List.copyOf(areas));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = alloc.buffer(SIZE + capsSize());
            b.writeIntLE(argsz).writeIntLE(flags).writeIntLE(index).writeIntLE(capOffset).writeLongLE(size)
                    .writeLongLE(offset);
            if (capOffset != 0 && !sparseAreas.isEmpty()) {
                b.writeShortLE(CAP_SPARSE_MMAP).writeShortLE(1).writeIntLE(0); // id, version, next
                b.writeIntLE(sparseAreas.size()).writeIntLE(0);
                for (SparseArea a : sparseAreas) {
                    b.writeLongLE(a.offset()).writeLongLE(a.size());
                }
            }
            return b;
        }
    }

    /** DEVICE_GET_REGION_IO_FDS request and reply head: argsz, flags, index, count (then sub-regions). */
    public record RegionIoFds(int argsz, int flags, int index, int count) {
        public static final int SIZE = 16;

        public static RegionIoFds decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DEVICE_GET_REGION_IO_FDS");
            int i = p.readerIndex();
            return new RegionIoFds(p.getIntLE(i), p.getIntLE(i + 4), p.getIntLE(i + 8), p.getIntLE(i + 12));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags).writeIntLE(index).writeIntLE(count);
        }
    }

    /** DEVICE_GET_IRQ_INFO: argsz, flags (eventfd 1, maskable 2, automasked 4, noresize 8), index, count. */
    public record IrqInfo(int argsz, int flags, int index, int count) {
        public static final int SIZE = 16;
        public static final int FLAG_EVENTFD = 1, FLAG_MASKABLE = 2, FLAG_AUTOMASKED = 4, FLAG_NORESIZE = 8;

        public static IrqInfo decode(ByteBuf p) throws ProtocolException {
            need(p, 12, "DEVICE_GET_IRQ_INFO");
            int i = p.readerIndex();
            return new IrqInfo(p.getIntLE(i), p.getIntLE(i + 4), p.getIntLE(i + 8),
                    p.readableBytes() >= SIZE ? p.getIntLE(i + 12) : 0);
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags).writeIntLE(index).writeIntLE(count);
        }
    }

    /**
     * DEVICE_SET_IRQS: argsz, flags (data none 1, bool 2, eventfd 4; action mask 8, unmask 16, trigger
     * 32), index, start, count, then {@code count} bool bytes for DATA_BOOL; eventfds travel as fds.
     */
    public record SetIrqs(int argsz, int flags, int index, int start, int count, byte[] bools) {
        public static final int SIZE = 20;
        public static final int DATA_NONE = 1, DATA_BOOL = 2, DATA_EVENTFD = 4;
        public static final int ACTION_MASK = 8, ACTION_UNMASK = 16, ACTION_TRIGGER = 32;
        public static final int DATA_MASK = 7, ACTION_MASK_BITS = 56;

        public static SetIrqs decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DEVICE_SET_IRQS");
            int i = p.readerIndex();
            int flags = p.getIntLE(i + 4);
            int count = p.getIntLE(i + 16);
            byte[] bools = null;
            if ((flags & DATA_BOOL) != 0) {
                if (count < 0 || p.readableBytes() - SIZE < count) {
                    throw new ProtocolException(LibC.EINVAL, "DEVICE_SET_IRQS: " + count + " bools do not fit");
                }
                bools = new byte[count];
                p.getBytes(i + SIZE, bools);
            }
            return new SetIrqs(p.getIntLE(i), flags, p.getIntLE(i + 8), p.getIntLE(i + 12), count, bools);
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = alloc.buffer(SIZE + (bools == null ? 0 : bools.length));
            b.writeIntLE(argsz).writeIntLE(flags).writeIntLE(index).writeIntLE(start).writeIntLE(count);
            if (bools != null) {
                b.writeBytes(bools);
            }
            return b;
        }
    }

    /**
     * REGION_READ / REGION_WRITE head: offset u64, region u32, count u32. The data follows (write
     * request, read reply) as the rest of the payload.
     */
    public record RegionAccess(long offset, int region, int count) {
        public static final int SIZE = 16;

        public static RegionAccess decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "REGION access");
            int i = p.readerIndex();
            return new RegionAccess(p.getLongLE(i), p.getIntLE(i + 8), p.getIntLE(i + 12));
        }

        public ByteBuf encodeHead(ByteBufAllocator alloc, int extra) {
            return alloc.buffer(SIZE + extra).writeLongLE(offset).writeIntLE(region).writeIntLE(count);
        }
    }

    /** DMA_READ / DMA_WRITE head (server to client): address u64, count u64, then data. */
    public record DmaAccess(long address, long count) {
        public static final int SIZE = 16;

        public static DmaAccess decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DMA access");
            int i = p.readerIndex();
            return new DmaAccess(p.getLongLE(i), p.getLongLE(i + 8));
        }

        public ByteBuf encodeHead(ByteBufAllocator alloc, int extra) {
            return alloc.buffer(SIZE + extra).writeLongLE(address).writeLongLE(count);
        }
    }

    /** One REGION_WRITE_MULTI entry: offset u64, region u32, count u32 (at most 8), data[8]. */
    public record WriteEntry(long offset, int region, int count, long data) {}

    /** REGION_WRITE_MULTI: wr_cnt u64, then 24-byte entries (QEMU sends at most 200). */
    public record WriteMulti(List<WriteEntry> writes) {
        public static final int ENTRY = 24, MAX_ENTRIES = 200;

        public static WriteMulti decode(ByteBuf p) throws ProtocolException {
            need(p, 8, "REGION_WRITE_MULTI");
            int i = p.readerIndex();
            long n = p.getLongLE(i);
            if (n < 1 || n > MAX_ENTRIES || p.readableBytes() < 8 + n * ENTRY) {
                throw new ProtocolException(LibC.EINVAL, "REGION_WRITE_MULTI: " + n + " writes in "
                        + p.readableBytes() + " bytes");
            }
            List<WriteEntry> writes = new ArrayList<>((int) n);
            for (int k = 0; k < n; k++) {
                int e = i + 8 + k * ENTRY;
                int count = p.getIntLE(e + 12);
                if (count < 1 || count > 8) {
                    throw new ProtocolException(LibC.EINVAL, "REGION_WRITE_MULTI: write of " + count + " bytes");
                }
                writes.add(new WriteEntry(p.getLongLE(e), p.getIntLE(e + 8), count, p.getLongLE(e + 16)));
            }
            return new WriteMulti(writes);
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            ByteBuf b = alloc.buffer(8 + writes.size() * ENTRY).writeLongLE(writes.size());
            for (WriteEntry w : writes) {
                b.writeLongLE(w.offset()).writeIntLE(w.region()).writeIntLE(w.count()).writeLongLE(w.data());
            }
            return b;
        }
    }

    /** DEVICE_FEATURE: argsz, flags (bits 0-15 feature, 16 GET, 17 SET, 18 PROBE), data. */
    public record DeviceFeature(int argsz, int flags) {
        public static final int SIZE = 8;
        public static final int GET = 1 << 16, SET = 1 << 17, PROBE = 1 << 18;

        public static DeviceFeature decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "DEVICE_FEATURE");
            int i = p.readerIndex();
            return new DeviceFeature(p.getIntLE(i), p.getIntLE(i + 4));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(flags);
        }

        public int feature() {
            return flags & 0xffff;
        }
    }

    /** MIG_DATA_READ / MIG_DATA_WRITE head: argsz u32, size u32, then data. */
    public record MigData(int argsz, int size) {
        public static final int SIZE = 8;

        public static MigData decode(ByteBuf p) throws ProtocolException {
            need(p, SIZE, "MIG_DATA");
            int i = p.readerIndex();
            return new MigData(p.getIntLE(i), p.getIntLE(i + 4));
        }

        public ByteBuf encode(ByteBufAllocator alloc) {
            return alloc.buffer(SIZE).writeIntLE(argsz).writeIntLE(size);
        }
    }
}
