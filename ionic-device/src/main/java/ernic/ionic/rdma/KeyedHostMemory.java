package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.attach.HostMemory;

import java.lang.foreign.MemorySegment;

/** {@link HostMemory} over the guest's MR table: what a remote peer's READ and WRITE may reach, no more. */
final class KeyedHostMemory implements HostMemory {
    private final KeyedMemory memory;
    private final Spans guest = new Spans(), here = new Spans();
    private final Counters<PathCounter> counters;

    KeyedHostMemory(KeyedMemory memory, Counters<PathCounter> counters) {
        this.memory = memory;
        this.counters = counters;
    }

    @Override
    public boolean fromHost(int rkey, long addr, MemorySegment dst) {
        return move(rkey, addr, dst, V1.MRF_REMOTE_READ);
    }

    @Override
    public boolean toHost(int rkey, long addr, MemorySegment src) {
        return move(rkey, addr, src, V1.MRF_REMOTE_WRITE);
    }

    private boolean move(int rkey, long addr, MemorySegment buf, int access) {
        long len = buf.byteSize();
        if (len == 0) {
            return true;
        }
        // remote: an rkey, so key 0 and missing remote access are refused as a peer's would be.
        if (memory.resolve(null, rkey, addr, len, access, true, guest.clear()) != V1.STS_OK) {
            counters.inc(PathCounter.TARGET_REFUSED);
            return false;
        }
        here.clear().addLocal(buf, 0, len);
        boolean ok = access == V1.MRF_REMOTE_READ ? memory.copy(guest, here, len) : memory.copy(here, guest, len);
        if (!ok) {
            counters.inc(PathCounter.TARGET_REFUSED);
        }
        return ok;
    }
}
