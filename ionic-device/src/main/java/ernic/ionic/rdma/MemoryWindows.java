package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.vfiouser.server.Refusals;

/**
 * Memory windows, type 1 and type 2B, with Soft-RoCE's rules (rxe_mw.c). ionic_rdma allocates a window as an
 * MR id (CREATE_MR with IONIC_MRF_IS_MW, and IONIC_MRF_INV_EN for type 2) and deallocates it with DESTROY_MR;
 * libionic binds it with a BIND_MW send WQE (struct ionic_v1_bind_mw_bdy), for type 1 from ibv_bind_mw and
 * for type 2 from ibv_post_send. A bound window opens a range of one MR to remote peers under its own rkey,
 * with its own rights; a type 2 window only to the peers of the QP it was bound on. LOCAL_INV and SEND_INV
 * free a bound type 2 window; a type 1 window is never invalidated, only rebound (or unbound by a bind of
 * length 0). A bind that breaks a rule completes with MEM_MGMT_OPER_ERR, which the provider reports as
 * IBV_WC_MW_BIND_ERR; a remote access a window does not allow is a remote access error, as a bad rkey is.
 * Each refusal is counted by cause ({@link Refusals}, logged once) and in the {@code rdma.mw.*} totals.
 * Device thread only; nothing allocates.
 */
final class MemoryWindows {
    /** The rights a bind may give a window (what libionic's to_ionic_mr_flags makes of ibv access flags). */
    static final int BIND_ACCESS = V1.MRF_LOCAL_WRITE | V1.MRF_REMOTE_WRITE | V1.MRF_REMOTE_READ
            | V1.MRF_REMOTE_ATOMIC | V1.MRF_MW_BIND | V1.MRF_ZERO_BASED;
    /** Rights that need local write on the MR (C10-74). */
    private static final int WRITABLE = V1.MRF_REMOTE_WRITE | V1.MRF_REMOTE_ATOMIC;

    private final RdmaLif lif;
    private final Refusals refusals;
    private final Counters<PathCounter> path;

    MemoryWindows(RdmaLif lif, Refusals refusals, Counters<PathCounter> path) {
        this.lif = lif;
        this.refusals = refusals;
        this.path = path;
    }

    /** The MR or window a key names (index above the 8-bit key, and that key), or null. */
    MemoryRegion entry(int key) {
        int index = key >>> 8;
        MemoryRegion e = lif.memoryRegions.get(index);
        return e != null && e.key == (key & 0xff) ? e : null;
    }

    /**
     * A BIND_MW WQE of {@code qp}: the window its imm_data_key names (under its current rkey) gets the new key
     * byte in num_sge_key and opens {@code [va, va + length)} of the MR its lkey names, with the WQE's rights.
     * Returns an ionic status: OK, or MEM_MGMT_OPER_ERR with nothing changed.
     */
    int bind(QueuePair qp, V1.Wqe w) {
        MemoryRegion mw = entry(w.immDataKey());
        if (mw == null || !mw.window()) {
            return bindRefused("rdma-mw-bind-window", "BIND_MW names no memory window under its current rkey");
        }
        if (mw.pd != qp.pd) {
            return bindRefused("rdma-mw-bind-pd", "BIND_MW of a window of another protection domain than the QP's");
        }
        long va = w.bindMwVa(), length = w.bindMwLength();
        int access = w.bindMwFlags() & V1.MRF_ACCESS_MASK;
        if ((access & ~BIND_ACCESS) != 0) {
            return bindRefused("rdma-mw-bind-access", "BIND_MW asks for rights a window cannot have");
        }
        if (mw.windowType == 1 && (access & V1.MRF_ZERO_BASED) != 0) {
            return bindRefused("rdma-mw-bind-state", "BIND_MW of a type 1 window as zero-based (o10-36.2.2)");
        }
        if (mw.windowType == 2 && (mw.valid || length == 0)) {
            return bindRefused("rdma-mw-bind-state", "BIND_MW of a type 2 window that is bound, or with length 0");
        }
        MemoryRegion mr = null;
        if (length != 0) {
            mr = entry(w.bindMwLkey());
            if (mr == null || mr.window() || !mr.valid || mr.mem == null || (mr.flags & V1.MRF_ZERO_BASED) != 0) {
                return bindRefused("rdma-mw-bind-mr", "BIND_MW to an lkey that names no registered, VA-based MR");
            }
            if (mr.pd != qp.pd) {
                return bindRefused("rdma-mw-bind-pd", "BIND_MW to an MR of another protection domain than the QP's");
            }
            if ((mr.flags & V1.MRF_MW_BIND) == 0 || (access & WRITABLE) != 0 && (mr.flags & V1.MRF_LOCAL_WRITE) == 0) {
                return bindRefused("rdma-mw-bind-access",
                        "BIND_MW to an MR without MW_BIND access, or writable through a window but not locally");
            }
            if (!mr.covers(va, length)) {
                return bindRefused("rdma-mw-bind-range", "BIND_MW of a range that is not inside its MR");
            }
        }
        mw.unbind();
        mw.key = w.numSgeKey();
        if (mr != null) {
            mw.target = mr;
            mr.windows++;
            mw.va = va;
            mw.length = length;
            mw.flags = access;
            mw.boundQp = mw.windowType == 2 ? qp : null;
            mw.valid = true;
        }
        path.inc(PathCounter.MW_BINDS);
        return V1.STS_OK;
    }

    private int bindRefused(String cause, String detail) {
        refusals.refuse(cause, detail);
        path.inc(PathCounter.MW_BIND_ERRORS);
        return V1.STS_MEM_MGMT_OPER_ERR;
    }

    /**
     * LOCAL_INV or SEND_INV of a window's rkey: a bound type 2 window lets go of its MR and QP and is free for
     * the next bind. A type 1 window cannot be invalidated (o10-37.2.26), nor a type 2 window that is free.
     */
    boolean invalidate(MemoryRegion mw) {
        if (mw.windowType != 2 || !mw.valid) {
            refusals.refuse("rdma-mw-invalidate", "invalidation of a type 1 window or of a type 2 window not bound");
            path.inc(PathCounter.MW_INVALIDATE_ERRORS);
            return false;
        }
        mw.unbind();
        path.inc(PathCounter.MW_INVALIDATIONS);
        return true;
    }

    /** An MR with windows bound to it is not invalidated, registered again or deregistered (rxe: num_mw). */
    boolean busy(MemoryRegion mr) {
        if (mr.windows == 0) {
            return false;
        }
        refusals.refuse("rdma-mw-mr-busy", "invalidation, registration or deregistration of an MR with windows bound");
        return true;
    }

    /**
     * A remote access to {@code [va, va + len)} under a window's rkey, for {@code access}: the window must be
     * bound, of {@code qp}'s protection domain, for type 2 bound on {@code qp} (the responder's QP; null for an
     * in-process target, which no type 2 window is bound on), allow {@code access}, and hold the range (an
     * offset from its start when zero-based). The MR's part is appended to {@code into}. Returns an ionic status.
     */
    int resolve(QueuePair qp, MemoryRegion mw, long va, long len, int access, Spans into) {
        MemoryRegion mr = mw.target;
        if (!mw.valid || mr == null) {
            return denied("rdma-mw-access-unbound", "an rkey of a window that is not bound");
        }
        if (qp != null && mw.pd != qp.pd) {
            return denied("rdma-mw-access-pd", "a window's rkey on a QP of another protection domain");
        }
        if (mw.windowType == 2 && mw.boundQp != qp) {
            return denied("rdma-mw-access-qp", "a type 2 window's rkey on a QP it is not bound on");
        }
        if ((mw.flags & access) != access) {
            return denied("rdma-mw-access-rights", "an access a window's rights do not allow");
        }
        long off = mw.offset(va);
        if (!MemoryRegion.within(off, len, mw.length)) {
            return denied("rdma-mw-access-range", "an access outside a window's range");
        }
        long at = mw.va + off;
        if (!mr.covers(at, len)) {
            return denied("rdma-mw-access-range", "an access outside a window's range");
        }
        return into.addGuest(mr.mem, mr.offset(at), len) ? V1.STS_OK : V1.STS_LOCAL_QP_OPER_ERR;
    }

    private int denied(String cause, String detail) {
        refusals.refuse(cause, detail);
        path.inc(PathCounter.MW_ACCESS_DENIED);
        return V1.STS_REMOTE_ACC_ERR;
    }
}
