package ernic.ionic;

import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminCqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RDMA bootstrap devcmds, the admin queue protocol and the admin commands (bring-up §10-§11), sent by the
 * driver model with chosen ids at the offsets of ionic_fw.h.
 */
class RdmaControlPathTest {
    IonicDevice dev;
    ModelGuest guest;
    IonicDriverModel drv;
    RdmaRaw rdma;

    @BeforeEach
    void setUp() throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        guest = new ModelGuest(dev, 16 << 20);
        drv = guest.drv;
        rdma = RdmaVerbs.open(drv).raw(); // Ethernet probe, RESET_LIF, 4 EQs (MSI-X 1..4), admin CQ 0, AQ 0
    }

    @AfterEach
    void tearDown() {
        guest.close();
    }

    /** An RDMA bootstrap command (struct ionic_rdma_queue_cmd) on the Ethernet admin queue; its status. */
    private int bootstrap(int op, int qid, int cid, int depthLog2, int strideLog2, long ring) throws IOException {
        return drv.adminq(RdmaVerbs.queueCmd(op, qid, cid, depthLog2, strideLog2, ring)).status();
    }

    @Test
    void bootstrapRefusesBadQueues() throws IOException {
        long ring = drv.alloc(4096);
        // EQ id beyond the LIF identity's count, an EQ that exists, a bad interrupt, a bad stride.
        assertThat(bootstrap(CMD_RDMA_CREATE_EQ, dev.profile().rdmaEqs(), 1, 10, 2, ring))
                .isEqualTo(IonicDriverModel.EQID);
        assertThat(bootstrap(CMD_RDMA_CREATE_EQ, 0, 1, 10, 2, ring)).isEqualTo(IonicDriverModel.EQID);
        assertThat(bootstrap(CMD_RDMA_CREATE_EQ, 4, 999, 10, 2, ring)).isEqualTo(IonicDriverModel.EINVAL);
        assertThat(bootstrap(CMD_RDMA_CREATE_EQ, 4, 1, 40, 2, ring)).isEqualTo(IonicDriverModel.EINVAL);
        // Ring outside guest memory.
        assertThat(bootstrap(CMD_RDMA_CREATE_ADMINQ, 1, 0, 4, 6, 1L << 40)).isEqualTo(IonicDriverModel.BAD_ADDR);
        // An AQ on a CQ that does not exist.
        assertThat(bootstrap(CMD_RDMA_CREATE_ADMINQ, 1, 77, 4, 6, ring)).isEqualTo(IonicDriverModel.EINVAL);
        // A LIF other than 0.
        ByteBuffer reset = IonicDriverModel.command(CMD_RDMA_RESET_LIF);
        reset.putShort(RQC_LIF_INDEX, (short) 1);
        assertThat(drv.adminq(reset).status()).isEqualTo(IonicDriverModel.ENOENT);
    }

    @Test
    void adminCqeNamesFirstSlotAndEventFollowsArm() throws IOException {
        long ring = drv.alloc(32L * 1024);
        // Arm the admin CQ first: the next CQE sends an EQE on EQ 2 and raises its interrupt (index 3).
        rdma.ringCq(rdma.adminCqId, 1, 1);
        long before = guest.count(rdma.eqVector(2));
        AdminCqe a = rdma.createCq(5, 2, ring, 10);
        assertThat(a.status()).isZero();
        assertThat(a.error()).isFalse();
        assertThat(a.cmdIdx()).isZero();
        assertThat(a.qid()).isEqualTo(rdma.adminQueueId);
        assertThat(a.type()).isEqualTo(CQE_TYPE_ADMIN);
        int evt = rdma.nextEqe(2);
        assertThat(evt).isEqualTo(rdma.adminCqId << EQE_QID_SHIFT | 1);
        assertThat(guest.count(3)).isEqualTo(before + 1);
        // Not armed any more: no event for the next command.
        long sq = drv.alloc(64 * 16), rq = drv.alloc(64 * 16);
        a = rdma.createQp(1, UD, QP_PRIVILEGED, 5, sq, 4, rq, 4);
        assertThat(a.status()).isZero();
        assertThat(a.cmdIdx()).isEqualTo(1);
        assertThat(rdma.nextEqe(2)).isEqualTo(-1);
        // CREATE_QP took two slots: the next command starts at slot 3.
        a = rdma.modifyQp(1, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY, INIT, 0xf, 0x80010000);
        assertThat(a.cmdIdx()).isEqualTo(3);
        assertThat(a.status()).isZero();
        // Arming is a level: CQEs the host was not told about fire at once.
        rdma.ringCq(rdma.adminCqId, 1, 2);
        assertThat(rdma.nextEqe(2)).isEqualTo(rdma.adminCqId << EQE_QID_SHIFT | 1);
        // After the host consumed everything (credit at the producer) an arm waits for the next CQE.
        rdma.ringCq(rdma.adminCqId, 0, rdma.adminCqConsumer());
        rdma.ringCq(rdma.adminCqId, 1, 3);
        assertThat(rdma.nextEqe(2)).isEqualTo(-1);
        assertThat(dev.counters()).containsEntry("rdma.qps", 1L).containsEntry("rdma.cqs", 2L);
    }

    @Test
    void gsiBringUpAndModifyQpRecordsOnlySuccess() throws IOException {
        long cqRing = drv.alloc(32L * 1024);
        assertThat(rdma.createCq(8, 2, cqRing, 10).status()).isZero();
        long sq = drv.alloc(64 * 256), rq = drv.alloc(64 * 1024);
        assertThat(rdma.createQp(1, UD, 0x8300, 8, sq, 8, rq, 10).status()).isZero();
        // RESET -> RTR is not a transition: refused, nothing recorded.
        AdminCqe a = rdma.modifyQp(1, IB_QP_STATE, RTR, 0, 0);
        assertThat(a.status()).isEqualTo(ASTS_BAD_STATE);
        assertThat(a.error()).isTrue();
        assertThat(queryState(1)).isEqualTo(RESET);
        // The ib_core MAD agent: INIT (0x51, garbage from-state), RTR (0x1), RTS (0x10001).
        assertThat(rdma.modifyQp(1, 0x51, INIT, 0xa, 0x80010000).status()).isZero();
        assertThat(rdma.modifyQp(1, 0x1, RTR, 0xb, 0).status()).isZero();
        assertThat(rdma.modifyQp(1, 0x10001, RTS, 0xc, 0).status()).isZero();
        assertThat(queryState(1)).isEqualTo(RTS);
        // IB_QP_CUR_STATE with a from-state that is not the QP's: refused.
        a = rdma.modifyQp(1, IB_QP_STATE | IB_QP_CUR_STATE, SQD, INIT, 0);
        assertThat(a.status()).isEqualTo(ASTS_BAD_STATE);
        assertThat(queryState(1)).isEqualTo(RTS);
        // A second QP 1 is refused; unknown QPs too.
        assertThat(rdma.createQp(1, UD, 0, 8, sq, 8, rq, 10).status()).isEqualTo(ASTS_BAD_STATE);
        assertThat(rdma.modifyQp(77, IB_QP_STATE, INIT, 0, 0).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.createQp(5000, UD, 0, 8, sq, 8, rq, 10).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.createQp(2, 5, 0, 8, sq, 8, rq, 10).status()).isEqualTo(ASTS_BAD_TYPE);
        assertThat(rdma.createQp(2, RC, 0, 99, sq, 8, rq, 10).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.destroy(OP_DESTROY_QP, 1).status()).isZero();
        assertThat(rdma.destroy(OP_DESTROY_QP, 1).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.destroy(OP_DESTROY_CQ, 8).status()).isZero();
        assertThat(dev.counters()).containsEntry("rdma.qps", 0L);
    }

    /** QUERY_QP: the state is the high nibble of query_qp_rq.state_pmtu. */
    private int queryState(int qp) throws IOException {
        long sq = drv.alloc(64), rq = drv.alloc(64);
        assertThat(rdma.queryQp(qp, sq, rq).status()).isZero();
        return u8(guest.at(rq, 1), QRQ_STATE_PMTU) >>> 4;
    }

    @Test
    void memoryRegionsAndAddressHandlesRefuseWithoutLeaking() throws IOException {
        long buf = drv.alloc(3 * 4096);
        long table = drv.alloc(4096);
        MemorySegment t = guest.at(table, 24);
        for (int i = 0; i < 3; i++) {
            le64(t, 8L * i, buf + 4096L * i);
        }
        // User MR over 3 pages with a page table, va at offset 0x10 in the first page.
        assertThat(rdma.createMr(1 << 8 | 0x42, 0x7000_0010L, 3 * 4096 - 0x10, ACCESS_LOCAL_WRITE, 3, table, 12).status())
                .isZero();
        // Same index again: BAD_STATE; index 0 (the reserved DMA lkey) and past nmrs: BAD_INDEX.
        assertThat(rdma.createMr(1 << 8 | 0x43, 0, 4096, 0, 1, buf, 12).status()).isEqualTo(ASTS_BAD_STATE);
        assertThat(rdma.createMr(0x42, 0, 4096, 0, 1, buf, 12).status()).isEqualTo(ASTS_BAD_INDEX);
        // A page table with more pages than the region needs: BAD_ATTR.
        assertThat(rdma.createMr(2 << 8, 0x7000_0000L, 4096, 0, 3, table, 12).status()).isEqualTo(ASTS_BAD_ATTR);
        // A region that wraps the address space.
        assertThat(rdma.createMr(3 << 8, -4096L, 8192, 0, 1, buf, 12).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(dev.counters()).containsEntry("rdma.mrs", 1L);
        assertThat(rdma.destroy(OP_DESTROY_MR, 1 << 8 | 0x42).status()).isZero();
        assertThat(rdma.destroy(OP_DESTROY_MR, 1 << 8 | 0x42).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(dev.counters()).containsEntry("rdma.mrs", 0L);

        // CREATE_AH with an Ethernet/IPv4/UDP template; an oversized template is refused.
        long hdr = drv.alloc(4096);
        MemorySegment h = guest.at(hdr, 42);
        be16(h, 12, 0x0800);
        u8(h, 14, 0x45);
        u8(h, 14 + 8, 64);
        be32(h, 14 + 12, 0x0a090001);
        be32(h, 14 + 16, 0x0a090002);
        be16(h, 34 + 2, 4791);
        assertThat(rdma.createAh(7, hdr, 42).status()).isZero();
        assertThat(rdma.createAh(7, hdr, 42).status()).isEqualTo(ASTS_BAD_STATE);
        assertThat(rdma.createAh(8, hdr, 4000).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(rdma.createAh(1 << 20, hdr, 42).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(rdma.destroy(OP_DESTROY_AH, 7).status()).isZero();
        assertThat(dev.counters()).containsEntry("rdma.ahs", 0L);
        // No-ops succeed; stats with no buffer fail with BAD_ATTR, unknown opcodes with BAD_CMD.
        assertThat(rdma.admin(OP_MODIFY_DCQCN, 4, c -> { }).status()).isZero();
        assertThat(rdma.admin(OP_QUERY_AH, 8, c -> { }).status()).isZero();
        assertThat(rdma.admin(OP_STATS_HDRS, LEN_STATS, c -> { }).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(rdma.admin(40, 4, c -> { }).status()).isEqualTo(ASTS_BAD_CMD);
    }

    @Test
    void injectedStatsValsFaultCompletesWithAnError() throws IOException {
        IonicDevice d = new IonicDevice(ProfileLoader.compat(), FaultPlan.parse("stats-vals:seq=2"));
        try (ModelGuest g = new ModelGuest(d, 8 << 20)) {
            RdmaRaw r = RdmaVerbs.open(g.drv).raw();
            long page = g.alloc(4096);
            assertThat(r.stats(OP_STATS_VALS, page, 4096, 0).status()).isZero();
            AdminCqe failed = r.stats(OP_STATS_VALS, page, 4096, 0);
            assertThat(failed.error()).isTrue();
            assertThat(failed.status()).isEqualTo(ASTS_BAD_STATE);
            assertThat(r.stats(OP_STATS_VALS, page, 4096, 0).status()).isZero();
            // QP_STATS_VALS is not a STATS_VALS occurrence.
            assertThat(d.faults().occurrences(FaultKind.STATS_VALS)).isEqualTo(3);
            assertThat(d.faults().injectedCount(FaultKind.STATS_VALS)).isEqualTo(1);
            assertThat(d.counters()).containsEntry("rdma.hw.admin_errors", 1L);
        }
    }

    @Test
    void aDisconnectZeroesTheCountersAndKeepsTheSession() throws IOException {
        assertThat(rdma.createCq(8, 2, drv.alloc(32L * 1024), 10).status()).isZero();
        assertThat(dev.counters().get("rdma.hw.admin_commands")).isEqualTo(1);
        dev.detach();
        assertThat(dev.lastSessionCounters()).containsEntry("rdma.hw.admin_commands", 1L);
        assertThat(dev.counters()).containsEntry("rdma.hw.admin_commands", 0L).containsEntry("rdma.admin.commands", 0L);
        assertThat(dev.rdma().hwCounters().values()).allMatch(v -> v == 0);
        dev.attach(guest.context); // for tearDown
    }

    @Test
    void resetLifForgetsEverything() throws IOException {
        long cqRing = drv.alloc(32L * 1024);
        assertThat(rdma.createCq(8, 2, cqRing, 10).status()).isZero();
        assertThat(drv.adminq(IonicDriverModel.command(CMD_RDMA_RESET_LIF)).status()).isZero();
        assertThat(dev.counters()).containsEntry("rdma.cqs", 0L);
        // The driver can bring the RDMA side up again without a PCI reset.
        assertThat(bootstrap(CMD_RDMA_CREATE_EQ, 0, 1, 10, 2, drv.alloc(4096))).isZero();
    }
}
