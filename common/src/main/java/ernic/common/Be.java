package ernic.common;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Big-endian, unaligned accessors: the RDMA CQE, EQE and WQE fields marked __be in ionic_fw.h. */
public final class Be {
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Be() {}

    public static int u16(MemorySegment s, long at) {
        return s.get(U16, at) & 0xffff;
    }

    public static int u32(MemorySegment s, long at) {
        return s.get(U32, at);
    }

    public static long u64(MemorySegment s, long at) {
        return s.get(U64, at);
    }

    public static void put16(MemorySegment s, long at, int v) {
        s.set(U16, at, (short) v);
    }

    public static void put32(MemorySegment s, long at, int v) {
        s.set(U32, at, v);
    }

    public static void put64(MemorySegment s, long at, long v) {
        s.set(U64, at, v);
    }
}
