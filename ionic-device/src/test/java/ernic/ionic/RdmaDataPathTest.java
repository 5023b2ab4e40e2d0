package ernic.ionic;

import ernic.ionic.rdma.RdmaCounters;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminCqe;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RdmaRaw;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The single-VM data path: SEND/RECV, RDMA WRITE/READ, atomics, UD, key checks and completions (§12), posted by
 * the driver model as raw ionic_fw.h WQEs on QPs with chosen ids; CQEs read at the header's offsets.
 */
class RdmaDataPathTest extends RawVerbsTest {
    IonicDriverModel drv;
    long buf, bufVa = 0x7f00_0000_0000L;
    static final int MR = 1 << 8 | 0x11;
    /** The device's RDMA clock: the test moves time on. */
    final MockTicker clock = Ticker.newMockTicker();

    @BeforeEach
    void setUp() throws IOException {
        startGuest(16 << 20);
        dev.rdma().clock(clock);
        drv = guest.drv;
        openRings();
        buf = createMr(guest, rdma, bufVa);
        while (rdma.nextEqe(2) != -1) {
            // the admin CQ starts armed: drop its event
        }
    }

    /** CQ {@link #CQ} on EQ 2, of {@code 1 << CQ_LOG2} entries. */
    static RawCqe.Ring createCq(ModelGuest guest, RdmaRaw rdma) throws IOException {
        return guest.createCq(rdma, CQ, CQ_LOG2);
    }

    /** MR {@link #MR} at {@code va} over 4 new pages, local write + remote read/write/atomic; returns their address. */
    static long createMr(ModelGuest guest, RdmaRaw rdma, long va) throws IOException {
        long pages = guest.alloc(4 * 4096);
        assertThat(rdma.createMr(MR, va, 4 * 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ
                | ACCESS_REMOTE_ATOMIC, 4, guest.pageTable(pages, 4), 12).status()).isZero();
        return pages;
    }

    void qp(int id, int type, int flags, int dest) throws IOException {
        createQp(id, type, flags);
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_QKEY | (type == UD ? 0 : IB_QP_ACCESS_FLAGS), INIT, 0,
                type == UD ? 0x1234 : 0, type == UD ? 0 : QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status())
                .isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE | (type == UD ? 0 : IB_QP_DEST_QPN), RTR, 0, dest).status())
                .isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    /** After an error completion: both QPs through ERROR and RESET back to RTS, rings and MSN from 0. */
    void startOver(int a, int b) throws IOException {
        for (int id : new int[] {a, b}) {
            assertThat(rdma.modifyQp(id, IB_QP_STATE, ERR, 0, 0).status()).isZero();
            assertThat(rdma.modifyQp(id, IB_QP_STATE, RESET, 0, 0).status()).isZero();
            sqProd[id] = rqProd[id] = 0;
        }
        for (int[] p : new int[][] {{a, b}, {b, a}}) {
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, p[1]).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE, RTS, 0, 0).status()).isZero();
        }
    }

    void postRecv(int qp, long va, long len, int lkey) throws IOException {
        postRecv(qp, w -> w.numSgeKey(1).immDataKey((int) len).sge(WQE_PLD, 0, va, len, lkey));
    }

    /** The next CQE that reports work (a copy), or null: "SQ flush received" entries are passed over. */
    RawCqe poll() {
        return cq.pollWork();
    }

    /** The next CQE as the device wrote it (a copy), or null. */
    RawCqe entry() {
        return cq.poll();
    }

    MemorySegment mem(long va, long len) {
        return guest.at(buf + (va - bufVa), len);
    }

    /**
     * A queue's doorbell counts only on its own page: a process (here: dbid 7) cannot ring a queue of the
     * kernel or of another process from its page, nor its own from theirs. Refused and counted.
     */
    @Test
    void aQueuesDoorbellCountsOnlyOnItsOwnPage() throws IOException {
        long cqRing = drv.alloc(32L << CQ_LOG2);
        assertThat(rdma.createCq(9, 2, cqRing, CQ_LOG2, 7).status()).isZero();
        RawCqe.Ring userCq = rdma.cqRing(cqRing, CQ_LOG2);
        sq[4] = drv.alloc(64 * DEPTH);
        rq[4] = drv.alloc(64 * DEPTH);
        assertThat(rdma.createQp(4, RC, 0, 9, sq[4], LOG2, rq[4], LOG2, 7).status()).isZero();
        assertThat(rdma.modifyQp(4, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
        assertThat(rdma.modifyQp(4, IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, 4).status()).isZero();
        assertThat(rdma.modifyQp(4, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        wqe.wrap(guest.at(sq[4], 64)).wqeId(0).op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8)
                .sge(WQE_PLD, 0, bufVa, 8, MR);
        rdma.ringSq(0, 4, 1); // the kernel's page
        rdma.ringSq(3, 4, 1); // another context's page
        assertThat(userCq.poll()).as("nothing ran").isNull();
        assertThat(dev.refusals().count("rdma-db-page")).isEqualTo(2);
        rdma.ringSq(7, 4, 1);
        RawCqe done = userCq.poll();
        assertThat(done).isNotNull();
        assertThat(done.error()).isFalse();
        // A kernel QP's doorbell on a user page is refused too.
        qp(2, RC, 0, 2);
        postRecv(2, bufVa, 64, MR);
        rdma.ringRq(7, 2, rqProd[2]);
        assertThat(dev.refusals().count("rdma-db-page")).isEqualTo(3);
        // A dbid past the LIF's pages is no page at all.
        assertThat(rdma.createQp(5, RC, 0, 9, sq[4], LOG2, rq[4], LOG2, 1024).status()).isEqualTo(ASTS_BAD_ATTR);
    }

    /**
     * The responder's QP access flags (MODIFY_QP IB_QP_ACCESS_FLAGS) decide which remote operations it takes: on
     * RC one it does not allow is a NAK invalid request (rxe: unsupported opcode, class C), on UC a WRITE is
     * dropped. And a key opens only MRs of the QP's protection domain.
     */
    @Test
    void accessFlagsAndProtectionDomainsAreEnforced() throws IOException {
        // QP 3 takes remote WRITEs only.
        sq[2] = drv.alloc(64 * DEPTH);
        rq[2] = drv.alloc(64 * DEPTH);
        sq[3] = drv.alloc(64 * DEPTH);
        rq[3] = drv.alloc(64 * DEPTH);
        int[][] pairs = {{2, 3, QP_REMOTE_READ | QP_REMOTE_WRITE | QP_REMOTE_ATOMIC}, {3, 2, QP_REMOTE_WRITE}};
        for (int[] p : pairs) {
            assertThat(rdma.createQp(p[0], RC, 0, CQ, sq[p[0]], LOG2, rq[p[0]], LOG2).status()).isZero();
        }
        for (int[] p : pairs) {
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, p[2]).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, p[1]).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE, RTS, 0, 0).status()).isZero();
        }
        le64(mem(bufVa, 8), 0, 0x77);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().error()).as("WRITE: allowed").isFalse();
        assertThat(le64(mem(bufVa + 64, 8), 0)).isEqualTo(0x77);
        postSend(2, w -> w.op(READ).numSgeKey(1).rdma(bufVa, MR).length(8).sge(WQE_PLD, 0, bufVa + 128, 8, MR));
        assertThat(poll().statusLength()).as("READ: QP 3 does not allow it").isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(poll()).as("the responder rejects without a completion of its own").isNull();
        assertThat(le64(mem(bufVa + 128, 8), 0)).isZero();
        startOver(2, 3);
        assertThat(rdma.modifyQp(3, IB_QP_STATE | IB_QP_ACCESS_FLAGS, RTS, RTS, 0, QP_REMOTE_WRITE).status()).isZero();
        postSend(2, w -> {
            w.op(ATOMIC_FA).rdma(bufVa + 64, MR);
            be32(w.segment(), WQE_ATOMIC_SWAP_ADD_LOW_BE, 1);
            be64(w.segment(), WQE_ATOMIC_SGE + SGE_VA_BE, bufVa + 128);
            be32(w.segment(), WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
            be32(w.segment(), WQE_ATOMIC_SGE + SGE_LKEY_BE, MR);
        });
        assertThat(poll().statusLength()).as("atomic: not allowed").isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(le64(mem(bufVa + 64, 8), 0)).isEqualTo(0x77);
        assertThat(dev.counters()).containsEntry("rdma.access.denied", 2L);
        startOver(2, 3);

        // An MR of another protection domain: its lkey is a local protection error, its rkey a remote access one.
        long table = drv.alloc(4096);
        le64(guest.at(table, 8), 0, buf);
        int other = 2 << 8 | 0x22;
        assertThat(rdma.createMr(other, bufVa, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE, 1, table, 12, 5)
                .status()).isZero();
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, other));
        assertThat(poll().statusLength()).as("lkey of another PD").isEqualTo(STS_LOCAL_PROT_ERR);
        startOver(2, 3);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, other).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().statusLength()).as("rkey of another PD").isEqualTo(STS_REMOTE_ACC_ERR);

        // UC: a WRITE to a QP that does not allow it is dropped; the sender, which gets no ACK on UC, completes.
        for (int[] p : new int[][] {{4, 5, QP_REMOTE_WRITE}, {5, 4, 0}}) {
            sq[p[0]] = drv.alloc(64 * DEPTH);
            rq[p[0]] = drv.alloc(64 * DEPTH);
            assertThat(rdma.createQp(p[0], 1 /* UC */, 0, CQ, sq[p[0]], LOG2, rq[p[0]], LOG2).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, p[2]).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, p[1]).status()).isZero();
            assertThat(rdma.modifyQp(p[0], IB_QP_STATE, RTS, 0, 0).status()).isZero();
        }
        le64(mem(bufVa + 256, 8), 0, 0);
        postSend(4, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 256, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().error()).as("UC: the sender completes").isFalse();
        assertThat(le64(mem(bufVa + 256, 8), 0)).as("and nothing landed").isZero();
        assertThat(dev.counters()).containsEntry("rdma.access.denied", 3L);
    }

    /**
     * BIND_MW as raw WQEs (struct ionic_v1_bind_mw_bdy, op 10, imm_data_key the window's rkey, num_sge_key the
     * new key), on a window CREATE_MR made with IONIC_MRF_MW_1: a right libionic never asks for is a bind error
     * (MEM_MGMT_OPER, by the local NPG completion); a bound window opens its range under the new key only. The
     * flows libionic and ionic_rdma drive are in MemoryWindowTest.
     */
    @Test
    void bindMwWqesOpenAWindowUnderItsNewKey() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        int bindable = 2 << 8 | 0x22, window = 3 << 8 | 0x33, rkey = 3 << 8 | 0x34;
        assertThat(rdma.createMr(bindable, bufVa, 4096, ACCESS_LOCAL_WRITE | MRF_MW_BIND, 1, buf, 12).status())
                .isZero();
        assertThat(rdma.createMr(window, 0, 0, MRF_MW_1, 0, 0, 0).status()).isZero();
        postSend(3, w -> w.op(10).numSgeKey(0x34).immDataKey(window).flags(WQE_FLAG_SIG)
                .bindMw(bufVa + 1024, 1024, bindable, MRF_REMOTE_WRITE | 0x40 /* ON_DEMAND */ | MRF_BIND_MW_1));
        RawCqe refused = poll();
        assertThat(refused.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(refused.statusLength()).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        assertThat(dev.refusals().count("rdma-mw-bind-access")).isEqualTo(1);
        startOver(2, 3);
        postSend(3, w -> w.op(10).numSgeKey(0x34).immDataKey(window).flags(WQE_FLAG_SIG)
                .bindMw(bufVa + 1024, 1024, bindable, MRF_REMOTE_WRITE | MRF_BIND_MW_1));
        RawCqe bound = poll();
        assertThat(bound.error()).isFalse();
        assertThat(bound.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        le64(mem(bufVa, 8), 0, 0x1234);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 1024, rkey).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().error()).isFalse();
        assertThat(le64(mem(bufVa + 1024, 8), 0)).isEqualTo(0x1234);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 1024, window).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().statusLength()).as("the key before the bind").isEqualTo(STS_REMOTE_ACC_ERR);
    }

    @Test
    void rcSendWaitsForAReceiveThenCompletesBothSides() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        for (int i = 0; i < 100; i++) {
            u8(mem(bufVa + i, 1), 0, i);
        }
        postSend(2, w -> w.op(SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(100).sge(WQE_PLD, 0, bufVa, 100, MR));
        assertThat(poll()).as("no receive posted yet: the send waits").isNull();
        postRecv(3, bufVa + 8192, 4096, MR);
        RawCqe recv = poll(), send = poll();
        assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recv.qid()).isEqualTo(3);
        assertThat(recv.error()).isFalse();
        assertThat(recv.wqeId()).isEqualTo(100);
        assertThat(recv.statusLength()).isEqualTo(100);
        assertThat(recv.srcQpnOp() & 0xffffff).isEqualTo(2);
        assertThat(send.type()).isEqualTo(CQE_TYPE_SEND_MSN);
        assertThat(send.qid()).isEqualTo(2);
        assertThat(send.msn()).isEqualTo(1);
        for (int i = 0; i < 100; i++) {
            assertThat(u8(mem(bufVa + 8192 + i, 1), 0)).isEqualTo(i);
        }
        // Inline SEND_IMM: the immediate reaches the receiver; the MSN goes on.
        postRecv(3, bufVa + 8192, 4096, MR);
        postSend(2, w -> {
            w.op(SEND_IMM).flags(WQE_FLAG_INL).immDataKey(0xabcdef).length(5);
            MemorySegment.copy(MemorySegment.ofArray("hello".getBytes()), 0, w.segment(), WQE_PLD, 5);
        });
        recv = poll();
        send = poll();
        assertThat(recv.immDataRkey()).isEqualTo(0xabcdef);
        assertThat(recv.srcQpnOp() >>> 24 & 0x1f).isEqualTo(CQE_RECV_OP_SEND_IMM);
        assertThat(mem(bufVa + 8192, 5).toArray(ValueLayout.JAVA_BYTE)).isEqualTo("hello".getBytes());
        assertThat(send.msn()).isEqualTo(2);
    }

    @Test
    void rdmaWriteReadAtomicAndKeyChecks() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        be64(mem(bufVa, 8), 0, 0x1122334455667788L);
        // WRITE 8 bytes across the page boundary at 4092.
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 4092, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        RawCqe c = poll();
        assertThat(c.error()).isFalse();
        assertThat(c.msn()).isEqualTo(1);
        assertThat(be32(guest.at(buf + 4092, 4), 0)).isEqualTo(0x11223344);
        assertThat(be32(guest.at(buf + 4096, 4), 0)).isEqualTo(0x55667788);
        // A WRITE past the end of the MR: remote access error, MSN still counts it. Both QPs go to ERROR
        // (the requester by its error completion, the RC responder that rejected it as well).
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 4 * 4096 - 4, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        c = poll();
        assertThat(c.error()).isTrue();
        assertThat(c.statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(c.msn()).isEqualTo(2);
        assertThat(poll()).as("nothing was posted behind it: no flush").isNull();
        startOver(2, 3);
        // A wrong key byte: refused the same way.
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa, MR ^ 1).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver(2, 3);
        // A local SGE through key 0 on an unprivileged QP: local protection error.
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa, MR).length(8).sge(WQE_PLD, 0, buf, 8, 0));
        assertThat(poll().statusLength()).isEqualTo(STS_LOCAL_PROT_ERR);
        startOver(2, 3);
        // READ 8 bytes back into offset 12288.
        postSend(2, w -> w.op(READ).numSgeKey(1).rdma(bufVa + 4092, MR).length(8).sge(WQE_PLD, 0, bufVa + 12288, 8, MR));
        c = poll();
        assertThat(c.error()).isFalse();
        assertThat(be64(mem(bufVa + 12288, 8), 0)).isEqualTo(0x1122334455667788L);
        // Fetch-and-add on 8 aligned bytes: the old value comes back, the new one stays.
        le64(mem(bufVa + 64, 8), 0, 40);
        postSend(2, w -> {
            w.op(ATOMIC_FA).rdma(bufVa + 64, MR);
            be32(w.segment(), WQE_ATOMIC_SWAP_ADD_HIGH_BE, 0);
            be32(w.segment(), WQE_ATOMIC_SWAP_ADD_LOW_BE, 2);
            be64(w.segment(), WQE_ATOMIC_SGE + SGE_VA_BE, bufVa + 128);
            be32(w.segment(), WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
            be32(w.segment(), WQE_ATOMIC_SGE + SGE_LKEY_BE, MR);
        });
        c = poll();
        assertThat(c.error()).isFalse();
        assertThat(le64(mem(bufVa + 64, 8), 0)).isEqualTo(42);
        assertThat(le64(mem(bufVa + 128, 8), 0)).isEqualTo(40);
        assertThat(dev.counters().get("rdma.sq.errors")).isEqualTo(3);
    }

    /**
     * A send error with nothing posted behind it yet is followed at once by an "SQ flush received" entry: the
     * host may have posted more whose doorbell the device has not read, and libionic (rdma-core 65) flushes that
     * only when an entry follows the error in the CQ: a poll of one entry that ends on the error drops the flush
     * it owes (seen as a WR_FLUSH_ERR arriving seconds later, or never, in RdmaFaultInjectionGuestTest). The
     * WQE whose doorbell comes after it is not run and adds no second flush entry.
     */
    @Test
    void aSendErrorWithAnEmptySqIsFollowedByAnSqFlushEntry() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).flags(WQE_FLAG_SIG).rdma(bufVa + 64, MR ^ 0x80).length(8)
                .sge(WQE_PLD, 0, bufVa, 8, MR));
        java.util.List<RawCqe> ofA = new java.util.ArrayList<>(), ofB = new java.util.ArrayList<>();
        for (RawCqe c = entry(); c != null; c = entry()) {
            (c.qid() == 2 ? ofA : ofB).add(c);
        }
        assertThat(ofA).hasSize(2);
        // The responder QP goes to ERROR too, with no completion of its own: nothing to flush, no entry.
        assertThat(ofB).isEmpty();
        RawCqe error = ofA.get(0), flush = ofA.get(1);
        assertThat(error.statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(error.type()).isEqualTo(CQE_TYPE_SEND_MSN);
        assertThat(flush.sqFlushReceived()).as("SEND_NPG, error, WQE_FLUSHED").isTrue();
        le64(mem(bufVa, 8), 0, 0x77);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 128, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(entry()).as("the host flushes it itself").isNull();
        assertThat(le64(mem(bufVa + 128, 8), 0)).as("the WRITE behind the error did not run").isZero();
    }

    /**
     * A receive error on a QP whose RQ completes on a CQ of its own: behind the error there comes an RQ flush entry
     * (RECV, WQE_FLUSHED) in that CQ, so the host flushes receives it posted that the device has not seen. The
     * requester's error is followed by its SQ flush entry in its CQ.
     */
    @Test
    void aReceiveErrorOnAnRqWithItsOwnCqIsFollowedByAnRqFlushEntryThere() throws IOException {
        int rqCqId = 9;
        long ring = drv.alloc(32L << CQ_LOG2);
        assertThat(rdma.createCq(rqCqId, 2, ring, CQ_LOG2).status()).isZero();
        RawCqe.Ring rqCq = rdma.cqRing(ring, CQ_LOG2);
        qp(2, RC, 0, 3);
        sq[3] = drv.alloc(64 * DEPTH);
        rq[3] = drv.alloc(64 * DEPTH);
        assertThat(rdma.createQp(3, RC, 0, CQ, rqCqId, sq[3], LOG2, rq[3], LOG2, 0).status()).isZero();
        assertThat(rdma.modifyQp(3, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, QP_REMOTE_WRITE).status()).isZero();
        assertThat(rdma.modifyQp(3, IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, 2).status()).isZero();
        assertThat(rdma.modifyQp(3, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        postRecv(3, bufVa + 8192, 4, MR); // too small for the SEND
        postSend(2, w -> w.op(SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));

        RawCqe recvError = rqCq.poll(), rqFlush = rqCq.poll();
        assertThat(recvError.qid()).isEqualTo(3);
        assertThat(recvError.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recvError.error()).isTrue();
        assertThat(recvError.statusLength()).isEqualTo(STS_LOCAL_LEN_ERR);
        assertThat(rqFlush.qid()).isEqualTo(3);
        assertThat(rqFlush.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(rqFlush.error()).isTrue();
        assertThat(rqFlush.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(rqCq.poll()).isNull();

        RawCqe sendError = entry(), sqFlush = entry();
        assertThat(sendError.qid()).isEqualTo(2);
        assertThat(sendError.statusLength()).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(sqFlush.qid()).isEqualTo(2);
        assertThat(sqFlush.sqFlushReceived()).isTrue();
        assertThat(entry()).as("QP 3's SQ held nothing and its CQ no error of its own").isNull();
    }

    @Test
    void aSendWithNoReceiveFailsWithRnrAfterFiveSecondsAndWhatFollowsIsFlushed() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        postSend(2, w -> w.op(SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        clock.advance(4, TimeUnit.SECONDS);
        dev.rdma().tick(clock.nanoTime());
        assertThat(poll()).as("4 s: still waiting for a receive").isNull();
        clock.advance(1100, TimeUnit.MILLISECONDS);
        dev.rdma().tick(clock.nanoTime());
        RawCqe rnr = entry();
        assertThat(rnr.error()).isTrue();
        assertThat(rnr.statusLength()).isEqualTo(STS_RNR_RETRY_EXCEEDED);
        RawCqe flushed = entry();
        assertThat(flushed.error()).as("the QP is in ERROR: the WRITE behind it is flushed").isTrue();
        assertThat(flushed.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(flushed.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(le64(mem(bufVa + 64, 8), 0)).as("the WRITE did not run").isZero();
        assertThat(poll()).isNull();
        assertThat(dev.counters()).containsEntry("rdma.rnr.failures", 1L);
        // Work posted to a QP in ERROR is flushed, not run: one flush completion tells the driver.
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll()).as("the driver already flushes this SQ").isNull();
        postRecv(2, bufVa + 8192, 64, MR);
        assertThat(poll().statusLength()).as("the RQ had not been flushed yet").isEqualTo(STS_WQE_FLUSHED_ERR);
        postRecv(2, bufVa + 8192, 64, MR);
        assertThat(poll()).isNull();
        assertThat(le64(mem(bufVa + 64, 8), 0)).isZero();
    }

    static String string(MemorySegment s, long at, int max) {
        byte[] b = s.asSlice(at, max).toArray(ValueLayout.JAVA_BYTE);
        int n = 0;
        while (n < max && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.US_ASCII);
    }

    /** Name to value, from a header list and a value buffer as ionic_hw_stats.c reads them. */
    static java.util.Map<String, Long> parseStats(MemorySegment hdrs, MemorySegment vals) {
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 4096 / 32; i++) {
            int typeOff = be32(hdrs, 32L * i);
            int type = typeOff >>> 28, off = typeOff & ((1 << 28) - 1);
            if (type == 0) {
                break;
            }
            assertThat(type).as("LE64").isEqualTo(4);
            assertThat(off % 8).as("aligned").isZero();
            String name = string(hdrs, 32L * i + STATS_HDR_NAME, STATS_HDR_NAME_SIZE);
            assertThat(name.length()).isLessThan(28);
            m.put(name, le64(vals, off));
        }
        return m;
    }

    AdminCqe stats(int op, long addr, int len, int id) throws IOException {
        return rdma.stats(op, addr, len, id);
    }

    /** The headers and the values of the device ({@code id} 0) or of QP {@code id}, read back by name. */
    java.util.Map<String, Long> readStats(int hdrsOp, int valsOp, int id) throws IOException {
        long hdrs = drv.alloc(4096), vals = drv.alloc(4096);
        assertThat(stats(hdrsOp, hdrs, 4096, id).status()).isZero();
        assertThat(stats(valsOp, vals, 4096, id).status()).isZero();
        return parseStats(guest.at(hdrs, 4096), guest.at(vals, 4096));
    }

    /**
     * The send side of {@link #hwCountersThroughTheStatsCommands}, all of it QP 2's, as the device's stats and as QP
     * 2's (in the device layout): a SEND of 100 bytes and two WRITEs of 8, the second refused by the responder.
     */
    static void assertSentByQp2(java.util.Map<String, Long> stats) {
        assertThat(stats.keySet()).containsExactlyElementsOf(RdmaCounters.deviceNames());
        assertThat(stats).containsEntry("tx_send_reqs", 1L).containsEntry("tx_send_bytes", 100L)
                .containsEntry("tx_rdma_write_reqs", 2L).containsEntry("tx_rdma_write_bytes", 8L)
                // 3 for the SEND and the WRITEs, 1 "SQ flush received" behind the WRITE's error completion
                .containsEntry("send_completions", 4L).containsEntry("completion_errors", 2L)
                .containsEntry("err_remote_acc", 1L);
    }

    @Test
    void hwCountersThroughTheStatsCommands() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        postRecv(3, bufVa + 8192, 4096, MR);
        postSend(2, w -> w.op(SEND).numSgeKey(1).flags(WQE_FLAG_SIG).length(100).sge(WQE_PLD, 0, bufVa, 100, MR));
        assertThat(poll()).isNotNull();
        assertThat(poll()).isNotNull();
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 64, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 4 * 4096 - 4, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        assertThat(poll().error()).isFalse();
        assertThat(poll().error()).isTrue();

        java.util.Map<String, Long> dev = readStats(OP_STATS_HDRS, OP_STATS_VALS, 0);
        assertSentByQp2(dev);
        assertThat(dev).containsEntry("rx_recv_reqs", 1L).containsEntry("rx_recv_bytes", 100L)
                .containsEntry("recv_completions", 1L).containsEntry("seq_err", 0L).containsEntry("cnp_sent", 0L);
        assertThat(dev.get("admin_commands")).isPositive();

        java.util.Map<String, Long> q2 = readStats(OP_QP_STATS_HDRS, OP_QP_STATS_VALS, 2);
        // The QP layout is the device layout: same names at the same offsets (ib_core sums by index).
        assertSentByQp2(q2);
        assertThat(q2).containsEntry("rx_recv_reqs", 0L).containsEntry("admin_commands", 0L)
                .containsEntry("cq_events", 0L);
        assertThat(readStats(OP_QP_STATS_HDRS, OP_QP_STATS_VALS, 3)).containsEntry("rx_recv_reqs", 1L)
                .containsEntry("rx_recv_bytes", 100L).containsEntry("rx_remote_reqs", 1L)
                .containsEntry("recv_completions", 1L).containsEntry("tx_send_reqs", 0L);
        assertThat(this.dev.qpCounters()).containsOnlyKeys(2, 3);
        assertThat(this.dev.qpCounters().get(2)).containsEntry("tx_send_bytes", 100L);

        // Bounds: a QP that does not exist, a header buffer too small, memory outside the guest,
        // and values cut to the length given.
        long hdrs = drv.alloc(4096), vals = drv.alloc(4096);
        assertThat(stats(OP_QP_STATS_VALS, vals, 4096, 77).status()).isEqualTo(ASTS_BAD_INDEX);
        assertThat(stats(OP_STATS_HDRS, hdrs, 64, 0).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(stats(OP_STATS_VALS, 1L << 40, 4096, 0).status()).isEqualTo(ASTS_BAD_ATTR);
        guest.at(vals, 4096).fill((byte) 0x5a);
        assertThat(stats(OP_STATS_VALS, vals, 16, 0).status()).isZero();
        assertThat(le64(guest.at(vals, 8), 0)).isEqualTo(1);
        assertThat(u8(guest.at(vals + 16, 1), 0)).isEqualTo(0x5a);
        assertThat(this.dev.counters()).containsEntry("rdma.hw.tx_send_reqs", 1L);
    }

    @Test
    void udDeliversWithGrhAndChecksTheQkey() throws IOException {
        qp(4, UD, QP_PRIVILEGED, 0);
        qp(5, UD, QP_PRIVILEGED, 0);
        long payload = drv.alloc(4096), recvBuf = drv.alloc(4096);
        guest.at(payload, 4).copyFrom(MemorySegment.ofArray("MAD!".getBytes()));
        // Wrong Q_Key: dropped, the sender still gets its NPG completion.
        postRecv(5, recvBuf, 1024, 0);
        postSend(4, w -> w.op(SEND).numSgeKey(1).ud(0, 5, 0x9999).length(4).sge(WQE_PLD, 0, payload, 4, 0));
        RawCqe c = poll();
        assertThat(c.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(c.npgWqeId()).isZero();
        assertThat(dev.counters().get("rdma.ud.dropped")).isEqualTo(1);
        // A controlled key stands for the sender's own Q_Key (0x1234), which matches.
        postSend(4, w -> w.op(SEND).numSgeKey(1).ud(0, 5, 0x80000000).length(4).sge(WQE_PLD, 0, payload, 4, 0));
        RawCqe recv = poll(), send = poll();
        assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recv.statusLength()).isEqualTo(40 + 4);
        assertThat(recv.srcQpnOp() & 0xffffff).isEqualTo(4);
        assertThat(guest.at(recvBuf + 40, 4).toArray(ValueLayout.JAVA_BYTE)).isEqualTo("MAD!".getBytes());
        assertThat(send.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(send.npgWqeId()).isEqualTo(1);
    }

    @Test
    void armedCqSendsOneEventPerArm() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        while (rdma.nextEqe(2) != -1) {
            // admin CQ events of the QP set-up
        }
        // A new CQ starts armed; arm once more anyway (idempotent).
        rdma.ringCq(CQ, 1, 0);
        postRecv(3, bufVa, 64, MR);
        postSend(2, w -> w.op(SEND).numSgeKey(1).length(8).sge(WQE_PLD, 0, bufVa + 100, 8, MR));
        assertThat(rdma.nextEqe(2)).isEqualTo(CQ << 8 | 1);
        assertThat(rdma.nextEqe(2)).as("one event per arm").isEqualTo(-1);
        assertThat(poll()).isNotNull();
        assertThat(poll()).isNotNull();
        // Armed again after the host read everything: the next CQE fires.
        rdma.ringCq(CQ, 0, cq.consumer());
        rdma.ringCq(CQ, 1, 1);
        assertThat(rdma.nextEqe(2)).isEqualTo(-1);
        postRecv(3, bufVa, 64, MR);
        postSend(2, w -> w.op(SEND).numSgeKey(1).length(8).sge(WQE_PLD, 0, bufVa + 100, 8, MR));
        assertThat(rdma.nextEqe(2)).isEqualTo(CQ << 8 | 1);
    }

    @Test
    void errorStateFlushesPostedReceivesWithOneCompletion() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        postRecv(3, bufVa, 64, MR);
        postRecv(3, bufVa + 64, 64, MR);
        assertThat(rdma.modifyQp(3, IB_QP_STATE, ERR, 0, 0).status()).isZero();
        RawCqe c = poll();
        assertThat(c.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(c.error()).isTrue();
        assertThat(c.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(c.qid()).isEqualTo(3);
        assertThat(poll()).as("one flush completion per queue").isNull();
        // Nothing outstanding on QP 2: no completion for it.
        assertThat(rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status()).isZero();
        assertThat(poll()).isNull();
        // ERROR -> RESET -> INIT is allowed again.
        assertThat(rdma.modifyQp(3, IB_QP_STATE, RESET, 0, 0).status()).isZero();
        assertThat(rdma.modifyQp(3, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
    }

    @Test
    void malformedWqesGetErrorCompletionsAndTheQpGoesToError() throws IOException {
        qp(2, RC, 0, 3);
        qp(3, RC, 0, 2);
        // Inline data longer than the 64-byte stride holds.
        postSend(2, w -> w.op(WRITE).flags(WQE_FLAG_INL).rdma(bufVa, MR).length(200));
        assertThat(poll().statusLength()).isEqualTo(STS_LOCAL_LEN_ERR);
        startOver(2, 3);
        // More SGEs than the stride holds.
        postSend(2, w -> w.op(WRITE).numSgeKey(9).rdma(bufVa, MR).length(8));
        assertThat(poll().statusLength()).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        startOver(2, 3);
        // An SGE of 2 GiB through a bad key, and one that wraps the address space.
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa, MR).sge(WQE_PLD, 0, bufVa, 1L << 31, 0x7777));
        assertThat(poll().statusLength()).isEqualTo(STS_LOCAL_PROT_ERR);
        startOver(2, 3);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa, MR).sge(WQE_PLD, 0, -16L, 64, MR));
        assertThat(poll().statusLength()).isEqualTo(STS_LOCAL_PROT_ERR);
        startOver(2, 3);
        // An unknown opcode, with a good WRITE and a posted receive behind it: the error moves the QP to
        // ERROR, the WRITE never runs and both queues are flushed (one completion each).
        postRecv(2, bufVa + 8192, 64, MR);
        postSend(2, w -> w.op(0x3f));
        le64(mem(bufVa, 8), 0, 0x55);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 256, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        RawCqe c = poll(); // (past the SQ flush entry the error above left)
        assertThat(c.error()).isTrue();
        assertThat(c.statusLength()).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        RawCqe rq = entry(), sqFlush = entry();
        assertThat(rq.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(rq.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(sqFlush.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(sqFlush.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(poll()).isNull();
        assertThat(le64(mem(bufVa + 256, 8), 0)).isZero();
        // Started over, the QP works again.
        startOver(2, 3);
        postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(bufVa + 256, MR).length(8).sge(WQE_PLD, 0, bufVa, 8, MR));
        c = poll();
        assertThat(c.error()).isFalse();
        assertThat(c.msn()).isEqualTo(1);
        assertThat(le64(mem(bufVa + 256, 8), 0)).isEqualTo(0x55);
    }
}
