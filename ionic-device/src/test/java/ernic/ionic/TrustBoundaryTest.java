package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.rdma.RdmaLif;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Trust-boundary rules of one device, each at its bound, driven by the driver model: the ring depths CREATE_CQ and
 * CREATE_QP take, the 2 GiB SGE sum (the max_msg_sz the driver reports), and the controlled Q_Key of a UD QP that
 * has none. Every refusal gets the status the driver expects, a counter and one log line per cause
 * ({@code Refusals}).
 */
class TrustBoundaryTest extends RawVerbsTest {
    static final int MR = 1 << 8 | 0x11, HUGE = 2 << 8 | 0x22;
    static final long VA = 0x7f00_0000_0000L, HUGE_VA = 0x7f20_0000_0000L;
    static final long GIB = 1L << 30;
    long buf;

    @BeforeEach
    void setUp() throws IOException {
        startGuest(64 << 20);
        openRings();
        buf = guest.alloc(4096);
        assertThat(rdma.createMr(MR, VA, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ, 1, buf,
                12).status()).isZero();
    }

    long refusals(String cause) {
        return dev.refusals().count(cause);
    }

    // ---------------------------------------------------------------------------------------------
    // Page-table budget

    /**
     * The device holds at most {@link RdmaLif#PAGE_BUDGET} page-table entries (8 bytes of server heap each) for the
     * guest at once: two MRs of the largest table (2^24 entries, every entry the same page, as a hostile guest
     * would write them) fit, a third is refused with BAD_ATTR and counted, and fits once one of the two is gone.
     * A reset gives everything back.
     */
    @Test
    void pageTablesBeyondTheDeviceBudgetAreRefusedUntilOneIsFreed() throws IOException {
        int entries = ernic.ionic.rdma.PageTable.MAX_PAGES;
        assertThat(2L * entries).isEqualTo(RdmaLif.PAGE_BUDGET);
        IonicDevice big = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        try (ModelGuest g = new ModelGuest(big, (8L * entries) + (16 << 20))) {
            RdmaRaw raw = RdmaVerbs.open(g.drv).raw();
            long page = g.alloc(4096);
            long table = g.alloc(8L * entries);
            MemorySegment t = g.at(table, 8L * entries);
            for (long i = 0; i < entries; i++) {
                t.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, page); // little-endian host: as the driver writes it
            }
            long length = (long) entries << 12;
            int a = 1 << 8 | 1, b = 2 << 8 | 2, c = 3 << 8 | 3;
            assertThat(raw.createMr(a, VA, length, ACCESS_LOCAL_WRITE, entries, table, 12).status()).isZero();
            assertThat(raw.createMr(b, VA, length, ACCESS_LOCAL_WRITE, entries, table, 12).status()).isZero();
            assertThat(big.rdma().pagesHeld()).isEqualTo(RdmaLif.PAGE_BUDGET);
            assertThat(raw.createMr(c, VA, length, ACCESS_LOCAL_WRITE, entries, table, 12).status())
                    .isEqualTo(ernic.ionic.rdma.V1.ASTS_BAD_ATTR);
            assertThat(big.refusals().count("rdma-page-budget")).isEqualTo(1);
            assertThat(raw.destroy(OP_DESTROY_MR, a).status()).isZero();
            assertThat(raw.createMr(c, VA, length, ACCESS_LOCAL_WRITE, entries, table, 12).status()).isZero();
            assertThat(big.rdma().pagesHeld()).isEqualTo(RdmaLif.PAGE_BUDGET);
            big.rdma().reset();
            assertThat(big.rdma().pagesHeld()).isZero();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Ring depths

    /**
     * CREATE_CQ takes a depth (log2) of 1 to 16: 0 (a ring of one slot, which holds nothing; ionic_rdma never
     * asks for it) and 17 (past the 16-bit doorbell index) are refused with BAD_ATTR, which the driver turns into
     * EINVAL, and nothing is created. The depth is a log2, so a depth that is not a power of two cannot be asked.
     */
    @Test
    void createCqTakesDepths1To16() throws IOException {
        long ring = guest.alloc(32L << 16);
        long before = dev.counters().get("rdma.cqs");
        assertThat(rdma.createCq(9, 2, ring, 0).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(rdma.createCq(9, 2, ring, 17).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(rdma.createCq(9, 2, ring, 255).status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(refusals("rdma-cq-geometry")).isEqualTo(3);
        assertThat(dev.counters().get("rdma.cqs")).as("nothing created").isEqualTo(before);
        assertThat(rdma.createCq(9, 2, ring, 16).status()).as("the most: 65536 CQEs").isZero();
        assertThat(rdma.createCq(10, 2, ring, 1).status()).as("the least: 2 CQEs").isZero();
        assertThat(dev.counters().get("rdma.cqs")).isEqualTo(before + 2);
    }

    /** CREATE_QP takes SQ and RQ depths (log2) of 1 to 16; a QP with either ring out of bounds is not created. */
    @Test
    void createQpTakesDepths1To16OnBothRings() throws IOException {
        long sqRing = guest.alloc(64L << 16), rqRing = guest.alloc(64L << 16);
        int[][] refused = {{0, 4}, {4, 0}, {17, 4}, {4, 17}, {255, 255}};
        for (int[] d : refused) {
            assertThat(rdma.createQp(2, RC, 0, CQ, sqRing, d[0], rqRing, d[1]).status())
                    .as("sq %d rq %d", d[0], d[1]).isEqualTo(ASTS_BAD_ATTR);
        }
        assertThat(refusals("rdma-qp-geometry")).isEqualTo(refused.length);
        assertThat(dev.counters().get("rdma.qps")).as("nothing created").isZero();
        assertThat(rdma.createQp(2, RC, 0, CQ, sqRing, 16, rqRing, 16).status()).as("the most").isZero();
        assertThat(rdma.createQp(3, RC, 0, CQ, guest.alloc(128), 1, guest.alloc(128), 1).status()).as("the least")
                .isZero();
        assertThat(dev.counters().get("rdma.qps")).isEqualTo(2);
    }

    // ---------------------------------------------------------------------------------------------
    // The SGE sum

    void rc(int id, int dest) throws IOException {
        createQp(id, RC, 0);
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, QP_REMOTE_WRITE | QP_REMOTE_READ)
                .status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, dest).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    void startOver(int id, int dest) throws IOException {
        assertThat(rdma.modifyQp(id, IB_QP_STATE, ERR, 0, 0).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RESET, 0, 0).status()).isZero();
        sqProd[id] = rqProd[id] = 0;
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, QP_REMOTE_WRITE | QP_REMOTE_READ)
                .status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, dest).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    /** The status of the next completion: 0, or its error status. */
    int next() {
        RawCqe c = cq.pollWork();
        assertThat(c).as("a completion").isNotNull();
        return c.error() ? c.statusLength() : 0;
    }

    /**
     * The driver reports max_msg_sz 2 GiB (ionic_rdma's ionic_query_port), so the device takes a WQE whose SGEs add
     * up to exactly 2 GiB and fails one with a byte more with LOCAL_LEN_ERR (counted, logged once): SEND, WRITE and
     * READ, one SGE or two, and a sum past 4 GiB that a 32-bit length would wrap to 8 bytes is not truncated.
     * The SGEs lie in a 5 GiB MR (contiguous bus addresses, checked for range, not copied from); the WQEs that
     * pass the length rule name a bad rkey, so they fail with REMOTE_ACC_ERR before a byte moves.
     */
    @Test
    void aWqeOfAtMost2GiBIsTakenAndOneByteMoreIsALengthError() throws IOException {
        assertThat(rdma.createMr(HUGE, HUGE_VA, 5 * GIB, ACCESS_LOCAL_WRITE, 1, buf, 12).status()).isZero();
        rc(2, 3);
        rc(3, 2);
        int badRkey = MR ^ 0x80;
        long[][] under = {{2 * GIB}, {GIB, GIB}};
        for (int op : new int[] {WRITE, READ}) {
            for (long[] sges : under) {
                postSend(2, w -> sges(w.op(op).rdma(VA, badRkey), sges));
                assertThat(next()).as("op %d, %d SGEs, 2 GiB", op, sges.length).isEqualTo(STS_REMOTE_ACC_ERR);
                startOver(2, 3);
                startOver(3, 2);
            }
        }
        assertThat(refusals("rdma-sge-sum")).isZero();

        long[][] over = {{2 * GIB + 1}, {GIB, GIB + 1}, {0xffff_ffffL}, {4 * GIB - 8, 16}};
        int n = 0;
        for (int op : new int[] {SEND, WRITE, READ}) {
            for (long[] sges : over) {
                postSend(2, w -> sges(w.op(op).rdma(VA, MR), sges));
                assertThat(next()).as("op %d, SGEs %s", op, java.util.Arrays.toString(sges))
                        .isEqualTo(STS_LOCAL_LEN_ERR);
                startOver(2, 3);
                n++;
            }
        }
        assertThat(refusals("rdma-sge-sum")).isEqualTo(n);
        assertThat(dev.counters().get("rdma.sq.errors")).isGreaterThanOrEqualTo(n);
    }

    static RawWqe sges(RawWqe w, long[] lengths) {
        w.numSgeKey(lengths.length);
        long va = HUGE_VA;
        for (int i = 0; i < lengths.length; i++) {
            w.sge(WQE_PLD, i, va, lengths[i], HUGE);
            va += lengths[i];
        }
        return w;
    }

    // ---------------------------------------------------------------------------------------------
    // Controlled Q_Keys

    /** A UD QP; with {@code qkey} null, MODIFY_QP never gives it a Q_Key. */
    void ud(int id, int flags, Integer qkey) throws IOException {
        createQp(id, UD, flags);
        int mask = IB_QP_STATE | (qkey == null ? 0 : IB_QP_QKEY);
        assertThat(rdma.modifyQp(id, mask, INIT, 0, qkey == null ? 0 : qkey).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTR, 0, 0).status()).isZero();
        assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
    }

    void postRecv(int qp, long va) {
        postRecv(qp, w -> w.numSgeKey(1).sge(WQE_PLD, 0, va, 256, MR));
    }

    void datagram(int from, int to, int qkey) {
        postSend(from, w -> w.op(SEND).numSgeKey(1).ud(0, to, qkey).length(4).sge(WQE_PLD, 0, VA + 2048, 4, MR));
    }

    /**
     * A Q_Key with the high-order bit set is controlled: the device sends the sending QP's own Q_Key instead (IB
     * spec, and the seed), so a process cannot reach QP 1 by writing its well-known key 0x80010000 into a WQE. A
     * QP that has no Q_Key cannot send a controlled one: LOCAL_QP_OPER_ERR, nothing delivered, counted
     * ({@code rdma.access.denied}, refusal {@code rdma-ud-controlled-qkey}) and logged once. It used to go out as
     * Q_Key 0 and land in any QP whose Q_Key is 0.
     */
    @Test
    void aControlledQkeyFromAQpWithoutOneIsRefused() throws IOException {
        ud(1, QP_PRIVILEGED, 0x8001_0000); // the GSI QP: its Q_Key is the well-known controlled one
        ud(4, 0, 0x1234);
        ud(5, 0, 0);
        ud(6, 0, null);
        postRecv(1, VA);
        postRecv(5, VA + 256);
        guest.at(buf + 2048, 4).copyFrom(MemorySegment.ofArray("MAD!".getBytes()));

        // QP 4 writes QP 1's key as a controlled key: its own (0x1234) goes instead, and QP 1 drops it.
        datagram(4, 1, 0x8001_0000);
        assertThat(next()).as("the sender completes").isEqualTo(0);
        assertThat(cq.poll()).isNull();
        assertThat(dev.counters().get("rdma.ud.dropped")).isEqualTo(1);

        // QP 6 has no Q_Key: a controlled key is refused at the sender; QP 5 (Q_Key 0) receives nothing.
        datagram(6, 5, 0x8000_0000);
        RawCqe c = cq.poll();
        assertThat(c.error()).isTrue();
        assertThat(c.statusLength()).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        assertThat(c.qid()).isEqualTo(6);
        assertThat(cq.poll()).as("nothing delivered to QP 5").isNull();
        datagram(6, 5, 0x8000_0000);
        assertThat(next()).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        assertThat(refusals("rdma-ud-controlled-qkey")).isEqualTo(2);
        assertThat(dev.counters().get("rdma.access.denied")).isEqualTo(2);

        // QP 6 may still send under a Q_Key it names in full.
        datagram(6, 5, 0);
        RawCqe recv = cq.poll(), send = cq.poll();
        assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recv.srcQpnOp() & 0xffffff).isEqualTo(6);
        assertThat(guest.at(buf + 256 + 40, 4).toArray(ValueLayout.JAVA_BYTE)).isEqualTo("MAD!".getBytes());
        assertThat(send.error()).isFalse();

        // The GSI QP's own controlled key stands for itself: a MAD from QP 1 to QP 1 lands.
        datagram(1, 1, 0x8000_0000);
        recv = cq.poll();
        assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
        assertThat(recv.error()).isFalse();
        assertThat(recv.srcQpnOp() & 0xffffff).isEqualTo(1);
        assertThat(next()).isEqualTo(0);
        assertThat(refusals("rdma-ud-controlled-qkey")).isEqualTo(2);
    }

    /**
     * The Q_Key rule at the receiver, the seed's: a UD QP that has a Q_Key takes datagrams under that key only; a
     * mismatch is dropped silently, as the IB spec says (the sender completes, UD being unreliable), counted
     * ({@code rdma.ud.qkey_mismatch}, {@code rdma.ud.dropped}, refusal {@code rdma-ud-qkey}) and logged once. A QP
     * that MODIFY_QP never gave a Q_Key takes any ({@code rdma.ud.unkeyed}, said once): the IB spec has no such
     * QP, since the kernel requires a Q_Key for UD at INIT.
     */
    @Test
    void aUdQpTakesItsOwnQkeyOnlyOrAnyWhenItHasNone() throws IOException {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
                org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        root.addAppender(lines);
        try {
            ud(4, 0, 0x1234);
            ud(5, 0, 0x5678);
            ud(6, 0, null);
            postRecv(5, VA);
            postRecv(6, VA + 256);
            postRecv(6, VA + 512);
            guest.at(buf + 2048, 4).copyFrom(MemorySegment.ofArray("UDUD".getBytes()));

            // Refused: QP 4's key is not QP 5's. The sender completes; QP 5's receive stays posted.
            datagram(4, 5, 0x1234);
            assertThat(next()).as("the sender completes").isEqualTo(0);
            assertThat(cq.poll()).as("nothing delivered").isNull();
            datagram(4, 5, 0);
            assertThat(next()).isEqualTo(0);
            assertThat(cq.poll()).isNull();
            assertThat(dev.counters().get("rdma.ud.qkey_mismatch")).isEqualTo(2);
            assertThat(dev.counters().get("rdma.ud.dropped")).isEqualTo(2);
            assertThat(refusals("rdma-ud-qkey")).isEqualTo(2);

            // Accepted: QP 5's own key, into the receive the refused ones left.
            datagram(4, 5, 0x5678);
            RawCqe recv = cq.poll();
            assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
            assertThat(recv.qid()).isEqualTo(5);
            assertThat(recv.error()).isFalse();
            assertThat(guest.at(buf + 40, 4).toArray(ValueLayout.JAVA_BYTE)).isEqualTo("UDUD".getBytes());
            assertThat(next()).isEqualTo(0);

            // QP 6 has no Q_Key: it takes any.
            for (int key : new int[] {0x1234, 0x0bad_0bad}) {
                datagram(4, 6, key);
                recv = cq.poll();
                assertThat(recv.type()).isEqualTo(CQE_TYPE_RECV);
                assertThat(recv.qid()).isEqualTo(6);
                assertThat(recv.error()).isFalse();
                assertThat(next()).isEqualTo(0);
            }
            assertThat(dev.counters().get("rdma.ud.unkeyed")).isEqualTo(2);
            assertThat(dev.counters().get("rdma.ud.qkey_mismatch")).isEqualTo(2);
        } finally {
            root.detachAppender(lines);
        }
        assertThat(lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .filter(m -> m.startsWith("rdma-ud-qkey:"))).as("the refusal, logged once").hasSize(1);
        assertThat(lines.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains("has no Q_Key"))).as("the unkeyed QP, said once").hasSize(1);
    }
}
