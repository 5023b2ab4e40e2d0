package ernic.ionic.rdma;

import ernic.ionic.base.Dma;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.regs.InterruptController;
import ernic.attach.HostMemory;
import ernic.vfiouser.server.GuestMemory;
import ernic.vfiouser.server.Refusals;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an in-process target reaches through {@link HostMemory}: exactly what the initiator's rkey opens
 * for a remote READ or WRITE, with a byte array standing in for guest memory.
 */
class KeyedHostMemoryTest {
    static final long RAM = 0x10_0000, VA = 0x7f00_0000_0000L;
    final byte[] ram = new byte[64 * 1024];
    final MemorySegment ramSeg = MemorySegment.ofArray(ram);
    RdmaLif lif;
    HostMemory host;

    /** Guest memory over {@link #ram}: one mapping at {@link #RAM}. */
    final class ArrayGuest implements GuestMemory {
        private MemorySegment at(long iova, long length) {
            long off = iova - RAM;
            return off >= 0 && length >= 0 && off + length <= ram.length ? ramSeg.asSlice(off, length) : null;
        }

        @Override public MemorySegment segment(long iova, long length) { return at(iova, length); }
        @Override public MemorySegment writableSegment(long iova, long length) { return at(iova, length); }

        @Override
        public MemorySegment run(long iova, long length) {
            long off = iova - RAM;
            return off >= 0 && off < ram.length ? at(iova, Math.min(length, ram.length - off)) : null;
        }

        @Override
        public boolean read(long iova, MemorySegment dst) {
            return copy(at(iova, dst.byteSize()), dst);
        }

        @Override
        public boolean write(long iova, MemorySegment src) {
            return copy(src, at(iova, src.byteSize()));
        }

        /** Copies {@code from} into {@code to} when both are there (RAM is null outside). */
        private static boolean copy(MemorySegment from, MemorySegment to) {
            if (from == null || to == null) {
                return false;
            }
            to.copyFrom(from);
            return true;
        }

        @Override public void markDirty(long iova, long length) {}
        @Override public int mappingCount() { return 1; }
    }

    @BeforeEach
    void setUp() {
        Dma dma = new Dma();
        dma.attach(new ArrayGuest(), () -> true);
        lif = new RdmaLif(ProfileLoader.compat(), new InterruptController(4), dma,
                new Refusals(LoggerFactory.getLogger("test")));
        host = lif.hostMemory();
        region(1, 0x11, V1.MRF_REMOTE_READ | V1.MRF_REMOTE_WRITE);
        region(2, 0x22, V1.MRF_LOCAL_WRITE); // local access only
        for (int i = 0; i < 4096; i++) {
            ram[i] = (byte) i;
        }
    }

    /** MR {@code index}: 4 KiB at VA over the first page of guest RAM. */
    void region(int index, int key, int flags) {
        MemoryRegion mr = new MemoryRegion(index);
        mr.key = key;
        mr.va = VA;
        mr.length = 4096;
        mr.flags = flags;
        mr.mem = PageTable.contiguous(RAM, 4096);
        mr.valid = true;
        lif.memoryRegions.put(index, mr);
    }

    @Test
    void anRkeyOpensItsRegionForReadAndWrite() {
        MemorySegment got = MemorySegment.ofArray(new byte[16]);
        assertThat(host.fromHost(1 << 8 | 0x11, VA + 100, got)).isTrue();
        assertThat(got.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)[0]).isEqualTo((byte) 100);
        assertThat(host.toHost(1 << 8 | 0x11, VA + 4080, MemorySegment.ofArray(new byte[16]))).isTrue();
        assertThat(ram[4095]).isZero();
    }

    @Test
    void keyZeroAWrongKeyMissingRemoteAccessAndARangePastTheRegionMoveNothing() {
        MemorySegment buf = MemorySegment.ofArray(new byte[16]);
        assertThat(host.fromHost(0, RAM, buf)).as("key 0 would reach all of guest memory").isFalse();
        assertThat(host.toHost(0, RAM, buf)).isFalse();
        assertThat(host.fromHost(1 << 8 | 0x12, VA, buf)).as("stale key byte").isFalse();
        assertThat(host.fromHost(2 << 8 | 0x22, VA, buf)).as("no remote read").isFalse();
        assertThat(host.toHost(2 << 8 | 0x22, VA, buf)).as("no remote write").isFalse();
        assertThat(host.toHost(1 << 8 | 0x11, VA + 4088, buf)).as("past the end").isFalse();
        assertThat(host.fromHost(1 << 8 | 0x11, VA - 1, buf)).as("before the start").isFalse();
        assertThat(host.toHost(9 << 8 | 0x11, VA, buf)).as("no such MR").isFalse();
        assertThat(ram[0]).isZero();
        assertThat(ram[4088]).isEqualTo((byte) 4088);
        ernic.counters.CounterRegistry registry = new ernic.counters.CounterRegistry();
        lif.registerCounters(registry);
        assertThat(registry.totals()).containsEntry("rdma.target.refused", 8L);
    }
}
