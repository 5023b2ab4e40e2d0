package ernic.ionic;

import ernic.model.rdma.RawCqe;

import static ernic.model.rdma.Fw.CQE_TYPE_RECV;
import static ernic.model.rdma.Fw.WQE_PLD;
import static ernic.model.rdma.Fw.le64;
import static ernic.model.rdma.Fw.u8;
import static ernic.model.rdma.RdmaVerbs.ATOMIC_CS;
import static ernic.model.rdma.RdmaVerbs.ATOMIC_FA;
import static ernic.model.rdma.RdmaVerbs.READ;
import static ernic.model.rdma.RdmaVerbs.SEND_IMM;
import static ernic.model.rdma.RdmaVerbs.WRITE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * RC traffic that the two-device tests send alike, {@link RemoteDataPathTest} across the mesh and
 * {@link WireDataPathTest} as RoCEv2 on a cable, and what it must leave in the guests' memory. Side A posts on its QP
 * {@code qp}, connected to B; both sides have the 4-page MR {@link RdmaDataPathTest#MR} at {@code va}.
 */
final class RcScenario {
    private RcScenario() {}

    /**
     * A receive of 4 KiB at {@code va + 8192} on B's QP {@code rqp}; then a SEND with immediate data 0x0bad_cafe of
     * {@code len} bytes of a pattern from A's MR.
     */
    static void postSendWithImmediate(RawSide a, int qp, RawSide b, int rqp, int len, long va) {
        for (int i = 0; i < len; i++) {
            u8(a.mem(va + i, 1), 0, i ^ 0x5a);
        }
        b.postRecv(rqp, va + 8192, 4096);
        a.postSend(qp, w -> w.op(SEND_IMM).immDataKey(0x0bad_cafe).numSgeKey(1).length(len)
                .sge(WQE_PLD, 0, va, len, RdmaDataPathTest.MR));
    }

    /** B's completion of {@link #postSendWithImmediate}: a receive of {@code len} bytes with the immediate data. */
    static void assertReceived(RawCqe recv, RawSide b, int len, long va) {
        assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recv.error()).isFalse();
        assertThat(recv.statusLength()).isEqualTo(len);
        assertThat(recv.immDataRkey()).isEqualTo(0x0bad_cafe);
        for (int i = 0; i < len; i++) {
            assertThat(u8(b.mem(va + 8192 + i, 1), 0)).isEqualTo((i ^ 0x5a) & 0xff);
        }
    }

    /** A pattern in A's first 4 KiB; a WRITE of it across a page boundary of B's MR, then a READ of it back into A. */
    static void postWriteThenRead(RawSide a, int qp, long va) {
        int mr = RdmaDataPathTest.MR;
        for (int i = 0; i < 4096; i++) {
            u8(a.mem(va + i, 1), 0, i * 7);
        }
        a.postSend(qp, w -> w.op(WRITE).numSgeKey(1).rdma(va + 2048, mr).length(4096)
                .sge(WQE_PLD, 0, va, 4096, mr));
        a.postSend(qp, w -> w.op(READ).numSgeKey(1).rdma(va + 2048, mr).length(4096)
                .sge(WQE_PLD, 0, va + 8192, 4096, mr));
    }

    /** The pattern of {@link #postWriteThenRead} in B's MR at {@code va + 2048} and in A's at {@code va + 8192}. */
    static void assertWrittenAndReadBack(RawSide a, RawSide b, long va) {
        for (int i = 0; i < 4096; i += 97) {
            assertThat(u8(b.mem(va + 2048 + i, 1), 0)).isEqualTo((i * 7) & 0xff);
            assertThat(u8(a.mem(va + 8192 + i, 1), 0)).isEqualTo((i * 7) & 0xff);
        }
    }

    /** B's word at {@code va + 64} set to 40; a fetch-and-add of 2 on it, then a compare-and-swap of 42 for 7. */
    static void postAtomics(RawSide a, RawSide b, int qp, long va) {
        le64(b.mem(va + 64, 8), 0, 40);
        a.postSend(qp, w -> RemoteDataPathTest.atomic(w, ATOMIC_FA, va + 64, 0, 2, va + 128));
        a.postSend(qp, w -> RemoteDataPathTest.atomic(w, ATOMIC_CS, va + 64, 42, 7, va + 136));
    }

    /** Both atomics of {@link #postAtomics} ran once: B's word is 7, and the old values 40 and 42 are in A's MR. */
    static void assertAtomicsRan(RawSide a, RawSide b, long va) {
        assertThat(le64(b.mem(va + 64, 8), 0)).isEqualTo(7);
        assertThat(le64(a.mem(va + 128, 8), 0)).isEqualTo(40);
        assertThat(le64(a.mem(va + 136, 8), 0)).isEqualTo(42);
    }
}
