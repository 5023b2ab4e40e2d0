package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.AdminException;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Mw;
import ernic.model.rdma.Qp;
import ernic.model.rdma.Wc;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static ernic.model.rdma.Fw.MRF_MW_1;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Memory windows (issue 19) as libionic and ionic_rdma drive them, through the driver model in process:
 * ibv_alloc_mw (CREATE_MR with IS_MW), ibv_bind_mw for type 1 and a BIND_MW posted with ibv_post_send for
 * type 2, remote WRITE / READ / atomics through a window's rkey, LOCAL_INV and SEND_INV, ibv_dealloc_mw
 * (DESTROY_MR); the refusals with Soft-RoCE's rules (rxe_mw.c) and statuses: a bind error is MEM_MGMT_OPER
 * (IBV_WC_MW_BIND_ERR), a remote access a window does not allow is REMOTE_ACC.
 */
class MemoryWindowTest extends RcPairTest {
    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final int RW = ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
    static final long PAGE = 4096;

    Buffer bufA, bufB;
    /** a's MR (local SGEs); b's MR: local write and MW_BIND only, so only windows open it to a peer. */
    Mr mrA, mrB;

    @BeforeEach
    void setUp() throws IOException {
        startRcPair(new IonicDevice(ProfileLoader.compat(), FaultPlan.none()));
        bufA = v.buffer(4 * PAGE, true);
        bufB = v.buffer(4 * PAGE, true);
        mrA = v.regMr(bufA, 0, bufA.length, ALL);
        mrB = v.regMr(bufB, 0, bufB.length, ACCESS_LOCAL_WRITE | ACCESS_MW_BIND);
    }

    Wc next(Cq cq) {
        assertThat(v.pollWait(cq, wc, 2000)).as("a completion on CQ " + cq.id).isTrue();
        return wc;
    }

    static byte[] pattern(int n, int seed) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i * 7 + seed);
        }
        return p;
    }

    long counter(String name) {
        return dev.counters().getOrDefault(name, -1L);
    }

    /** An RDMA WRITE of {@code n} bytes of bufA at {@code from} to {@code remoteVa} under {@code rkey}, from a. */
    int write(long from, int n, long remoteVa, int rkey) {
        return rdma(WRITE, from, n, remoteVa, rkey);
    }

    /** An RDMA READ of {@code n} bytes at {@code remoteVa} under {@code rkey} into bufA at {@code into}, by a. */
    int read(long into, int n, long remoteVa, int rkey) {
        return rdma(READ, into, n, remoteVa, rkey);
    }

    /** RDMA {@code opcode} by a between bufA at {@code local} and {@code remoteVa} under {@code rkey}; its status. */
    private int rdma(int opcode, long local, int n, long remoteVa, int rkey) {
        wr.reset().sge(mrA.va() + local, n, mrA.lkey());
        wr.opcode = opcode;
        wr.remoteVa = remoteVa;
        wr.rkey = rkey;
        v.postSend(a, wr);
        return next(cqA).status;
    }

    /** ibv_bind_mw of type 1 window {@code mw} on {@code qp}; the completion's status. */
    int bind1(Qp qp, Mw mw, Mr mr, long addr, long length, int access) {
        wr.reset().bind(mw, 0, mr, addr, length, access);
        v.bindMw(qp, mw, wr);
        Wc done = next(qp.sendCq);
        assertThat(done.opcode).isEqualTo(WC_BIND_MW);
        return done.status;
    }

    /** A type 2 bind posted on {@code qp} (the window to have {@code rkey}); the completion's status. */
    int bind2(Qp qp, Mw mw, int rkey, Mr mr, long addr, long length, int access) {
        wr.reset().bind(mw, rkey, mr, addr, length, access);
        v.postSend(qp, wr);
        Wc done = next(qp.sendCq);
        assertThat(done.opcode).isEqualTo(WC_BIND_MW);
        return done.status;
    }

    /** A local invalidation of {@code rkey} posted on {@code qp}; the completion's status. */
    int localInv(Qp qp, int rkey) {
        wr.reset().opcode = LOCAL_INV;
        wr.imm = rkey;
        v.postSend(qp, wr);
        Wc done = next(qp.sendCq);
        assertThat(done.opcode).isEqualTo(WC_LOCAL_INV);
        return done.status;
    }

    @Test
    void aType1WindowOpensItsRangeOfTheMrForRemoteWriteAndRead() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_1);
        int first = mw.rkey;
        assertThat(counter("rdma.mws")).isEqualTo(1);
        assertThat(counter("rdma.mrs")).isEqualTo(2);
        assertThat(bind1(a, mw, mrB, mrB.va() + PAGE, 2 * PAGE, RW)).isEqualTo(STS_OK);
        assertThat(mw.rkey).as("ibv_bind_mw moves the key byte on").isEqualTo(incRkey(first));
        assertThat(mw.rkey >>> 8).isEqualTo(first >>> 8);

        byte[] msg = pattern(5000, 3); // across the pages of a scattered buffer
        bufA.put(0, msg);
        assertThat(write(0, msg.length, mrB.va() + PAGE + 1000, mw.rkey)).isEqualTo(STS_OK);
        assertThat(bufB.get(PAGE + 1000, msg.length)).isEqualTo(msg);
        assertThat(read(8192, msg.length, mrB.va() + PAGE + 1000, mw.rkey)).isEqualTo(STS_OK);
        assertThat(bufA.get(8192, msg.length)).isEqualTo(msg);
        assertThat(counter("rdma.mw.binds")).isEqualTo(1);

        // The MR's own rkey opens nothing to a peer: it has no remote rights.
        assertThat(write(0, 8, mrB.va() + PAGE, mrB.rkey())).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        // The window's rkey from before the bind is stale.
        assertThat(write(0, 8, mrB.va() + PAGE, first)).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        // A type 1 window may be bound again, by any QP of its PD: the old range closes.
        int before = mw.rkey;
        assertThat(bind1(b, mw, mrB, mrB.va(), PAGE, ACCESS_REMOTE_WRITE)).isEqualTo(STS_OK);
        assertThat(mw.rkey).isEqualTo(incRkey(before));
        assertThat(write(0, 8, mrB.va() + 8, mw.rkey)).isEqualTo(STS_OK);
        assertThat(write(0, 8, mrB.va() + PAGE + 8, mw.rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(dev.refusals().count("rdma-mw-access-range")).isEqualTo(1);
    }

    @Test
    void anAccessOutsideTheWindowIsARemoteAccessError() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_1);
        assertThat(bind1(a, mw, mrB, mrB.va() + PAGE, PAGE, RW)).isEqualTo(STS_OK);
        bufB.fill(0, bufB.length, (byte) 0x55);
        bufA.put(0, pattern(16, 1));
        assertThat(write(0, 8, mrB.va() + 2 * PAGE - 4, mw.rkey)).as("past its end").isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(cqB.poll(wc)).as("the responder rejects without a completion of its own").isFalse();
        assertThat(bufB.get(2 * PAGE - 4, 8)).containsOnly(0x55);
        startOver();
        assertThat(write(0, 8, mrB.va() + PAGE - 4, mw.rkey)).as("before its start").isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        assertThat(read(64, 16, -8, mw.rkey)).as("wrapping").isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        assertThat(write(0, 8, mrB.va() + 2 * PAGE - 8, mw.rkey)).as("its last 8 bytes").isEqualTo(STS_OK);
        assertThat(counter("rdma.mw.access_denied")).isEqualTo(3);
        assertThat(dev.refusals().count("rdma-mw-access-range")).isEqualTo(3);
    }

    @Test
    void aWindowGrantsOnlyItsRightsAndWritableOnlyOverALocallyWritableMr() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_1);
        assertThat(bind1(a, mw, mrB, mrB.va(), 2 * PAGE, ACCESS_REMOTE_READ)).isEqualTo(STS_OK);
        assertThat(read(0, 64, mrB.va() + 128, mw.rkey)).isEqualTo(STS_OK);
        assertThat(write(0, 8, mrB.va() + 128, mw.rkey)).as("no remote write").isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(dev.refusals().count("rdma-mw-access-rights")).isEqualTo(1);
        startOver();

        // Atomics through a window that allows them.
        assertThat(bind1(a, mw, mrB, mrB.va(), PAGE, ACCESS_REMOTE_ATOMIC)).isEqualTo(STS_OK);
        bufB.putLong(64, 40);
        wr.reset().sge(mrA.va() + 256, 8, mrA.lkey());
        wr.opcode = ATOMIC_FA;
        wr.remoteVa = mrB.va() + 64;
        wr.rkey = mw.rkey;
        wr.swapAdd = 2;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(bufA.getLong(256)).isEqualTo(40);
        assertThat(bufB.getLong(64)).isEqualTo(42);

        // Remote write or atomic through a window needs local write on the MR (C10-74); remote read does not.
        Mr readOnly = v.regMr(bufB, 0, bufB.length, ACCESS_MW_BIND);
        Mw other = v.allocMw(MW_TYPE_1);
        int otherKey = other.rkey;
        assertThat(bind1(a, other, readOnly, readOnly.va(), PAGE, ACCESS_REMOTE_WRITE)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        assertThat(dev.refusals().count("rdma-mw-bind-access")).isEqualTo(1);
        startOver();
        other.rkey = otherKey; // a failed bind is undone by the user (libionic moved the rkey when it posted)
        assertThat(bind1(a, other, readOnly, readOnly.va(), PAGE, ACCESS_REMOTE_READ)).isEqualTo(STS_OK);
        assertThat(read(0, 8, readOnly.va(), other.rkey)).isEqualTo(STS_OK);
    }

    @Test
    void aType2WindowIsBoundByPostSendForOneQpAndSendInvFreesIt() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_2);
        int rkey = incRkey(mw.rkey);
        // libionic: type 2 only through ibv_post_send, type 1 only through ibv_bind_mw, type 2 never of length 0.
        assertThatThrownBy(() -> v.bindMw(b, mw, wr.reset().bind(mw, rkey, mrB, mrB.va(), PAGE, RW)))
                .isInstanceOf(IllegalArgumentException.class);
        Mw one = v.allocMw(MW_TYPE_1);
        assertThatThrownBy(() -> v.postSend(b, wr.reset().bind(one, 0, mrB, mrB.va(), PAGE, RW)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> v.postSend(b, wr.reset().bind(mw, rkey, mrB, mrB.va(), 0, RW)))
                .isInstanceOf(IllegalArgumentException.class);

        assertThat(bind2(b, mw, rkey, mrB, mrB.va() + PAGE, PAGE, RW)).isEqualTo(STS_OK);
        mw.rkey = rkey; // libionic leaves ibv_mw.rkey to its user
        bufA.put(0, pattern(100, 9));
        assertThat(write(0, 100, mrB.va() + PAGE, rkey)).as("a peer of b").isEqualTo(STS_OK);
        assertThat(bufB.get(PAGE, 100)).isEqualTo(pattern(100, 9));

        // Not through a QP it is not bound to (type 2B), even of its PD.
        Qp c = v.createQp(RC, cqA, cqA, 4, 4, 7, QP_ALL), d = v.createQp(RC, cqB, cqB, 4, 4, 7, QP_ALL);
        connect(c, d);
        wr.reset().sge(mrA.va(), 8, mrA.lkey());
        wr.opcode = WRITE;
        wr.remoteVa = mrB.va() + PAGE;
        wr.rkey = rkey;
        v.postSend(c, wr);
        assertThat(next(cqA).status).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(dev.refusals().count("rdma-mw-access-qp")).isEqualTo(1);

        // SEND_INV from the peer frees it: the receive says so, and the rkey opens nothing any more.
        v.postRecv(b, 7, mrB.va(), 64, mrB.lkey());
        wr.reset().sge(mrA.va(), 16, mrA.lkey());
        wr.opcode = SEND_INV;
        wr.imm = rkey;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        Wc recv = next(cqB);
        assertThat(recv.status).isEqualTo(STS_OK);
        assertThat(recv.withInv).isTrue();
        assertThat(recv.imm).isEqualTo(rkey);
        assertThat(counter("rdma.mw.invalidations")).isEqualTo(1);
        assertThat(write(0, 8, mrB.va() + PAGE, rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(dev.refusals().count("rdma-mw-access-unbound")).isEqualTo(1);
        startOver();

        // Free again: it binds anew, under the rkey its user holds, with the next key.
        int again = incRkey(rkey);
        assertThat(bind2(b, mw, again, mrB, mrB.va(), PAGE, ACCESS_REMOTE_WRITE)).isEqualTo(STS_OK);
        mw.rkey = again;
        assertThat(write(0, 8, mrB.va() + 16, again)).isEqualTo(STS_OK);
        assertThat(counter("rdma.mw.binds")).isEqualTo(2);
    }

    @Test
    void localInvFreesAType2WindowButNotAType1One() throws IOException {
        Mw two = v.allocMw(MW_TYPE_2);
        int rkey = incRkey(two.rkey);
        assertThat(bind2(b, two, rkey, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        two.rkey = rkey;
        assertThat(localInv(a, rkey)).as("from any QP, as rxe").isEqualTo(STS_OK);
        assertThat(write(0, 8, mrB.va(), rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        assertThat(localInv(b, rkey)).as("a free window").isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();

        Mw one = v.allocMw(MW_TYPE_1);
        assertThat(bind1(a, one, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        assertThat(localInv(b, one.rkey)).as("type 1 (o10-37.2.26)").isEqualTo(STS_MEM_MGMT_OPER_ERR);
        assertThat(counter("rdma.mw.invalidate_errors")).isEqualTo(2);
        startOver();
        assertThat(write(0, 8, mrB.va(), one.rkey)).as("still bound").isEqualTo(STS_OK);

        // A SEND_INV naming a type 1 window: the data lands, the receive fails (rxe's class J), the send is
        // acknowledged; the window stays bound.
        bufA.put(0, pattern(16, 4));
        v.postRecv(b, 9, mrB.va() + 2 * PAGE, 64, mrB.lkey());
        wr.reset().sge(mrA.va(), 16, mrA.lkey());
        wr.opcode = SEND_INV;
        wr.imm = one.rkey;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(next(cqB).status).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(bufB.get(2 * PAGE, 16)).as("the data landed").isEqualTo(pattern(16, 4));
        startOver();
        assertThat(write(0, 8, mrB.va(), one.rkey)).isEqualTo(STS_OK);
    }

    @Test
    void bindsThatBreakARuleFailWithTheBindErrorAndChangeNothing() throws IOException {
        Mw one = v.allocMw(MW_TYPE_1);
        int key = one.rkey;
        // An MR without MW_BIND access.
        Mr noBind = v.regMr(bufB, 0, bufB.length, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE);
        assertThat(bind1(a, one, noBind, noBind.va(), PAGE, RW)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        // libionic moved the rkey on when it posted: the device did not, so the next bind names a stale key.
        assertThat(one.rkey).isEqualTo(incRkey(key));
        assertThat(bind1(a, one, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        assertThat(dev.refusals().count("rdma-mw-bind-window")).isEqualTo(1);
        startOver();
        one.rkey = key; // what rxe tells its users to do after a failed bind
        // A range past the MR's end, and one that starts before it.
        assertThat(bind1(a, one, mrB, mrB.va() + bufB.length - 100, 200, RW)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        one.rkey = key;
        assertThat(bind1(a, one, mrB, mrB.va() - 64, 128, RW)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        one.rkey = key;
        assertThat(dev.refusals().count("rdma-mw-bind-range")).isEqualTo(2);
        // A type 1 window is never zero-based (o10-36.2.2).
        assertThat(bind1(a, one, mrB, mrB.va(), PAGE, RW | ACCESS_ZERO_BASED)).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        one.rkey = key;
        // Another protection domain: libibverbs refuses an MR of another PD for type 1 (EPERM) ...
        int pd2 = v.allocPd();
        Mr elsewhere = v.regMr(pd2, bufB, 0, bufB.length, ACCESS_LOCAL_WRITE | ACCESS_MW_BIND);
        assertThatThrownBy(() -> v.bindMw(a, one, wr.reset().bind(one, 0, elsewhere, elsewhere.va(), PAGE, RW)))
                .isInstanceOf(IllegalArgumentException.class);
        // ... the device refuses a window, or an MR, of another PD than the QP's.
        Mw two = v.allocMw(MW_TYPE_2);
        assertThat(bind2(b, two, incRkey(two.rkey), elsewhere, elsewhere.va(), PAGE, RW))
                .isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        Mw foreign = v.allocMw(pd2, MW_TYPE_2);
        assertThat(bind2(b, foreign, incRkey(foreign.rkey), elsewhere, elsewhere.va(), PAGE, RW))
                .isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        assertThat(dev.refusals().count("rdma-mw-bind-pd")).isEqualTo(2);
        // A type 2 window that is bound already.
        int rkey = incRkey(two.rkey);
        assertThat(bind2(b, two, rkey, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        assertThat(bind2(b, two, incRkey(rkey), mrB, mrB.va() + PAGE, PAGE, RW)).as("under the old rkey")
                .isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        two.rkey = rkey;
        assertThat(bind2(b, two, incRkey(rkey), mrB, mrB.va() + PAGE, PAGE, RW)).as("under its rkey")
                .isEqualTo(STS_MEM_MGMT_OPER_ERR);
        assertThat(dev.refusals().count("rdma-mw-bind-state")).isEqualTo(2);
        startOver();
        // Nothing changed: the first binding of each still stands, and the type 1 window binds under its key.
        assertThat(write(0, 8, mrB.va() + 8, rkey)).isEqualTo(STS_OK);
        assertThat(write(0, 8, mrB.va() + PAGE + 8, rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        assertThat(bind1(a, one, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        assertThat(counter("rdma.mw.bind_errors")).isEqualTo(9);
        assertThat(counter("rdma.mw.binds")).isEqualTo(2);
    }

    @Test
    void aZeroLengthBindUnbindsAType1Window() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_1);
        assertThat(bind1(a, mw, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        int bound = mw.rkey;
        assertThat(bind1(a, mw, mrB, 0, 0, 0)).isEqualTo(STS_OK);
        assertThat(mw.rkey).as("libionic keeps the key for an unbind").isEqualTo(bound);
        assertThat(write(0, 8, mrB.va(), mw.rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(dev.refusals().count("rdma-mw-access-unbound")).isEqualTo(1);
    }

    @Test
    void aZeroBasedType2WindowTakesOffsetsFromItsStart() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_2);
        int rkey = incRkey(mw.rkey);
        assertThat(bind2(b, mw, rkey, mrB, mrB.va() + 2 * PAGE, PAGE, RW | ACCESS_ZERO_BASED)).isEqualTo(STS_OK);
        bufA.put(0, pattern(32, 5));
        assertThat(write(0, 32, 100, rkey)).isEqualTo(STS_OK);
        assertThat(bufB.get(2 * PAGE + 100, 32)).isEqualTo(pattern(32, 5));
        assertThat(write(0, 8, PAGE - 4, rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
    }

    @Test
    void aWindowsKeyIsNoLkey() throws IOException {
        Mw mw = v.allocMw(MW_TYPE_1);
        assertThat(bind1(a, mw, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        wr.reset().sge(mrB.va(), 8, mw.rkey);
        wr.opcode = WRITE;
        wr.remoteVa = mrA.va();
        wr.rkey = mrA.rkey();
        v.postSend(b, wr);
        assertThat(next(cqB).status).isEqualTo(STS_LOCAL_PROT_ERR);
    }

    @Test
    void deallocClosesTheWindowAndTheMrStaysWhileWindowsAreBound() throws IOException {
        Mw one = v.allocMw(MW_TYPE_1), two = v.allocMw(MW_TYPE_2);
        assertThat(bind1(a, one, mrB, mrB.va(), PAGE, RW)).isEqualTo(STS_OK);
        int rkey = incRkey(two.rkey);
        assertThat(bind2(b, two, rkey, mrB, mrB.va() + PAGE, PAGE, RW)).isEqualTo(STS_OK);
        assertThat(counter("rdma.mws")).isEqualTo(2);

        // rxe: an MR with windows bound is not deregistered (IBA 10.6.7.2.6), nor invalidated.
        assertThatThrownBy(() -> v.deregMr(mrB)).isInstanceOfSatisfying(AdminException.class,
                e -> assertThat(e.status).isEqualTo(ASTS_BAD_STATE));
        assertThat(localInv(a, mrB.rkey())).isEqualTo(STS_MEM_MGMT_OPER_ERR);
        startOver();
        assertThat(dev.refusals().count("rdma-mw-mr-busy")).isEqualTo(2);

        v.deallocMw(one);
        assertThat(write(0, 8, mrB.va(), one.rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        assertThat(write(0, 8, mrB.va() + PAGE, rkey)).as("the other window").isEqualTo(STS_OK);
        v.deallocMw(two);
        assertThat(write(0, 8, mrB.va() + PAGE, rkey)).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(counter("rdma.mws")).isZero();
        v.deregMr(mrB);
        assertThat(counter("rdma.mrs")).isEqualTo(1);

        // CREATE_MR of a window with pages is malformed.
        assertThat(v.raw().createMr(4000 << 8 | 1, 0, 0, MRF_MW_1, 1, bufB.page(0), 12).status())
                .isEqualTo(ASTS_BAD_ATTR);
    }
}
