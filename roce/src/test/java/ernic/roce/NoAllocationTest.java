package ernic.roce;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hot path allocates nothing per packet: building a frame into a segment and parsing it, many times over, adds
 * no more than a few bytes of allocation (the JIT's own bookkeeping) to the thread's count.
 */
class NoAllocationTest {
    @Test
    void buildAndParseAllocateNothingPerPacket() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        RoceFrame f = Frames.frame(IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, true, true);
        RoceParser p = new RoceParser();
        MemorySegment ring = Arena.ofAuto().allocate(16 * 1024);
        int frames = 8;
        int length = f.frameLength(1024);
        long before = 0;
        for (int round = 0; round < 2; round++) {
            if (round == 1) {
                before = threads.getCurrentThreadAllocatedBytes();
            }
            for (int i = 0; i < 20_000; i++) {
                long at = (long) (i % frames) * 2048;
                f.bth.psn = i;
                f.headers(ring, at, 1024);
                f.trailer(ring, at, 1024);
                if (p.parse(ring, at, length) != RoceParser.Refusal.NONE) { // no assertion object per frame
                    throw new AssertionError("frame " + i + " refused: " + p.parse(ring, at, length));
                }
            }
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated by 20000 frames built and parsed").isLessThan(20_000);
    }
}
