package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --backend none}: the resource commands succeed as counted stubs; the bootstrap and STATS run as usual. */
class StubResourcesTest extends RawVerbsTest {
    @BeforeEach
    void setUp() throws IOException {
        IonicDevice stubbed = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        stubbed.rdma().stubResources(); // before the guest starts
        startGuest(stubbed, 16 << 20);
        openRdma(); // the bootstrap (EQs, admin CQ, AQ) is real: the AQ answers
    }

    @Test
    void resourceCommandsSucceedCreateNothingAndAreCounted() throws IOException {
        long cq = guest.alloc(32L * 1024), sq = guest.alloc(64 * 256), rq = guest.alloc(64 * 1024);
        // The GSI bring-up ib_core does when the driver registers its device.
        assertThat(rdma.createCq(8, 2, cq, 10).status()).isZero();
        assertThat(rdma.createQp(1, UD, 0x8300, 8, sq, 8, rq, 10).status()).isZero();
        assertThat(rdma.modifyQp(1, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY, INIT, 0, 0x80010000).status())
                .isZero();
        // A stub checks nothing: even a second QP 1 "succeeds".
        assertThat(rdma.createQp(1, UD, 0x8300, 8, sq, 8, rq, 10).status()).isZero();
        assertThat(rdma.queryQp(1, guest.alloc(4096), guest.alloc(4096)).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.destroy(OP_DESTROY_QP, 1).status()).isZero();
        assertThat(rdma.destroy(OP_DESTROY_CQ, 8).status()).isZero();
        // STATS is not a resource command: it runs as usual.
        long page = guest.alloc(4096);
        assertThat(rdma.stats(OP_STATS_VALS, page, 4096, 0).status()).isZero();

        assertThat(dev.counters())
                .containsEntry("rdma.stub.create_cq", 1L).containsEntry("rdma.stub.create_qp", 2L)
                .containsEntry("rdma.stub.modify_qp", 1L).containsEntry("rdma.stub.query_qp", 1L)
                .containsEntry("rdma.stub.destroy_qp", 1L).containsEntry("rdma.stub.destroy_cq", 1L)
                .containsEntry("rdma.qps", 0L).containsEntry("rdma.cqs", 1L); // the admin CQ only
    }

    @Test
    void doorbellsOfStubQueuesAreRefusedNotRun() throws IOException {
        long cq = guest.alloc(32L * 1024), sq = guest.alloc(64 * 16), rq = guest.alloc(64 * 16);
        assertThat(rdma.createCq(5, 2, cq, 10).status()).isZero();
        assertThat(rdma.createQp(1, UD, QP_PRIVILEGED, 5, sq, 4, rq, 4).status()).isZero();
        rdma.ringRq(0, 1, 1);
        rdma.ringSq(0, 1, 1);
        assertThat(dev.counters()).containsKey("refused.rdma-db-sq").containsKey("refused.rdma-db-rq")
                .containsEntry("rdma.sq.wqes", 0L);
    }

    @Test
    void aStubbedDeviceJoinsNoMesh() {
        assertThatThrownBy(() -> dev.rdma().attach(null)).isInstanceOf(IllegalStateException.class);
    }
}
