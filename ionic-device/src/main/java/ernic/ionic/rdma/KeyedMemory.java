package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.ionic.base.Dma;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.LE;

/**
 * Guest memory as RDMA reaches it: through the MR table by key, checked for access and bounds before
 * anything moves (key 0 only for a privileged QP's local SGEs, as a raw bus address; a window's rkey
 * through {@link MemoryWindows}), and copied one contiguous run at a time. Requester and responder both
 * go through here, whatever the end. Device thread only; nothing here allocates per operation.
 */
final class KeyedMemory {
    /**
     * Largest message: 2 GiB, what the guest is told. ionic_rdma reports max_msg_sz 0x80000000 in every port's
     * attributes (ionic_query_port, a constant: LIF_IDENTIFY has no field for it), so the device takes exactly
     * that much. A WQE whose SGE lengths add up to more fails with a length error; nothing is truncated.
     */
    static final long MAX_MESSAGE = 1L << 31;
    /** Access a local SGE being read needs (no MR flag). */
    static final int ACCESS_LOCAL_READ = 0;
    /** Copies where one side is not mapped go through this, one run of at most BOUNCE bytes at a time. */
    static final int BOUNCE = 64 * 1024;

    private final Dma dma;
    private final MemorySegment bounce = Arena.ofAuto().allocate(BOUNCE, 64);
    /** An atomic's old value on its way to the requester's local SGE. */
    private final MemorySegment word = Arena.ofAuto().allocate(8, 8);
    private final Spans wordSpan = new Spans();
    /** What view() found: a segment and the offset of the entry's bytes in it. */
    private MemorySegment viewSeg;
    private long viewOff;
    private final Counters<PathCounter> counters;
    private final Refusals refusals;
    /** The memory windows in the MR table: bound by the requester, resolved here. */
    final MemoryWindows windows;

    KeyedMemory(RdmaLif lif, Dma dma, Refusals refusals, Counters<PathCounter> counters) {
        this.dma = dma;
        this.counters = counters;
        this.refusals = refusals;
        this.windows = new MemoryWindows(lif, refusals, counters);
    }

    Dma dma() {
        return dma;
    }

    /**
     * Resolves {@code [va, va + len)} under {@code key} for {@code access} (MR flags; 0 = local read) and
     * appends it to {@code into}. {@code remote}: the key came from a peer (an rkey), so key 0 is refused and
     * a failure is the remote access error. Returns an ionic status.
     */
    int resolve(QueuePair qp, int key, long va, long len, int access, boolean remote, Spans into) {
        int err = remote ? V1.STS_REMOTE_ACC_ERR : V1.STS_LOCAL_PROT_ERR;
        if (key == 0) {
            if (remote) {
                if (len == 0) {
                    return V1.STS_OK; // nothing is reached: a zero-length operation under key 0 moves no byte
                }
                // Key 0 is the driver's raw bus address; a requester (a peer server's guest above all) may name
                // memory only by rkey.
                counters.inc(PathCounter.ACCESS_DENIED);
                refusals.refuse("rdma-rkey-0", "a request with rkey 0 (a raw bus address) and length " + len);
                return err;
            }
            if (!qp.privileged() || !Dma.validRange(va, len)) {
                return err;
            }
            return into.addGuest(null, va, len) ? V1.STS_OK : V1.STS_LOCAL_QP_OPER_ERR;
        }
        MemoryRegion mr = windows.entry(key);
        if (mr != null && mr.window()) {
            return remote ? windows.resolve(qp, mr, va, len, access, into) : err; // a window's key is no lkey
        }
        if (mr == null || !mr.covers(va, len) || (mr.flags & access) != access) {
            return err;
        }
        if (qp != null && mr.pd != qp.pd) {
            return err; // a key of another protection domain opens nothing here
        }
        return into.addGuest(mr.mem, mr.offset(va), len) ? V1.STS_OK : V1.STS_LOCAL_QP_OPER_ERR;
    }

    /**
     * LOCAL_INV / SEND_INV: the key no longer opens its MR, or its type 2 window is free again. False when it
     * names neither, names a window that cannot be invalidated, or an MR with windows bound to it.
     */
    boolean invalidate(int key) {
        MemoryRegion mr = windows.entry(key);
        if (mr == null) {
            return false;
        }
        if (mr.window()) {
            return windows.invalidate(mr);
        }
        if (windows.busy(mr)) {
            return false;
        }
        mr.valid = false;
        return true;
    }

    /** SGL offset of a WQE (after the spec lengths when a SPEC flag is set). */
    static int sgl(V1.Wqe w) {
        return (w.flags() & V1.Wqe.SPEC_MASK) != 0 ? V1.Wqe.SPEC_SGL : V1.Wqe.PLD;
    }

    /** The WQE's payload (inline data or its SGEs, each checked for local read) into {@code src}. */
    int gather(QueuePair qp, V1.Wqe wqe, int stride, Spans src) {
        if ((wqe.flags() & V1.Wqe.FLAG_INL) != 0) {
            long len = wqe.length();
            if (len > stride - V1.Wqe.PLD) {
                return V1.STS_LOCAL_LEN_ERR;
            }
            src.addLocal(wqe.segment(), wqe.base() + V1.Wqe.PLD, len);
            return V1.STS_OK;
        }
        int n = wqe.numSgeKey(), sgl = sgl(wqe);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride || n > Spans.MAX - 2) {
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        for (int i = 0; i < n; i++) {
            long len = wqe.sgeLen(sgl, i);
            if (len == 0) {
                continue;
            }
            int st = resolve(qp, wqe.sgeLkey(sgl, i), wqe.sgeVa(sgl, i), len, ACCESS_LOCAL_READ, false, src);
            if (st != V1.STS_OK) {
                return st;
            }
            if (src.total > MAX_MESSAGE) {
                return tooLong(qp, src.total);
            }
        }
        return V1.STS_OK;
    }

    /** A WQE whose SGEs add up to more than {@link #MAX_MESSAGE}: a length error, counted and logged once. */
    int tooLong(QueuePair qp, long total) {
        refusals.refuse("rdma-sge-sum", "QP " + (qp == null ? -1 : qp.id) + ": a WQE whose SGEs add up to " + total
                + " bytes, more than the 2 GiB max_msg_sz");
        return V1.STS_LOCAL_LEN_ERR;
    }

    /** The sum of a WQE's SGE lengths (a READ's length), or -1 when the list does not fit the stride. */
    static long sgeTotal(V1.Wqe w, int stride) {
        int n = w.numSgeKey(), sgl = sgl(w);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride) {
            return -1;
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            total += w.sgeLen(sgl, i);
        }
        return total;
    }

    /** The first {@code len} bytes of the SGEs of {@code w}, checked for local write, into {@code dst}. */
    int scatterList(QueuePair qp, V1.Wqe w, int stride, long len, Spans dst) {
        int n = w.numSgeKey(), sgl = sgl(w);
        if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride || n > Spans.MAX - 2) {
            return V1.STS_LOCAL_QP_OPER_ERR;
        }
        long left = len;
        for (int i = 0; i < n && left > 0; i++) {
            long chunk = Math.min(w.sgeLen(sgl, i), left);
            if (chunk == 0) {
                continue;
            }
            int st = resolve(qp, w.sgeLkey(sgl, i), w.sgeVa(sgl, i), chunk, V1.MRF_LOCAL_WRITE, false, dst);
            if (st != V1.STS_OK) {
                return st;
            }
            left -= chunk;
        }
        return left > 0 ? V1.STS_LOCAL_LEN_ERR : V1.STS_OK;
    }

    /** The atomic WQE's local SGE (8 bytes, for local write), which takes the old value, into {@code dst}. */
    int atomicResult(QueuePair qp, V1.Wqe w, Spans dst) {
        return resolve(qp, w.atomicSgeLkey(), w.atomicSgeVa(), 8, V1.MRF_LOCAL_WRITE, false, dst);
    }

    /** Writes the 8 bytes of {@code value} (little-endian, as guest memory holds them) to checked {@code dst}. */
    boolean putWord(Spans dst, long value) {
        LE.put64(word, 0, value);
        wordSpan.clear().addLocal(word, 0, 8);
        return copy(wordSpan, dst, 8);
    }

    /**
     * Copies {@code len} bytes from {@code src} to {@code dst} (both already checked), one contiguous run
     * at a time: straight from segment to segment where both sides are mapped (one MemorySegment.copy),
     * else through the 64 KiB bounce buffer. False when guest memory cannot be reached.
     */
    boolean copy(Spans src, Spans dst, long len) {
        return copy(src, 0, dst, len);
    }

    /** The same from offset {@code from} of {@code src}. */
    boolean copy(Spans src, long from, Spans dst, long len) {
        return copy(src, from, dst, 0, len);
    }

    /** The same into {@code dst} from its offset {@code at} (a message that arrives in packets). */
    boolean copy(Spans src, long from, Spans dst, long at, long len) {
        if (!transfer(src, from, dst, at, len)) {
            return false;
        }
        counters.add(PathCounter.BYTES, len);
        return true;
    }

    /** Copies {@code len} bytes from offset {@code from} of {@code src} into {@code dst}, uncounted (the trace's view). */
    boolean peek(Spans src, long from, Spans dst, long len) {
        return transfer(src, from, dst, 0, len);
    }

    private boolean transfer(Spans src, long skip, Spans dst, long dstSkip, long len) {
        int si = 0, di = 0;
        long so, dOff, left = len;
        while (si < src.count && skip >= src.len[si]) {
            skip -= src.len[si++];
        }
        so = skip;
        while (di < dst.count && dstSkip >= dst.len[di]) {
            dstSkip -= dst.len[di++];
        }
        dOff = dstSkip;
        while (left > 0) {
            while (si < src.count && so == src.len[si]) {
                si++;
                so = 0;
            }
            while (di < dst.count && dOff == dst.len[di]) {
                di++;
                dOff = 0;
            }
            if (si == src.count || di == dst.count) {
                return false;
            }
            long chunk = Math.min(left, Math.min(src.len[si] - so, dst.len[di] - dOff));
            chunk = Math.min(chunk, run(src, si, so, chunk));
            chunk = Math.min(chunk, run(dst, di, dOff, chunk));
            if (chunk <= 0) {
                return false;
            }
            if (view(src, si, so, chunk, false)) {
                MemorySegment from = viewSeg;
                long fromOff = viewOff;
                if (view(dst, di, dOff, chunk, true)) {
                    MemorySegment.copy(from, fromOff, viewSeg, viewOff, chunk);
                } else {
                    chunk = Math.min(chunk, BOUNCE);
                    MemorySegment.copy(from, fromOff, bounce, 0, chunk);
                    if (!move(dst, di, dOff, chunk, true)) {
                        return false;
                    }
                }
            } else {
                chunk = Math.min(chunk, BOUNCE);
                if (!move(src, si, so, chunk, false) || !move(dst, di, dOff, chunk, true)) {
                    return false;
                }
            }
            so += chunk;
            dOff += chunk;
            left -= chunk;
        }
        return true;
    }

    /**
     * Entry {@code i} at {@code o}, {@code n} bytes, as a segment to copy from (or to, marking it dirty):
     * device-local bytes, or guest memory in one mapping. False when there is no such segment.
     */
    private boolean view(Spans s, int i, long o, long n, boolean write) {
        if (s.local[i] != null) {
            viewSeg = s.local[i];
            viewOff = s.off[i] + o;
            return true;
        }
        long addr = s.mem[i] == null ? s.off[i] + o : s.mem[i].addr(s.off[i] + o);
        if (addr < 0) {
            return false;
        }
        viewSeg = write ? dma.writable(addr, n) : dma.readable(addr, n);
        viewOff = dma.offset();
        return viewSeg != null;
    }

    /** Contiguous bytes of entry {@code i} from {@code o} (at most {@code max}); 0 when unreachable. */
    private static long run(Spans s, int i, long o, long max) {
        if (s.local[i] != null || s.mem[i] == null) {
            return max;
        }
        return s.mem[i].addr(s.off[i] + o) < 0 ? 0 : s.mem[i].run(s.off[i] + o, max);
    }

    /** Moves {@code n} bytes between entry {@code i} at {@code o} and the bounce buffer. */
    private boolean move(Spans s, int i, long o, long n, boolean toEntry) {
        if (s.local[i] != null) {
            if (toEntry) {
                MemorySegment.copy(bounce, 0, s.local[i], s.off[i] + o, n);
            } else {
                MemorySegment.copy(s.local[i], s.off[i] + o, bounce, 0, n);
            }
            return true;
        }
        long addr = s.mem[i] == null ? s.off[i] + o : s.mem[i].addr(s.off[i] + o);
        if (addr < 0) {
            return false;
        }
        return toEntry ? dma.write(addr, bounce, 0, n) : dma.read(addr, bounce, 0, n);
    }
}
