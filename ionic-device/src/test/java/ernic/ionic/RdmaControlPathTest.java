package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Le;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.layout.Be;
import ernic.ionic.rdma.AdminWqe;
import ernic.ionic.rdma.V1;
import ernic.ionic.regs.Opcode;
import ernic.ionic.regs.Status;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** The RDMA bootstrap devcmds, the admin queue protocol and the admin commands (bring-up §10-§11). */
class RdmaControlPathTest {
    FakeGuest guest;
    IonicDevice dev;
    Driver drv;
    RdmaDriver rdma;

    @BeforeEach
    void setUp() {
        guest = new FakeGuest(16 << 20);
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        dev.attach(guest);
        drv = new Driver(dev, guest);
        rdma = new RdmaDriver(drv);
        assertThat(rdma.bootstrap()).isZero();
    }

    @AfterEach
    void tearDown() {
        dev.detach();
        guest.close();
    }

    @Test
    void bootstrapRefusesBadQueues() {
        long ring = guest.alloc(4096);
        // EQ id beyond the LIF identity's count, an EQ that exists, a bad interrupt, a bad stride.
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(dev.profile().rdmaEqs())
                .cid(1).depthStride(10, 2).dmaAddr(ring))).isEqualTo(Status.EQID);
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(0)
                .cid(1).depthStride(10, 2).dmaAddr(ring))).isEqualTo(Status.EQID);
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(4)
                .cid(999).depthStride(10, 2).dmaAddr(ring))).isEqualTo(Status.EINVAL);
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(4)
                .cid(1).depthStride(40, 2).dmaAddr(ring))).isEqualTo(Status.EINVAL);
        // Ring outside guest memory.
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_ADMINQ).qid(1)
                .cid(0).depthStride(4, 6).dmaAddr(1L << 40))).isEqualTo(Status.BAD_ADDR);
        // An AQ on a CQ that does not exist.
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_ADMINQ).qid(1)
                .cid(77).depthStride(4, 6).dmaAddr(ring))).isEqualTo(Status.EINVAL);
        // A LIF other than 0.
        assertThat(rdma.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_RESET_LIF).lifIndex(1)))
                .isEqualTo(Status.ENOENT);
    }

    @Test
    void adminCqeNamesFirstSlotAndEventFollowsArm() {
        long ring = guest.alloc(32L * 1024);
        // Arm the admin CQ first: the next CQE sends an EQE on EQ 2 and raises its interrupt (index 3).
        rdma.cqDoorbell(RdmaDriver.ACQ_ID, 1, 1);
        long before = guest.count(3);
        RdmaDriver.Admin a = rdma.createCq(5, 2, ring, 10);
        assertThat(a.status()).isZero();
        assertThat(a.error()).isFalse();
        assertThat(a.cmdIdx()).isZero();
        assertThat(a.qid()).isEqualTo(RdmaDriver.AQ_ID);
        assertThat(a.type()).isEqualTo(V1.Cqe.TYPE_ADMIN);
        int evt = rdma.nextEqe(2);
        assertThat(evt).isEqualTo(RdmaDriver.ACQ_ID << 8 | 1);
        assertThat(guest.count(3)).isEqualTo(before + 1);
        // Not armed any more: no event for the next command.
        long sq = guest.alloc(64 * 16), rq = guest.alloc(64 * 16);
        a = rdma.createQp(1, V1.QPT_UD, V1.QPF_PRIVILEGED, 5, sq, 4, rq, 4);
        assertThat(a.status()).isZero();
        assertThat(a.cmdIdx()).isEqualTo(1);
        assertThat(rdma.nextEqe(2)).isEqualTo(-1);
        // CREATE_QP took two slots: the next command starts at slot 3.
        a = rdma.modifyQp(1, V1.IB_QP_STATE | V1.IB_QP_PKEY_INDEX | V1.IB_QP_QKEY, V1.QPS_INIT, 0xf, 0x80010000);
        assertThat(a.cmdIdx()).isEqualTo(3);
        assertThat(a.status()).isZero();
        // Arming is a level: CQEs the host was not told about fire at once.
        rdma.cqDoorbell(RdmaDriver.ACQ_ID, 1, 2);
        assertThat(rdma.nextEqe(2)).isEqualTo(RdmaDriver.ACQ_ID << 8 | 1);
        // After the host consumed everything (credit at the producer) an arm waits for the next CQE.
        rdma.cqDoorbell(RdmaDriver.ACQ_ID, 0, rdma.acqCons);
        rdma.cqDoorbell(RdmaDriver.ACQ_ID, 1, 3);
        assertThat(rdma.nextEqe(2)).isEqualTo(-1);
        assertThat(dev.counters()).containsEntry("rdma.qps", 1L).containsEntry("rdma.cqs", 2L);
    }

    @Test
    void gsiBringUpAndModifyQpRecordsOnlySuccess() {
        long cqRing = guest.alloc(32L * 1024);
        assertThat(rdma.createCq(8, 2, cqRing, 10).status()).isZero();
        long sq = guest.alloc(64 * 256), rq = guest.alloc(64 * 1024);
        assertThat(rdma.createQp(1, V1.QPT_UD, 0x8300, 8, sq, 8, rq, 10).status()).isZero();
        // RESET -> RTR is not a transition: refused, nothing recorded.
        RdmaDriver.Admin a = rdma.modifyQp(1, V1.IB_QP_STATE, V1.QPS_RTR, 0, 0);
        assertThat(a.status()).isEqualTo(V1.ASTS_BAD_STATE);
        assertThat(a.error()).isTrue();
        assertThat(queryState(1)).isEqualTo(V1.QPS_RESET);
        // The ib_core MAD agent: INIT (0x51, garbage from-state), RTR (0x1), RTS (0x10001).
        assertThat(rdma.modifyQp(1, 0x51, V1.QPS_INIT, 0xa, 0x80010000).status()).isZero();
        assertThat(rdma.modifyQp(1, 0x1, V1.QPS_RTR, 0xb, 0).status()).isZero();
        assertThat(rdma.modifyQp(1, 0x10001, V1.QPS_RTS, 0xc, 0).status()).isZero();
        assertThat(queryState(1)).isEqualTo(V1.QPS_RTS);
        // IB_QP_CUR_STATE with a from-state that is not the QP's: refused.
        a = rdma.modifyQp(1, V1.IB_QP_STATE | V1.IB_QP_CUR_STATE, V1.QPS_SQD, V1.QPS_INIT, 0);
        assertThat(a.status()).isEqualTo(V1.ASTS_BAD_STATE);
        assertThat(queryState(1)).isEqualTo(V1.QPS_RTS);
        // A second QP 1 is refused; unknown QPs too.
        assertThat(rdma.createQp(1, V1.QPT_UD, 0, 8, sq, 8, rq, 10).status()).isEqualTo(V1.ASTS_BAD_STATE);
        assertThat(rdma.modifyQp(77, V1.IB_QP_STATE, V1.QPS_INIT, 0, 0).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(rdma.createQp(5000, V1.QPT_UD, 0, 8, sq, 8, rq, 10).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(rdma.createQp(2, 5, 0, 8, sq, 8, rq, 10).status()).isEqualTo(V1.ASTS_BAD_TYPE);
        assertThat(rdma.createQp(2, V1.QPT_RC, 0, 99, sq, 8, rq, 10).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_QP, 1).status()).isZero();
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_QP, 1).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_CQ, 8).status()).isZero();
        assertThat(dev.counters()).containsEntry("rdma.qps", 0L);
    }

    private int queryState(int qp) {
        long sq = guest.alloc(64), rq = guest.alloc(64);
        RdmaDriver.Admin a = rdma.admin(V1.ADMIN_QUERY_QP, AdminWqe.QueryQp.LEN, c -> new AdminWqe.QueryQp()
                .wrap(c, 0).sqDmaAddr(sq).rqDmaAddr(rq).idVer(qp));
        assertThat(a.status()).isZero();
        return new AdminWqe.QueryQpRq().wrap(guest.at(rq, AdminWqe.QueryQpRq.SIZE), 0).state();
    }

    @Test
    void memoryRegionsAndAddressHandlesRefuseWithoutLeaking() {
        long buf = guest.alloc(3 * 4096);
        long table = guest.alloc(4096);
        MemorySegment t = guest.at(table, 24);
        for (int i = 0; i < 3; i++) {
            Le.put64(t, 8L * i, buf + 4096L * i);
        }
        // User MR over 3 pages with a page table, va at offset 0x10 in the first page.
        assertThat(rdma.createMr(1 << 8 | 0x42, 0x7000_0010L, 3 * 4096 - 0x10, V1.MRF_LOCAL_WRITE, 3, table, 12).status()).isZero();
        // Same index again: BAD_STATE; index 0 (the reserved DMA lkey) and past nmrs: BAD_INDEX.
        assertThat(rdma.createMr(1 << 8 | 0x43, 0, 4096, 0, 1, buf, 12).status()).isEqualTo(V1.ASTS_BAD_STATE);
        assertThat(rdma.createMr(0x42, 0, 4096, 0, 1, buf, 12).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        // A page table with more pages than the region needs: BAD_ATTR.
        assertThat(rdma.createMr(2 << 8, 0x7000_0000L, 4096, 0, 3, table, 12).status()).isEqualTo(V1.ASTS_BAD_ATTR);
        // A region that wraps the address space.
        assertThat(rdma.createMr(3 << 8, -4096L, 8192, 0, 1, buf, 12).status()).isEqualTo(V1.ASTS_BAD_ATTR);
        assertThat(dev.counters()).containsEntry("rdma.mrs", 1L);
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_MR, 1 << 8 | 0x42).status()).isZero();
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_MR, 1 << 8 | 0x42).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(dev.counters()).containsEntry("rdma.mrs", 0L);

        // CREATE_AH with an Ethernet/IPv4/UDP template; an oversized template is refused.
        long hdr = guest.alloc(4096);
        MemorySegment h = guest.at(hdr, 42);
        Be.put16(h, 12, 0x0800);
        Le.put8(h, 14, 0x45);
        Le.put8(h, 14 + 8, 64);
        Be.put32(h, 14 + 12, 0x0a090001);
        Be.put32(h, 14 + 16, 0x0a090002);
        Be.put16(h, 34 + 2, 4791);
        assertThat(createAh(7, hdr, 42).status()).isZero();
        assertThat(createAh(7, hdr, 42).status()).isEqualTo(V1.ASTS_BAD_STATE);
        assertThat(createAh(8, hdr, 4000).status()).isEqualTo(V1.ASTS_BAD_ATTR);
        assertThat(createAh(1 << 20, hdr, 42).status()).isEqualTo(V1.ASTS_BAD_INDEX);
        assertThat(rdma.destroy(V1.ADMIN_DESTROY_AH, 7).status()).isZero();
        assertThat(dev.counters()).containsEntry("rdma.ahs", 0L);
        // No-ops succeed; stats with no buffer fail with BAD_ATTR, unknown opcodes with BAD_CMD.
        assertThat(rdma.admin(V1.ADMIN_MODIFY_DCQCN, 4, c -> { }).status()).isZero();
        assertThat(rdma.admin(V1.ADMIN_QUERY_AH, 8, c -> { }).status()).isZero();
        assertThat(rdma.admin(V1.ADMIN_STATS_HDRS, 17, c -> { }).status()).isEqualTo(V1.ASTS_BAD_ATTR);
        assertThat(rdma.admin(40, 4, c -> { }).status()).isEqualTo(V1.ASTS_BAD_CMD);
    }

    private RdmaDriver.Admin createAh(int id, long hdr, int len) {
        return rdma.admin(V1.ADMIN_CREATE_AH, AdminWqe.CreateAh.LEN, c -> new AdminWqe.CreateAh().wrap(c, 0)
                .dmaAddr(hdr).length(len).idVer(id));
    }

    @Test
    void injectedStatsValsFaultCompletesWithAnError() {
        FakeGuest g = new FakeGuest(8 << 20);
        IonicDevice d = new IonicDevice(ProfileLoader.compat(), FaultPlan.parse("stats-vals:seq=2"));
        d.attach(g);
        try {
            RdmaDriver r = new RdmaDriver(new Driver(d, g));
            assertThat(r.bootstrap()).isZero();
            long page = g.alloc(4096);
            java.util.function.Consumer<MemorySegment> cmd = c -> new AdminWqe.Stats().wrap(c, 0)
                    .dmaAddr(page).length(4096);
            assertThat(r.admin(V1.ADMIN_STATS_VALS, AdminWqe.Stats.LEN, cmd).status()).isZero();
            RdmaDriver.Admin failed = r.admin(V1.ADMIN_STATS_VALS, AdminWqe.Stats.LEN, cmd);
            assertThat(failed.error()).isTrue();
            assertThat(failed.status()).isEqualTo(V1.ASTS_BAD_STATE);
            assertThat(r.admin(V1.ADMIN_STATS_VALS, AdminWqe.Stats.LEN, cmd).status()).isZero();
            // QP_STATS_VALS is not a STATS_VALS occurrence.
            assertThat(d.faults().occurrences(ernic.ionic.fault.FaultKind.STATS_VALS)).isEqualTo(3);
            assertThat(d.faults().injectedCount(ernic.ionic.fault.FaultKind.STATS_VALS)).isEqualTo(1);
            assertThat(d.counters()).containsEntry("rdma.hw.admin_errors", 1L);
        } finally {
            d.detach();
            g.close();
        }
    }

    @Test
    void aDisconnectZeroesTheCountersAndKeepsTheSession() {
        assertThat(rdma.createCq(8, 2, guest.alloc(32L * 1024), 10).status()).isZero();
        assertThat(dev.counters().get("rdma.hw.admin_commands")).isEqualTo(1);
        dev.detach();
        assertThat(dev.lastSessionCounters()).containsEntry("rdma.hw.admin_commands", 1L);
        assertThat(dev.counters()).containsEntry("rdma.hw.admin_commands", 0L).containsEntry("rdma.admin.commands", 0L);
        assertThat(dev.rdma().hwCounters().values()).allMatch(v -> v == 0);
        dev.attach(guest); // for tearDown
    }

    @Test
    void resetLifForgetsEverything() {
        long cqRing = guest.alloc(32L * 1024);
        assertThat(rdma.createCq(8, 2, cqRing, 10).status()).isZero();
        assertThat(rdma.devcmd(s -> Le.put8(s, 0, Opcode.RDMA_RESET_LIF))).isZero();
        assertThat(dev.counters()).containsEntry("rdma.cqs", 0L);
        // The driver can bring the RDMA side up again without a PCI reset.
        RdmaDriver again = new RdmaDriver(drv);
        long ring = guest.alloc(4096);
        assertThat(again.devcmd(s -> new V1.QueueCmd().wrap(s, 0).opcode(Opcode.RDMA_CREATE_EQ).qid(0).cid(1)
                .depthStride(10, 2).dmaAddr(ring))).isZero();
    }
}
