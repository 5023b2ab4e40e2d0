package ernic.model.rdma;

import ernic.model.IonicDriverModel;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;

/**
 * The data path in the manner of libionic: send and receive WQEs (struct ionic_v1_wqe) written in place at the
 * producer index, doorbells as posted stores, and CQEs read in place by their color and turned into work
 * completions (the MSN of an RC send CQE completes every remote WQE before it; a flush reports what is left one
 * by one). Nothing here allocates: the work request and completion objects are the caller's.
 */
final class RdmaDataPath {
    private final IonicDriverModel drv;
    private final MemorySegment ram;
    private final long ramIova, sqDoorbell, rqDoorbell, cqDoorbell;
    private final Qp[] qps;

    RdmaDataPath(IonicDriverModel drv, Qp[] qps, long sqDoorbell, long rqDoorbell, long cqDoorbell) {
        this.drv = drv;
        this.ram = drv.ram();
        this.ramIova = drv.ramIova();
        this.qps = qps;
        this.sqDoorbell = sqDoorbell;
        this.rqDoorbell = rqDoorbell;
        this.cqDoorbell = cqDoorbell;
    }

    private long off(long iova) {
        return iova - ramIova;
    }

    /**
     * Writes one send WQE (struct ionic_v1_wqe) at the SQ producer index; rings the doorbell (a posted 8-byte
     * store) when {@code ring}, else leaves that to {@link #ringSq}.
     */
    void postSend(Qp qp, SendWr wr, boolean ring) {
        if (wr.opcode == LOCAL_INV || wr.opcode == BIND_MW) {
            postLocal(qp, wr, true, ring);
            return;
        }
        int idx = qp.sqProd;
        int stride = 1 << qp.sqStrideLog2;
        long w = startWqe(qp, "send", idx, qp.sqMask, qp.sqCons, qp.sqRing, qp.sqStrideLog2);
        u8(ram, w + WQE_OP, wr.opcode);
        int flags = (wr.signaled ? WQE_FLAG_SIG : 0) | (wr.solicited ? WQE_FLAG_SOL : 0) | (wr.fence ? WQE_FLAG_FENCE : 0);
        long length = 0;
        boolean atomic = wr.opcode == ATOMIC_CS || wr.opcode == ATOMIC_FA;
        if (atomic) {
            u8(ram, w + WQE_NUM_SGE_KEY, 1);
            be32(ram, w + WQE_RDMA_VA_HIGH_BE, (int) (wr.remoteVa >>> 32));
            be32(ram, w + WQE_RDMA_VA_LOW_BE, (int) wr.remoteVa);
            be32(ram, w + WQE_RDMA_RKEY_BE, wr.rkey);
            be32(ram, w + WQE_ATOMIC_SWAP_ADD_HIGH_BE, (int) (wr.swapAdd >>> 32));
            be32(ram, w + WQE_ATOMIC_SWAP_ADD_LOW_BE, (int) wr.swapAdd);
            be32(ram, w + WQE_ATOMIC_COMPARE_HIGH_BE, (int) (wr.compare >>> 32));
            be32(ram, w + WQE_ATOMIC_COMPARE_LOW_BE, (int) wr.compare);
            be64(ram, w + WQE_ATOMIC_SGE + SGE_VA_BE, wr.sgeVa[0]);
            be32(ram, w + WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
            be32(ram, w + WQE_ATOMIC_SGE + SGE_LKEY_BE, wr.sgeLkey[0]);
            length = 8;
        } else {
            if (wr.inline != null) {
                length = wr.inline.byteSize();
                if (length > stride - WQE_PLD) {
                    throw new IllegalArgumentException("inline data of " + length + " bytes > " + (stride - WQE_PLD));
                }
                flags |= WQE_FLAG_INL;
                MemorySegment.copy(wr.inline, 0, ram, w + WQE_PLD, length);
            } else {
                if (wr.numSge > (stride - WQE_PLD) / SGE_SIZE) {
                    throw new IllegalArgumentException(wr.numSge + " SGEs do not fit a " + stride + "-byte WQE");
                }
                u8(ram, w + WQE_NUM_SGE_KEY, wr.numSge);
                for (int i = 0; i < wr.numSge; i++) {
                    long s = w + WQE_PLD + (long) i * SGE_SIZE;
                    be64(ram, s + SGE_VA_BE, wr.sgeVa[i]);
                    be32(ram, s + SGE_LEN_BE, wr.sgeLen[i]);
                    be32(ram, s + SGE_LKEY_BE, wr.sgeLkey[i]);
                    length += Integer.toUnsignedLong(wr.sgeLen[i]);
                }
            }
            if (qp.type == UD) {
                be32(ram, w + WQE_UD_AH_ID_BE, wr.ah == null ? 0 : wr.ah.id());
                be32(ram, w + WQE_UD_DEST_QPN_BE, wr.destQpn);
                be32(ram, w + WQE_UD_DEST_QKEY_BE, wr.qkey);
            } else {
                be32(ram, w + WQE_RDMA_VA_HIGH_BE, (int) (wr.remoteVa >>> 32));
                be32(ram, w + WQE_RDMA_VA_LOW_BE, (int) wr.remoteVa);
                be32(ram, w + WQE_RDMA_RKEY_BE, wr.rkey);
            }
            be32(ram, w + WQE_LENGTH_BE, (int) length);
        }
        if (wr.opcode == SEND_IMM || wr.opcode == WRITE_IMM || wr.opcode == SEND_INV) {
            be32(ram, w + WQE_IMM_DATA_KEY_BE, wr.imm);
        }
        be16(ram, w + WQE_FLAGS_BE, flags);
        qp.sqWrId[idx] = wr.wrId;
        qp.sqOp[idx] = wr.opcode;
        qp.sqLen[idx] = (int) length;
        qp.sqSignaled[idx] = wr.signaled;
        qp.sqSeq[idx] = qp.type == RC && wr.opcode <= ATOMIC_FA ? qp.nextSeq++ : -1;
        qp.sqProd = (idx + 1) & qp.sqMask;
        if (ring) {
            ringSq(qp);
        }
    }

    /**
     * A local work request as libionic writes it: LOCAL_INV (ionic_v1_prep_inv: the rkey in imm_data_key) or
     * BIND_MW (ionic_v1_prep_bind: imm_data_key the window's rkey as the user holds it, num_sge_key the new
     * key, then struct ionic_v1_bind_mw_bdy with the MR's lkey and the flags to_ionic_mr_flags gives the access,
     * plus IS_MW, and INV_EN for type 2). {@code sendPath}: from ibv_post_send rather than ibv_bind_mw. Where
     * libionic answers EINVAL this throws IllegalArgumentException and posts nothing: solicited or inline; a
     * type 1 window through the send path or a type 2 one through bindMw; a type 2 bind of length 0; and a bind
     * with no MR (libionic would read bind_info.mr->lkey).
     */
    void postLocal(Qp qp, SendWr wr, boolean sendPath, boolean ring) {
        boolean bind = wr.opcode == BIND_MW;
        if (wr.solicited || wr.inline != null) {
            throw new IllegalArgumentException("EINVAL: a local work request is neither solicited nor inline");
        }
        if (bind && sendPath == (wr.mw.type == MW_TYPE_1)) {
            throw new IllegalArgumentException("EINVAL: type 1 windows bind with ibv_bind_mw, type 2 with ibv_post_send");
        }
        if (bind && wr.bindLength == 0 && wr.mw.type != MW_TYPE_1) {
            throw new IllegalArgumentException("EINVAL: only a type 1 window unbinds with length 0");
        }
        if (bind && wr.bindMr == null) {
            throw new IllegalArgumentException("libionic reads bind_info.mr->lkey: a bind needs an MR");
        }
        int idx = qp.sqProd;
        long w = startWqe(qp, "send", idx, qp.sqMask, qp.sqCons, qp.sqRing, qp.sqStrideLog2);
        u8(ram, w + WQE_OP, wr.opcode);
        if (bind) {
            u8(ram, w + WQE_NUM_SGE_KEY, wr.bindRkey);
            be32(ram, w + WQE_IMM_DATA_KEY_BE, wr.mw.rkey);
            be64(ram, w + WQE_BIND_MW_VA_BE, wr.bindAddr);
            be64(ram, w + WQE_BIND_MW_LENGTH_BE, wr.bindLength);
            be32(ram, w + WQE_BIND_MW_LKEY_BE, wr.bindMr.lkey());
            be16(ram, w + WQE_BIND_MW_FLAGS_BE, wr.bindAccess & MRF_FROM_IBV
                    | (wr.mw.type == MW_TYPE_1 ? MRF_BIND_MW_1 : MRF_BIND_MW_2));
        } else {
            be32(ram, w + WQE_IMM_DATA_KEY_BE, wr.imm);
        }
        be16(ram, w + WQE_FLAGS_BE, (wr.signaled ? WQE_FLAG_SIG : 0) | (wr.fence ? WQE_FLAG_FENCE : 0));
        qp.sqWrId[idx] = wr.wrId;
        qp.sqOp[idx] = wr.opcode;
        qp.sqLen[idx] = 0;
        qp.sqSignaled[idx] = wr.signaled;
        qp.sqSeq[idx] = -1; // local: completed by its own (NPG) CQE, not by the MSN
        qp.sqProd = (idx + 1) & qp.sqMask;
        if (ring) {
            ringSq(qp);
        }
    }

    /**
     * Slot {@code idx} of a QP's send or receive ring ({@code queue} names which), zeroed, with wqe_id = the ring
     * index as libionic writes it; the address of the slot in guest RAM. A full ring is an IllegalStateException.
     */
    private long startWqe(Qp qp, String queue, int idx, int mask, int cons, long ring, int strideLog2) {
        if (((idx + 1) & mask) == cons) {
            throw new IllegalStateException("QP " + qp.id + " " + queue + " queue full");
        }
        long w = off(ring) + ((long) idx << strideLog2);
        zero(w, 1 << strideLog2);
        le64(ram, w + WQE_ID, idx);
        return w;
    }

    /** Zeroes a WQE slot in place (8 bytes at a time: no slice object per WQE). */
    private void zero(long at, int bytes) {
        for (int o = 0; o < bytes; o += 8) {
            ram.set(ValueLayout.JAVA_LONG_UNALIGNED, at + o, 0L);
        }
    }

    void ringSq(Qp qp) {
        drv.doorbellPosted(sqDoorbell, doorbell(qp.id, 0, qp.sqProd));
    }

    /** A receive with one SGE. */
    void postRecv(Qp qp, long wrId, long va, int len, int lkey) {
        int idx = beginRecv(qp, wrId, 1, len);
        long s = off(qp.rqRing) + ((long) idx << qp.rqStrideLog2) + WQE_PLD;
        be64(ram, s + SGE_VA_BE, va);
        be32(ram, s + SGE_LEN_BE, len);
        be32(ram, s + SGE_LKEY_BE, lkey);
        endRecv(qp);
    }

    /** A receive with the SGEs of {@code wr} (its wrId and SGE list; the rest is ignored). */
    void postRecv(Qp qp, SendWr wr) {
        long total = 0;
        for (int i = 0; i < wr.numSge; i++) {
            total += Integer.toUnsignedLong(wr.sgeLen[i]);
        }
        if (wr.numSge > ((1 << qp.rqStrideLog2) - WQE_PLD) / SGE_SIZE) {
            throw new IllegalArgumentException(wr.numSge + " SGEs do not fit the RQ stride");
        }
        int idx = beginRecv(qp, wr.wrId, wr.numSge, (int) total);
        long w = off(qp.rqRing) + ((long) idx << qp.rqStrideLog2);
        for (int i = 0; i < wr.numSge; i++) {
            long s = w + WQE_PLD + (long) i * SGE_SIZE;
            be64(ram, s + SGE_VA_BE, wr.sgeVa[i]);
            be32(ram, s + SGE_LEN_BE, wr.sgeLen[i]);
            be32(ram, s + SGE_LKEY_BE, wr.sgeLkey[i]);
        }
        endRecv(qp);
    }

    /** RECV WQE header: wqe_id = ring index (as libionic), num_sge, imm_data_key = total length. */
    private int beginRecv(Qp qp, long wrId, int numSge, int total) {
        int idx = qp.rqProd;
        long w = startWqe(qp, "receive", idx, qp.rqMask, qp.rqCons, qp.rqRing, qp.rqStrideLog2);
        u8(ram, w + WQE_NUM_SGE_KEY, numSge);
        be32(ram, w + WQE_IMM_DATA_KEY_BE, total);
        qp.rqWrId[idx] = wrId;
        return idx;
    }

    private void endRecv(Qp qp) {
        qp.rqProd = (qp.rqProd + 1) & qp.rqMask;
        drv.doorbellPosted(rqDoorbell, doorbell(qp.id, 0, qp.rqProd));
    }


    private static int wcOpcode(int sendOp) {
        return switch (sendOp) {
            case WRITE, WRITE_IMM -> WC_RDMA_WRITE;
            case READ -> WC_RDMA_READ;
            case ATOMIC_CS -> WC_COMP_SWAP;
            case ATOMIC_FA -> WC_FETCH_ADD;
            case BIND_MW -> WC_BIND_MW;
            case LOCAL_INV -> WC_LOCAL_INV;
            default -> WC_SEND;
        };
    }

    boolean poll(Cq cq, Wc wc) {
        for (;;) {
            if (cq.flushing != null && flushOne(cq, wc)) {
                return true;
            }
            long e = off(cq.ring) + ((long) cq.cons << CQE_STRIDE_LOG2);
            int qtf = be32(ram, e + CQE_QID_TYPE_FLAGS_BE);
            if (((qtf & CQE_COLOR) != 0) != cq.color) {
                return false;
            }
            cq.cons = (cq.cons + 1) & cq.mask;
            if (cq.cons == 0) {
                cq.color = !cq.color;
            }
            int qid = qtf >>> CQE_QID_SHIFT, type = qtf >>> CQE_TYPE_SHIFT & 7;
            boolean error = (qtf & CQE_ERROR) != 0;
            int statusLength = be32(ram, e + CQE_STATUS_LENGTH_BE);
            Qp qp = qid < qps.length ? qps[qid] : null;
            if (qp == null) {
                throw new IllegalStateException("CQE on CQ " + cq.id + " for unknown QP " + qid);
            }
            wc.qpNum = qid;
            wc.status = error ? statusLength : STS_OK;
            wc.vendorErr = error ? statusLength : 0;
            wc.withImm = wc.withInv = wc.ipv4 = wc.vlan = false;
            wc.imm = wc.srcQp = wc.byteLen = wc.vlanTag = 0;
            wc.srcMac = 0;
            switch (type) {
                case CQE_TYPE_RECV -> {
                    if (error && statusLength == STS_WQE_FLUSHED_ERR) {
                        cq.flushing = qp;
                        cq.flushingSq = false;
                        continue;
                    }
                    long idx = le64(ram, e + CQE_RECV_WQE_ID);
                    if (idx != qp.rqCons) {
                        throw new IllegalStateException("QP " + qid + " receive CQE names WQE " + idx + ", expected "
                                + qp.rqCons);
                    }
                    qp.rqCons = (qp.rqCons + 1) & qp.rqMask;
                    int srcQpnOp = be32(ram, e + CQE_RECV_SRC_QPN_OP_BE);
                    int op = srcQpnOp >>> CQE_RECV_OP_SHIFT & 0x1f;
                    wc.wrId = qp.rqWrId[(int) idx];
                    wc.opcode = op == 3 ? WC_RECV_RDMA_WITH_IMM : WC_RECV;
                    wc.withImm = op == 2 || op == 3;
                    wc.withInv = op == 1;
                    wc.imm = be32(ram, e + CQE_RECV_IMM_DATA_RKEY_BE);
                    wc.srcQp = srcQpnOp & 0xff_ffff;
                    wc.ipv4 = (srcQpnOp & CQE_RECV_IS_IPV4) != 0;
                    wc.vlan = (srcQpnOp & CQE_RECV_IS_VLAN) != 0;
                    wc.vlanTag = be16(ram, e + CQE_RECV_VLAN_TAG_BE);
                    for (int i = 0; i < 6; i++) {
                        wc.srcMac = wc.srcMac << 8 | u8(ram, e + CQE_RECV_SRC_MAC + i);
                    }
                    wc.byteLen = error ? 0 : statusLength;
                    return true;
                }
                case CQE_TYPE_SEND_MSN -> {
                    int msn = be32(ram, e + CQE_SEND_MSN_BE);
                    // Every remote WQE with seq < msn is done; the CQE speaks for seq msn - 1.
                    int last = -1;
                    while (qp.sqCons != qp.sqProd && qp.sqSeq[qp.sqCons] >= 0 && qp.sqSeq[qp.sqCons] - msn < 0) {
                        last = qp.sqCons;
                        qp.sqCons = (qp.sqCons + 1) & qp.sqMask;
                    }
                    if (last < 0 || qp.sqSeq[last] != msn - 1) {
                        throw new IllegalStateException("QP " + qid + ": bad msn " + msn);
                    }
                    if (qp.sqSignaled[last] || error) {
                        fillSend(qp, last, wc);
                        return true;
                    }
                }
                case CQE_TYPE_SEND_NPG -> {
                    if (error && statusLength == STS_WQE_FLUSHED_ERR) {
                        cq.flushing = qp;
                        cq.flushingSq = true;
                        continue;
                    }
                    int idx = (int) le64(ram, e + CQE_SEND_NPG_WQE_ID) & qp.sqMask;
                    if (idx != qp.sqCons) {
                        throw new IllegalStateException("QP " + qid + " send CQE names WQE " + idx + ", expected "
                                + qp.sqCons);
                    }
                    qp.sqCons = (idx + 1) & qp.sqMask;
                    if (qp.sqSignaled[idx] || error) {
                        fillSend(qp, idx, wc);
                        return true;
                    }
                }
                default -> throw new IllegalStateException("unexpected CQE type " + type + " on CQ " + cq.id);
            }
        }
    }

    private static void fillSend(Qp qp, int idx, Wc wc) {
        wc.wrId = qp.sqWrId[idx];
        wc.opcode = wcOpcode(qp.sqOp[idx]);
        wc.byteLen = qp.sqLen[idx];
        wc.srcQp = qp.id;
    }

    /** The next outstanding WQE of a flushed queue, reported with WR_FLUSH_ERR. */
    private boolean flushOne(Cq cq, Wc wc) {
        Qp qp = cq.flushing;
        wc.qpNum = qp.id;
        wc.status = wc.vendorErr = STS_WQE_FLUSHED_ERR;
        wc.byteLen = wc.imm = wc.srcQp = 0;
        wc.withImm = wc.withInv = false;
        if (cq.flushingSq && qp.sqCons != qp.sqProd) {
            fillSend(qp, qp.sqCons, wc);
            wc.byteLen = 0;
            qp.sqCons = (qp.sqCons + 1) & qp.sqMask;
            return true;
        }
        if (!cq.flushingSq && qp.rqCons != qp.rqProd) {
            wc.wrId = qp.rqWrId[qp.rqCons];
            wc.opcode = WC_RECV;
            qp.rqCons = (qp.rqCons + 1) & qp.rqMask;
            return true;
        }
        cq.flushing = null;
        return false;
    }

    /** How long {@link #pollWait} yields between polls before it sleeps, by default. */
    static final long YIELD_NANOS = 50_000;

    /**
     * Polls {@code cq} until one completion arrives or {@code millis} pass. The device writes CQEs into the
     * shared memory, so this spins on the CQE's color; after a short spin it yields the CPU for up to
     * {@code yieldNanos} and then sleeps in 10 µs steps (which on this kind of virtual machine last 50 µs or more),
     * so that on a busy machine the device thread gets the core it needs to make progress. Each miss lets a device
     * that runs only when driven (in-process) run.
     */
    boolean pollWait(Cq cq, Wc wc, int millis, long yieldNanos) {
        long start = System.nanoTime(), deadline = start + millis * 1_000_000L;
        for (int spins = 0; ; spins++) {
            if (poll(cq, wc)) {
                return true;
            }
            drv.device().idle();
            if (spins < 200) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            if (now > deadline) {
                return false;
            }
            if (now - start < yieldNanos) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
    }

    /** Returns the CQ's slots read so far (ring 0) and arms it for the next completion (ring 1) or solicited one (2). */
    void arm(Cq cq, boolean solicitedOnly) {
        drv.doorbellPosted(cqDoorbell, doorbell(cq.id, 0, cq.cons));
        drv.doorbellPosted(cqDoorbell, doorbell(cq.id, solicitedOnly ? 2 : 1, cq.armSeq++));
    }
}
