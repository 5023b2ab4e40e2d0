package ernic.ionic;

import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One guest of a two-device test ({@link RemoteDataPathTest}, {@link WireDataPathTest}): the driver model on a
 * {@link ModelGuest} of the device, raw ionic_fw.h WQEs ({@link RawWqe}) posted on QPs with chosen ids (0 to 7), the
 * CQ {@link #CQ} (from {@link RdmaDataPathTest#createCq}) and the 4-page MR {@link RdmaDataPathTest#MR} at
 * {@code va}.
 */
abstract class RawSide {
    static final int CQ = 8, LOG2 = 4, DEPTH = 1 << LOG2;

    final IonicDevice dev;
    final ModelGuest guest;
    final RdmaRaw rdma;
    final RawWqe wqe = new RawWqe();
    final long[] sq = new long[8], rq = new long[8];
    final int[] sqProd = new int[8], rqProd = new int[8], sqMask = new int[8];
    private final long va;
    /** The CQ, and the guest address of the MR's pages: set by {@link #open}. */
    RawCqe.Ring cq;
    long buf;

    /** The guest of {@code dev}; {@link #open} then creates the CQ and the MR. */
    RawSide(IonicDevice dev, long va) throws IOException {
        this.dev = dev;
        this.va = va;
        guest = new ModelGuest(dev, 32 << 20); // room for a 16 MiB MR: the longest WRITE, in pieces
        rdma = RdmaVerbs.open(guest.drv).raw();
    }

    /** The CQ and the MR, once the device is set up as the test wants it. */
    final void open() throws IOException {
        cq = RdmaDataPathTest.createCq(guest, rdma);
        buf = RdmaDataPathTest.createMr(guest, rdma, va);
    }

    /** The rings of QP {@code id}: an SQ of {@code 1 << sqLog2} slots and an RQ of {@link #DEPTH}, the SQ from slot 0. */
    void rings(int id, int sqLog2) {
        sq[id] = guest.alloc(64L << sqLog2);
        rq[id] = guest.alloc(64 * DEPTH);
        sqProd[id] = 0;
        sqMask[id] = (1 << sqLog2) - 1;
    }

    /** A UD QP through INIT (Q_Key 0x1234), RTR and RTS. */
    void ud(int id) throws IOException {
        rings(id, LOG2);
        assertThat(rdma.createQp(id, UD, QP_PRIVILEGED, CQ, sq[id], LOG2, rq[id], LOG2).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_QKEY, INIT, 0, 0x1234).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTR, 0, 0).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    /** A send WQE at the SQ producer (wqe_id = its index), then the SQ doorbell on the kernel's doorbell page (0). */
    void postSend(int qp, Consumer<RawWqe> fill) {
        fill.accept(wqe.wrap(guest.at(sq[qp] + 64L * sqProd[qp], 64)).wqeId(sqProd[qp]));
        sqProd[qp] = (sqProd[qp] + 1) & sqMask[qp];
        rdma.ringSq(0, qp, sqProd[qp]);
    }

    /** A receive of {@code len} bytes at {@code va} of the MR (wqe_id 100 + its index), then the RQ doorbell. */
    void postRecv(int qp, long va, long len) {
        wqe.wrap(guest.at(rq[qp] + 64L * rqProd[qp], 64)).wqeId(100 + rqProd[qp]).numSgeKey(1)
                .sge(WQE_PLD, 0, va, len, RdmaDataPathTest.MR);
        rqProd[qp] = (rqProd[qp] + 1) & (DEPTH - 1);
        rdma.ringRq(0, qp, rqProd[qp]);
    }

    /** The MR's bytes at virtual address {@code at}. */
    MemorySegment mem(long at, long len) {
        return guest.at(buf + (at - va), len);
    }
}
