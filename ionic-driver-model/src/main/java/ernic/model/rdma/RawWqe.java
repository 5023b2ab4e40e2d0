package ernic.model.rdma;

import java.lang.foreign.MemorySegment;

import static ernic.model.rdma.Fw.*;

/**
 * A send or receive WQE (struct ionic_v1_wqe) written field by field into a ring slot, for device tests that
 * post what libionic never would (bad opcodes, too many SGEs, oversized inline data). Byte orders are the
 * header's: wqe_id as the host's u64, the rest big-endian.
 */
public final class RawWqe {
    private MemorySegment s;

    /** Works on {@code slot} (zeroed here). */
    public RawWqe wrap(MemorySegment slot) {
        this.s = slot;
        slot.fill((byte) 0);
        return this;
    }

    public MemorySegment segment() {
        return s;
    }

    public RawWqe wqeId(long id) {
        le64(s, WQE_ID, id);
        return this;
    }

    /** enum ionic_v1_op (RdmaVerbs.SEND ... ATOMIC_FA). */
    public RawWqe op(int op) {
        u8(s, WQE_OP, op);
        return this;
    }

    public RawWqe numSgeKey(int n) {
        u8(s, WQE_NUM_SGE_KEY, n);
        return this;
    }

    /** IONIC_V1_FLAG_* (Fw.WQE_FLAG_FENCE, SOL, INL, SIG). */
    public RawWqe flags(int flags) {
        be16(s, WQE_FLAGS_BE, flags);
        return this;
    }

    public RawWqe immDataKey(int v) {
        be32(s, WQE_IMM_DATA_KEY_BE, v);
        return this;
    }

    /** The RDMA part: remote va (high, low) and rkey. */
    public RawWqe rdma(long va, int rkey) {
        be32(s, WQE_RDMA_VA_HIGH_BE, (int) (va >>> 32));
        be32(s, WQE_RDMA_VA_LOW_BE, (int) va);
        be32(s, WQE_RDMA_RKEY_BE, rkey);
        return this;
    }

    /** The UD part: AH id, destination QP number and Q_Key. */
    public RawWqe ud(int ahId, int destQpn, int qkey) {
        be32(s, WQE_UD_AH_ID_BE, ahId);
        be32(s, WQE_UD_DEST_QPN_BE, destQpn);
        be32(s, WQE_UD_DEST_QKEY_BE, qkey);
        return this;
    }

    public RawWqe length(int length) {
        be32(s, WQE_LENGTH_BE, length);
        return this;
    }

    /** The BIND_MW body (struct ionic_v1_bind_mw_bdy): the range, the MR's lkey, enum ionic_mr_flags. */
    public RawWqe bindMw(long va, long length, int lkey, int flags) {
        be64(s, WQE_BIND_MW_VA_BE, va);
        be64(s, WQE_BIND_MW_LENGTH_BE, length);
        be32(s, WQE_BIND_MW_LKEY_BE, lkey);
        be16(s, WQE_BIND_MW_FLAGS_BE, flags);
        return this;
    }

    /** SGE {@code index} of the list at {@code at} (WQE_PLD for sends and receives): va, len, lkey. */
    public RawWqe sge(int at, int index, long va, long len, int lkey) {
        long e = at + (long) SGE_SIZE * index;
        be64(s, e + SGE_VA_BE, va);
        be32(s, e + SGE_LEN_BE, (int) len);
        be32(s, e + SGE_LKEY_BE, lkey);
        return this;
    }
}
