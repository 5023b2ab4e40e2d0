package ernic.nvmeof;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One command slot of a queue: what a command needs to be answered once its data is in place, also when
 * that happens later on the device thread (file I/O). Slots are made once per queue and reused.
 */
final class CommandSlot {
    /** SGL kinds: no data, a keyed data block in host memory, an offset into the in-capsule data. */
    static final int SGL_NONE = 0, SGL_KEYED = 1, SGL_INLINE = 2;

    final HostQueue queue;
    final int slot;
    final MemorySegment cqe = Arena.ofAuto().allocate(Nvme.CQE_SIZE);
    /** Bumped when the slot is freed, so a completion that comes back for an old use is dropped. */
    int generation;
    boolean busy;
    int cid, opcode;
    /** Dwords 0-1 of the response (the command-specific result). */
    long result;
    int sglKind;
    long sglAddr;
    int sglLength, sglKey;
    boolean invalidate;

    CommandSlot(HostQueue queue, int slot) {
        this.queue = queue;
        this.slot = slot;
    }
}
