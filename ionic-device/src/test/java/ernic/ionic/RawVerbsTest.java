package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import org.junit.jupiter.api.AfterEach;

import java.io.IOException;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the tests that drive one device through the driver model's raw verbs build on: a guest of the device in
 * process and its raw RDMA admin verbs; for the data path, CQ {@link #CQ} and the rings of QPs with chosen ids
 * ({@code 1 << LOG2} 64-byte WQEs each), with their producer indexes and the SQ and RQ doorbells on the kernel's
 * doorbell page (dbid 0).
 */
abstract class RawVerbsTest {
    static final int CQ = 8, LOG2 = 4, DEPTH = 1 << LOG2, CQ_LOG2 = 8;

    IonicDevice dev;
    ModelGuest guest;
    RdmaRaw rdma;
    RawCqe.Ring cq;
    final long[] sq = new long[8], rq = new long[8];
    final int[] sqProd = new int[8], rqProd = new int[8];
    final RawWqe wqe = new RawWqe();

    /** A guest with {@code ramBytes} of RAM of a new device (the compat profile, no faults). */
    void startGuest(long ramBytes) {
        startGuest(new IonicDevice(ProfileLoader.compat(), FaultPlan.none()), ramBytes);
    }

    /** A guest with {@code ramBytes} of RAM of {@code device}. */
    void startGuest(IonicDevice device, long ramBytes) {
        dev = device;
        guest = new ModelGuest(dev, ramBytes);
    }

    /** The guest's raw RDMA admin verbs (the RDMA bring-up: EQs, admin CQ and AQ). */
    void openRdma() throws IOException {
        rdma = RdmaVerbs.open(guest.drv).raw();
    }

    /** The guest's raw RDMA admin verbs, and CQ {@link #CQ} on EQ 2 of {@code 1 << CQ_LOG2} entries. */
    void openRings() throws IOException {
        openRdma();
        cq = guest.createCq(rdma, CQ, CQ_LOG2);
    }

    @AfterEach
    void closeGuest() {
        if (guest != null) {
            guest.close();
        }
    }

    /** QP {@code id} of {@code type} on CQ {@link #CQ} (send and receive), in new rings of {@link #DEPTH} WQEs. */
    void createQp(int id, int type, int flags) throws IOException {
        sq[id] = guest.alloc(64 * DEPTH);
        rq[id] = guest.alloc(64 * DEPTH);
        assertThat(rdma.createQp(id, type, flags, CQ, sq[id], LOG2, rq[id], LOG2).status()).isZero();
    }

    /** A send WQE at the SQ producer (wqe_id = its index), then the SQ doorbell on the kernel's doorbell page (the QP's dbid, 0). */
    void postSend(int qp, Consumer<RawWqe> fill) {
        fill.accept(wqe.wrap(guest.at(sq[qp] + 64L * sqProd[qp], 64)).wqeId(sqProd[qp]));
        sqProd[qp] = (sqProd[qp] + 1) & (DEPTH - 1);
        rdma.ringSq(0, qp, sqProd[qp]);
    }

    /** A receive WQE at the RQ producer (wqe_id = 100 + its index), then the RQ doorbell on the kernel's doorbell page. */
    void postRecv(int qp, Consumer<RawWqe> fill) {
        fill.accept(wqe.wrap(guest.at(rq[qp] + 64L * rqProd[qp], 64)).wqeId(100 + rqProd[qp]));
        rqProd[qp] = (rqProd[qp] + 1) & (DEPTH - 1);
        rdma.ringRq(0, qp, rqProd[qp]);
    }
}
