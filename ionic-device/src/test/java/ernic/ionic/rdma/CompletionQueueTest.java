package ernic.ionic.rdma;

import ernic.ionic.base.Dma;
import ernic.vfiouser.server.GuestMemory;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static ernic.common.Endian.BE;

/**
 * An error completion that moves a QP to ERROR is seen by the host only once the flush completion behind it
 * is in the ring: libionic drops the flush it owes when a poll ends on the error completion with nothing
 * after it, and the work posted behind the error never completes (seen with pyverbs across the mesh).
 */
class CompletionQueueTest {
    static final long RING = 0x1000;
    final MemorySegment ram = Arena.ofAuto().allocate(0x4000, 64);
    /** The guest addresses written, in order (no direct segments: every write goes through here). */
    final List<Long> writes = new ArrayList<>();
    final Dma dma = new Dma();

    CompletionQueueTest() {
        dma.attach(new GuestMemory() {
            @Override public MemorySegment segment(long iova, long length) { return null; }
            @Override public MemorySegment writableSegment(long iova, long length) { return null; }
            @Override public MemorySegment run(long iova, long length) { return ram.asSlice(iova, length); }
            @Override public void markDirty(long iova, long length) { }
            @Override public int mappingCount() { return 1; }

            @Override
            public boolean read(long iova, MemorySegment dst) {
                dst.copyFrom(ram.asSlice(iova, dst.byteSize()));
                return true;
            }

            @Override
            public boolean write(long iova, MemorySegment src) {
                writes.add(iova);
                ram.asSlice(iova, src.byteSize()).copyFrom(src);
                return true;
            }
        }, () -> true);
    }

    final CompletionQueue cq = new CompletionQueue(5, 0, PageTable.contiguous(RING, 0x1000), 6, 5);
    final V1.Cqe cqe = new V1.Cqe();
    final MemorySegment entry = Arena.ofAuto().allocate(V1.Cqe.SIZE, 8);

    /** The valid word of slot {@code i} as the host reads it: type and flags with the color. */
    int validWord(int i) {
        return BE.u32(ram, RING + 32L * i + V1.Cqe.QID_TYPE_FLAGS);
    }

    MemorySegment error() {
        cqe.wrap(entry, 0).clear().msn(1).qidType(2, V1.Cqe.TYPE_SEND_MSN, true);
        cqe.statusLength(V1.STS_REMOTE_ACC_ERR);
        return entry;
    }

    MemorySegment flush() {
        cqe.wrap(entry, 0).clear().statusLength(V1.STS_WQE_FLUSHED_ERR).qidType(2, V1.Cqe.TYPE_SEND_NPG, true);
        return entry;
    }

    @Test
    void aHeldErrorCompletionGoesOutAfterTheFlushBehindItWithOneEvent() {
        cq.hold();
        assertThat(cq.write(dma, error(), false)).as("no event for an entry the host cannot see").isFalse();
        assertThat(validWord(0)).as("slot 0 still invalid for the host").isZero();
        assertThat(cq.write(dma, flush(), false)).as("the event waits for the held entry").isFalse();
        assertThat(validWord(1) & V1.Cqe.COLOR).as("the flush is out").isEqualTo(V1.Cqe.COLOR);
        assertThat(validWord(0)).isZero();

        assertThat(cq.release(dma)).as("one event, raised when the error is out (a new CQ is armed)").isTrue();
        assertThat(validWord(0) >>> V1.Cqe.TYPE_SHIFT & 7).isEqualTo(V1.Cqe.TYPE_SEND_MSN);
        assertThat(validWord(0) & (V1.Cqe.COLOR | V1.Cqe.ERROR)).isEqualTo(V1.Cqe.COLOR | V1.Cqe.ERROR);
        assertThat(BE.u32(ram, RING + V1.Cqe.STATUS_LENGTH)).isEqualTo(V1.STS_REMOTE_ACC_ERR);
        long errorValid = RING + V1.Cqe.QID_TYPE_FLAGS, flushValid = RING + 32 + V1.Cqe.QID_TYPE_FLAGS;
        assertThat(writes.lastIndexOf(errorValid)).as("the error's valid word is written last")
                .isGreaterThan(writes.lastIndexOf(flushValid));
        assertThat(cq.producer()).isEqualTo(2);

        assertThat(cq.release(dma)).as("nothing held: a second release does nothing").isFalse();
        assertThat(cq.write(dma, flush(), false)).as("the CQ was disarmed by the event").isFalse();
        assertThat(validWord(2) & V1.Cqe.COLOR).isEqualTo(V1.Cqe.COLOR);
    }

    @Test
    void aHeldEntryWithNothingBehindItGoesOutOnRelease() {
        cq.hold();
        cq.write(dma, error(), false);
        assertThat(validWord(0)).isZero();
        assertThat(cq.release(dma)).isTrue();
        assertThat(validWord(0) & V1.Cqe.COLOR).isEqualTo(V1.Cqe.COLOR);
        assertThat(cq.write(dma, flush(), false)).isFalse();
        assertThat(validWord(1) & V1.Cqe.COLOR).as("later entries are not held").isEqualTo(V1.Cqe.COLOR);
    }
}
