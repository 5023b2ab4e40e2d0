package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.mesh.Gid;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static ernic.ionic.ModelGuest.HDR_LEN;
import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two devices joined by a {@link Loopback} port (nodes 0 and 1, on the test's thread, time from a mock
 * clock), and RC and UD traffic between their guests: the ionic wire protocol, rkeys resolved by the responder,
 * completions after the reply, receiver-not-ready waits, a lost peer, and
 * the requests a flushed QP takes back while its responder is not reading. Each guest is the driver model on a
 * {@link ModelGuest}: raw ionic_fw.h WQEs ({@link RawWqe}) and CQEs ({@link RawCqe}) on QPs with chosen ids.
 * {@link MeshGidTest} uses the same two devices for the GID rules (learning, the RTR wait).
 */
class RemoteDataPathTest {
    static final int CQ = 8, LOG2 = 4, DEPTH = 1 << LOG2, CQ_LOG2 = 8, MR = 1 << 8 | 0x11;
    static final int IP_A = 0x0a00_0001, IP_B = 0x0a00_0002;
    static final long VA = 0x7f00_0000_0000L;
    /** A second, larger MR (created by {@link Side#bigMr}) at BIG_VA: 4 MiB unless a test asks for another size. */
    static final int BIG = 2 << 8 | 0x22, BIG_BYTES = 4 << 20;
    static final long BIG_VA = 0x7f10_0000_0000L;

    Loopback net;
    Side a, b;

    /** One server's guest: device, rings, one 4-page MR, driven by the driver model. */
    final class Side extends RawSide {
        final int ip;
        long big;

        Side(Loopback.Port port, int ip) throws IOException {
            super(new IonicDevice(ProfileLoader.compat(), FaultPlan.none()), VA);
            this.ip = ip;
            dev.rdma().attach(port);
            dev.rdma().clock(net.clock);
            open();
        }

        int rc(int id, int destQpn, int destIp) throws IOException {
            return rc(id, destQpn, destIp, LOG2);
        }

        /** After an error completion: the QP through ERROR and RESET back to RTS, its SQ from slot 0. */
        void startOver(int id, int destQpn, int destIp) throws IOException {
            assertThat(rdma.modifyQp(id, IB_QP_STATE, ERR, 0, 0).status()).isZero();
            assertThat(rdma.modifyQp(id, IB_QP_STATE, RESET, 0, 0).status()).isZero();
            sqProd[id] = 0;
            assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
            assertThat(rdma.modifyQpAv(id, RTR, 0, destQpn, guest.ipv4Header(ip, destIp), HDR_LEN).status()).isZero();
            assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        }

        /** An RC QP whose SQ has {@code 1 << sqLog2} slots; the RTR's status (RTS follows only a success). */
        int rc(int id, int destQpn, int destIp, int sqLog2) throws IOException {
            rcInit(id, sqLog2);
            int st = rdma.modifyQpAv(id, RTR, 0, destQpn, guest.ipv4Header(ip, destIp), HDR_LEN).status();
            if (st == 0) {
                assertThat(rdma.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
            }
            return st;
        }

        /** An RC QP in INIT, remote access granted, its SQ of {@code 1 << sqLog2} slots. */
        void rcInit(int id, int sqLog2) throws IOException {
            rings(id, sqLog2);
            assertThat(rdma.createQp(id, RC, 0, CQ, sq[id], sqLog2, rq[id], LOG2).status()).isZero();
            assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
        }

        /** Registers the 4 MiB MR {@link #BIG} (4 KiB pages). */
        void bigMr() throws IOException {
            bigMr(BIG_BYTES);
        }

        /** Registers the MR {@link #BIG} with {@code bytes} (a multiple of 4 KiB) in 4 KiB pages. */
        void bigMr(int bytes) throws IOException {
            int pages = bytes / 4096;
            big = guest.alloc(bytes);
            assertThat(rdma.createMr(BIG, BIG_VA, bytes, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE
                    | ACCESS_REMOTE_READ, pages, guest.pageTable(big, pages), 12).status()).isZero();
        }

        MemorySegment bigMem(long offset, long len) {
            return guest.at(big + offset, len);
        }

        /** The next CQE (a copy), or null. */
        RawCqe poll() {
            return cq.pollWork();
        }
    }

    /** What a test runs on the device thread: the model's admin commands may throw. */
    interface Step<T> {
        T get() throws IOException;
    }

    interface VoidStep {
        void run() throws IOException;
    }

    /** Runs {@code c} as the device thread would, then lets the loopback deliver what it caused. */
    <T> T on(Step<T> c) {
        T t;
        try {
            t = c.get();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        net.pump();
        return t;
    }

    void run(VoidStep r) {
        on(() -> {
            r.run();
            return null;
        });
    }

    /** {@code cond} holds once everything in flight has been delivered. */
    void await(String what, BooleanSupplier cond) {
        net.pump();
        assertThat(cond.getAsBoolean()).as(what).isTrue();
    }

    /** The next CQE of {@code s}, once the peer's answer is in. */
    RawCqe next(Side s) {
        net.pump();
        RawCqe c = s.poll();
        assertThat(c).as("a completion").isNotNull();
        return c;
    }

    /** The next CQE of {@code s} as the device wrote it, "SQ flush received" entries included. */
    RawCqe nextEntry(Side s) {
        net.pump();
        RawCqe c = s.cq.poll();
        assertThat(c).as("a CQE").isNotNull();
        return c;
    }

    /** Time passes on both devices' RDMA clock, and their RDMA ticks run. */
    void elapse(long millis) {
        net.clock.advance(millis, TimeUnit.MILLISECONDS);
        a.dev.rdma().tick(net.clock.nanoTime());
        b.dev.rdma().tick(net.clock.nanoTime());
        net.pump();
    }

    @BeforeEach
    void setUp() throws IOException {
        net = new Loopback();
        net.own(Gid.parse("::ffff:10.0.0.1"), 0);
        net.own(Gid.parse("::ffff:10.0.0.2"), 1);
        a = new Side(net.a, IP_A);
        b = new Side(net.b, IP_B);
    }

    @AfterEach
    void tearDown() {
        a.dev.detach();
        b.dev.detach();
        a.dev.rdma().detachMesh();
        b.dev.rdma().detachMesh();
        net.pump();
        a.guest.close(); // detaches again (harmless) and frees the guest RAM
        b.guest.close();
    }

    @Test
    void rcSendWriteReadAndAtomicsCrossTheMesh() {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        // SEND into a posted receive: the receiver's completion, then the sender's (after the ACK).
        run(() -> RcScenario.postSendWithImmediate(a, 2, b, 3, 100, VA));
        RcScenario.assertReceived(next(b), b, 100, VA);
        RawCqe sent = next(a);
        assertThat(sent.error()).isFalse();
        assertThat(sent.msn()).isEqualTo(1);

        // WRITE 4 KiB across a page boundary of B's MR, then READ it back into A.
        run(() -> RcScenario.postWriteThenRead(a, 2, VA));
        assertThat(next(a).error()).isFalse();
        RawCqe read = next(a);
        assertThat(read.error()).isFalse();
        assertThat(read.msn()).isEqualTo(3);
        RcScenario.assertWrittenAndReadBack(a, b, VA);

        // Fetch-and-add and compare-and-swap on B's memory; the old value lands in A's.
        run(() -> RcScenario.postAtomics(a, b, 2, VA));
        assertThat(next(a).error()).isFalse();
        assertThat(next(a).error()).isFalse();
        RcScenario.assertAtomicsRan(a, b, VA);

        // Keys are B's: a wrong rkey, a range past the MR and a misaligned atomic fail as on hardware, each
        // on a pair of its own (an error moves the requester's QP, and the RC responder's, to ERROR).
        assertThat(on(() -> a.rc(4, 5, IP_B))).isZero();
        assertThat(on(() -> b.rc(5, 4, IP_A))).isZero();
        assertThat(on(() -> a.rc(6, 7, IP_B))).isZero();
        assertThat(on(() -> b.rc(7, 6, IP_A))).isZero();
        run(() -> {
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA, MR ^ 1).length(8)
                    .sge(WQE_PLD, 0, VA, 8, MR));
            a.postSend(4, w -> w.op(READ).numSgeKey(1).rdma(VA + 4 * 4096 - 4, MR).length(8)
                    .sge(WQE_PLD, 0, VA, 8, MR));
            a.postSend(6, w -> atomic(w, ATOMIC_FA, VA + 4, 0, 1, VA + 128));
        });
        assertThat(next(a).statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(next(a).statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(next(a).statusLength()).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(on(a::poll)).as("nothing behind them: no flush").isNull();
        assertThat(on(b::poll)).as("a responder that rejects consumes no receive and posts nothing").isNull();
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.requestsSent", 8L)
                .containsEntry("rdma.remote.repliesReceived", 8L);
        assertThat(on(() -> b.dev.counters())).containsEntry("rdma.remote.repliesSent", 8L);
    }

    /** The pieces a long WRITE crosses in ({@code RemotePath.WRITE_PIECE}). */
    static final int PIECE = 4 << 20;

    /**
     * A's QP 2 and B's QP 3 connected, both with an MR {@link #BIG} of {@code mrBytes} at BIG_VA, and {@code len}
     * bytes of a pattern at A's BIG_VA.
     */
    void bigPair(int len, int mrBytes) {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        run(() -> {
            a.bigMr(mrBytes);
            b.bigMr(mrBytes);
            MemorySegment src = a.bigMem(0, len);
            for (int i = 0; i < len; i++) {
                src.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + (i >> 12)));
            }
        });
    }

    void bigPair(int len) {
        bigPair(len, BIG_BYTES);
    }

    /**
     * A WRITE longer than a piece crosses as pieces, each placed as it arrives, and completes once, after the last
     * message's answer; the bytes land whole, at the right offsets.
     */
    @Test
    void aLongWriteCrossesInPiecesAndCompletesOnce() {
        int len = PIECE | 100, pieces = len / PIECE + 1;
        bigPair(len, 2 * PIECE);
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).flags(WQE_FLAG_SIG).rdma(BIG_VA + 4000, BIG)
                .length(len).sge(WQE_PLD, 0, BIG_VA, len, BIG)));
        RawCqe done = next(a);
        assertThat(done.error()).isFalse();
        assertThat(on(a::poll)).as("one completion for the WQE").isNull();
        assertThat(on(() -> b.bigMem(4000, len).mismatch(a.bigMem(0, len)))).isEqualTo(-1L);
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.requestsSent", 1L)
                .containsEntry("rdma.remote.piecesSent", pieces - 1L)
                .containsEntry("rdma.remote.repliesReceived", 1L).containsEntry("rdma.remote.staleReplies", 0L);
        assertThat(on(() -> b.dev.counters())).containsEntry("rdma.remote.requestsReceived", 1L)
                .containsEntry("rdma.remote.piecesReceived", pieces - 1L).containsEntry("rdma.remote.repliesSent", 1L);
    }

    /** A WRITE of one piece's length goes whole, as one message. */
    @Test
    void aWriteOfOnePieceGoesWhole() {
        bigPair(PIECE, PIECE);
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).flags(WQE_FLAG_SIG).rdma(BIG_VA, BIG)
                .length(PIECE).sge(WQE_PLD, 0, BIG_VA, PIECE, BIG)));
        assertThat(next(a).error()).isFalse();
        assertThat(on(() -> b.bigMem(0, PIECE).mismatch(a.bigMem(0, PIECE)))).isEqualTo(-1L);
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.requestsSent", 1L)
                .containsEntry("rdma.remote.piecesSent", 0L);
    }

    /**
     * A piece that fails (here the second of three messages runs 8 bytes past the end of B's MR) answers for its
     * WRITE at once: the WQE fails with the responder's status, once; the message behind it finds B's QP in ERROR
     * and is dropped, and its answer comes to a WQE already completed (stale).
     */
    @Test
    void aPieceThatFailsFailsItsWriteOnce() {
        int len = 3 * PIECE, mr = 3 * PIECE;
        bigPair(len, mr);
        long start = BIG_VA + mr - 2L * PIECE + 8; // the second piece ends 8 bytes past the MR
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).flags(WQE_FLAG_SIG).rdma(start, BIG)
                .length(len).sge(WQE_PLD, 0, BIG_VA, len, BIG)));
        RawCqe failed = next(a);
        assertThat(failed.error()).isTrue();
        assertThat(failed.statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(on(a::poll)).isNull();
        await("every answer in", () -> counter(a, "rdma.remote.repliesReceived") == 2L);
        assertThat(counter(a, "rdma.remote.staleReplies")).isEqualTo(1L);
        assertThat(on(() -> b.dev.counters())).containsEntry("rdma.remote.requestsReceived", 1L)
                .containsEntry("rdma.remote.piecesReceived", 2L).containsEntry("rdma.remote.repliesSent", 2L);
        // The piece before it was placed (a failed RC WRITE may leave part of its data).
        assertThat(on(() -> b.bigMem(start - BIG_VA, PIECE).mismatch(a.bigMem(0, PIECE)))).isEqualTo(-1L);
    }

    /**
     * A long WRITE_IMM goes as one message: the receive completion reports its whole length with the immediate.
     */
    @Test
    void aLongWriteWithImmediateGoesWhole() {
        int len = 300_000;
        bigPair(len);
        run(() -> {
            b.postRecv(3, VA, 0);
            a.postSend(2, w -> w.op(WRITE_IMM).immDataKey(77).numSgeKey(1).rdma(BIG_VA, BIG).length(len)
                    .sge(WQE_PLD, 0, BIG_VA, len, BIG));
        });
        RawCqe recv = next(b);
        assertThat(recv.error()).isFalse();
        assertThat(recv.statusLength()).isEqualTo(len);
        assertThat(recv.immDataRkey()).isEqualTo(77);
        assertThat(next(a).error()).isFalse();
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.requestsSent", 1L);
        assertThat(on(() -> b.bigMem(0, len).mismatch(a.bigMem(0, len)))).isEqualTo(-1L);
    }

    /**
     * A QP flushed while a long WRITE of it is still queued in pieces takes the pieces still queued back: only
     * what was already being written arrives, and its answer is stale.
     */
    @Test
    void aFlushedQpTakesBackTheQueuedPiecesOfItsWrite() {
        int len = 4 * PIECE; // the longest WRITE (WireHeader.MAX_PAYLOAD): three pieces and the last message
        bigPair(len, len);
        net.b.setReceiving(false);
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(BIG_VA, BIG).length(len)
                .sge(WQE_PLD, 0, BIG_VA, len, BIG)));
        assertThat(on(() -> a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status())).isZero();
        assertThat(nextEntry(a).statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        net.b.setReceiving(true);
        await("every piece received or taken back", () -> counter(b, "rdma.remote.requestsReceived")
                + counter(b, "rdma.remote.piecesReceived") + counter(a, "rdma.remote.takenBack") == len / PIECE);
        assertThat(counter(a, "rdma.remote.takenBack")).isPositive();
        assertThat(counter(b, "rdma.remote.repliesSent")).as("no last piece arrived: nothing to answer").isZero();
        assertThat(on(a::poll)).isNull();
    }

    /**
     * A type 2 memory window on the responder's server: bound by its guest on QP 3, it opens its range to the
     * requests that arrive on QP 3 from the mesh and to no other QP's; a SEND_INV across the mesh frees it.
     */
    @Test
    void aType2WindowOpensToThePeerOfItsQpAcrossTheMesh() {
        int bindable = 3 << 8 | 0x33, window = 4 << 8 | 0x44, rkey = 4 << 8 | 0x45;
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        assertThat(on(() -> a.rc(4, 5, IP_B))).isZero();
        assertThat(on(() -> b.rc(5, 4, IP_A))).isZero();
        assertThat(on(() -> b.rdma.createMr(bindable, VA, 4096, ACCESS_LOCAL_WRITE | MRF_MW_BIND, 1, b.buf, 12))
                .status()).isZero();
        assertThat(on(() -> b.rdma.createMr(window, 0, 0, MRF_MW_2, 0, 0, 0)).status()).isZero();
        run(() -> b.postSend(3, w -> w.op(10).numSgeKey(0x45).immDataKey(window).flags(WQE_FLAG_SIG)
                .bindMw(VA + 512, 512, bindable, MRF_REMOTE_WRITE | MRF_BIND_MW_2)));
        assertThat(next(b).error()).as("bound on QP 3").isFalse();

        run(() -> {
            le64(a.mem(VA, 8), 0, 0x600d);
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 600, rkey).length(8).sge(WQE_PLD, 0, VA, 8, MR));
        });
        assertThat(next(a).error()).isFalse();
        assertThat(le64(b.mem(VA + 600, 8), 0)).isEqualTo(0x600d);
        run(() -> a.postSend(4, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 600, rkey).length(8)
                .sge(WQE_PLD, 0, VA + 8, 8, MR)));
        assertThat(next(a).statusLength()).as("QP 5 is not the window's").isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(b.dev.refusals().count("rdma-mw-access-qp")).isEqualTo(1);

        run(() -> {
            b.postRecv(3, VA + 8192, 64);
            a.postSend(2, w -> w.op(SEND_INV).immDataKey(rkey).numSgeKey(1).length(8).sge(WQE_PLD, 0, VA, 8, MR));
        });
        RawCqe recv = next(b);
        assertThat(recv.error()).isFalse();
        assertThat(recv.srcQpnOp() >>> CQE_RECV_OP_SHIFT & 0xf).isEqualTo(CQE_RECV_OP_SEND_INV);
        assertThat(next(a).error()).isFalse();
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 600, rkey).length(8)
                .sge(WQE_PLD, 0, VA, 8, MR)));
        assertThat(next(a).statusLength()).as("freed").isEqualTo(STS_REMOTE_ACC_ERR);
    }

    /** An atomic on 8 bytes at {@code va} of the peer's MR; the old value lands at {@code local}. */
    static void atomic(RawWqe w, int op, long va, long compare, long add, long local) {
        w.op(op).rdma(va, MR);
        MemorySegment s = w.segment();
        be32(s, WQE_ATOMIC_SWAP_ADD_HIGH_BE, (int) (add >>> 32));
        be32(s, WQE_ATOMIC_SWAP_ADD_LOW_BE, (int) add);
        be32(s, WQE_ATOMIC_COMPARE_HIGH_BE, (int) (compare >>> 32));
        be32(s, WQE_ATOMIC_COMPARE_LOW_BE, (int) compare);
        be64(s, WQE_ATOMIC_SGE + SGE_VA_BE, local);
        be32(s, WQE_ATOMIC_SGE + SGE_LEN_BE, 8);
        be32(s, WQE_ATOMIC_SGE + SGE_LKEY_BE, MR);
    }

    @Test
    void aSendWaitsForTheReceiverThenFailsWithRnrAfterFiveSeconds() {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(8).sge(WQE_PLD, 0, VA, 8, MR)));
        elapse(300);
        assertThat(on(a::poll)).as("no receive yet: the SEND waits on B").isNull();
        run(() -> b.postRecv(3, VA + 8192, 64));
        assertThat(next(b).error()).isFalse();
        assertThat(next(a).error()).isFalse();

        run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(8).sge(WQE_PLD, 0, VA, 8, MR)));
        elapse(4900);
        assertThat(on(a::poll)).as("4.9 s: still waiting for a receive").isNull();
        elapse(200);
        RawCqe rnr = next(a);
        assertThat(rnr.statusLength()).isEqualTo(STS_RNR_RETRY_EXCEEDED);
        assertThat(on(() -> b.dev.counters())).containsEntry("rdma.remote.rnrFailures", 1L);
    }

    @Test
    void udDatagramsReachTheOtherGuestWithTheirGrh() {
        run(() -> {
            a.ud(4);
            b.ud(5);
            assertThat(a.rdma.createAh(1, a.guest.ipv4Header(IP_A, IP_B), HDR_LEN).status()).isZero();
            b.postRecv(5, VA + 8192, 256);
            for (int i = 0; i < 32; i++) {
                u8(a.mem(VA + i, 1), 0, 0xa0 + i);
            }
            a.postSend(4, w -> w.op(SEND).numSgeKey(1).length(32).ud(1, 5, 0x1234)
                    .sge(WQE_PLD, 0, VA, 32, MR));
        });
        assertThat(next(a).error()).as("a datagram completes once it is on its way").isFalse();
        RawCqe recv = next(b);
        assertThat(recv.error()).isFalse();
        assertThat(recv.statusLength()).isEqualTo(40 + 32);
        assertThat(on(() -> u8(b.mem(VA + 8192 + 40, 1), 0))).isEqualTo(0xa0);
        // IPv4 GRH: the source address at offset 20 + 12.
        assertThat(on(() -> be32(b.mem(VA + 8192 + 32, 4), 0))).isEqualTo(IP_A);
        // A wrong Q_Key is dropped at B and counted.
        run(() -> a.postSend(4, w -> w.op(SEND).numSgeKey(1).length(8).ud(1, 5, 0x9999)
                .sge(WQE_PLD, 0, VA, 8, MR)));
        assertThat(next(a).error()).isFalse();
        await("the drop", () -> on(() -> b.dev.counters()).get("rdma.ud.dropped") == 1L);
    }

    /** What a hostile or broken peer server sends: counted and refused, and the device keeps serving. */
    @Test
    void malformedMessagesFromAPeerAreRefusedAndCounted() {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        run(() -> {
            // Shorter than the header; an unknown opcode.
            net.b.send(0, io.netty.buffer.Unpooled.wrappedBuffer(new byte[10]), null);
            net.b.send(0, message(100, 0x7f), null);
            // A reply for a QP, slot and sequence number this node never used.
            net.b.send(0, message(88, 16).setInt(4, 2).setInt(16, 5).setLong(24, 12345), null);
            // A request for a QP that does not exist here: answered with retry-exceeded, which B finds stale.
            net.b.send(0, message(88, 4).setInt(4, 3).setInt(8, 77), null);
            // A SEND marked as a piece: only a WRITE comes in pieces.
            net.b.send(0, message(96, 1).setByte(1, 8).setInt(4, 3).setInt(8, 2), null);
        });
        await("the refusals", () -> on(() -> a.dev.counters()).get("rdma.remote.badMessages") == 3L
                && on(() -> a.dev.counters()).get("rdma.remote.staleReplies") == 1L
                && on(() -> b.dev.counters()).get("rdma.remote.staleReplies") == 1L);
        assertThat(on(() -> a.dev.refusals().snapshot())).containsKey("rdma-remote-message");
        // Still serving: a WRITE across works.
        run(() -> {
            le64(a.mem(VA, 8), 0, 0x1122_3344_5566_7788L);
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 512, MR).length(8)
                    .sge(WQE_PLD, 0, VA, 8, MR));
        });
        assertThat(next(a).error()).isFalse();
        assertThat(on(() -> le64(b.mem(VA + 512, 8), 0))).isEqualTo(0x1122_3344_5566_7788L);
    }

    /** A zeroed message of {@code length} bytes from a peer server, with {@code opcode} in its first byte. */
    static io.netty.buffer.ByteBuf message(int length, int opcode) {
        return io.netty.buffer.Unpooled.buffer(length).writeZero(length).setByte(0, opcode);
    }

    @Test
    void withThePeerGoneRequestsCompleteWithRetryExceeded() {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        net.b.die();
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA, MR).length(8)
                .sge(WQE_PLD, 0, VA, 8, MR)));
        assertThat(next(a).statusLength()).isEqualTo(STS_RETRY_EXCEEDED);
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.noRoute", 1L);
    }

    @Test
    void theReplyToAFlushedReadIsStaleAndItsDataDoesNotLand() {
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        net.b.setReceiving(false); // the READ waits in the socket until B reads again
        run(() -> {
            le64(b.mem(VA + 64, 8), 0, 0x5555_6666_7777_8888L);
            a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(VA + 64, MR).length(8)
                    .sge(WQE_PLD, 0, VA + 256, 8, MR));
        });
        assertThat(on(() -> a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status())).isZero();
        assertThat(nextEntry(a).statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        net.b.setReceiving(true);
        await("the READ's reply", () -> counter(a, "rdma.remote.repliesReceived") == 1L);
        assertThat(counter(a, "rdma.remote.staleReplies")).isEqualTo(1L);
        assertThat(on(() -> le64(a.mem(VA + 256, 8), 0))).as("the consumer has had this memory back").isZero();
        assertThat(on(a::poll)).isNull();
    }

    long counter(Side s, String name) {
        return on(() -> s.dev.counters()).get(name);
    }

    // ---------------------------------------------------------------------------------------------
    // Taking back what a flushed QP still has queued

    /** WRITEs posted at once in the take-back cases: a full 256-slot SQ, 16 KiB each (4 MiB in all). */
    static final int WRITES = 255, WRITE_BYTES = 16 * 1024, BIG_LOG2 = 8;

    /** The word at {@code j} of write {@code i}'s pattern: distinct for every write and every word. */
    static long pattern(int i, int j) {
        return (long) (i + 1) << 32 | j;
    }

    /** A's QP 2 (256 slots) and B's QP 3 connected, with the big MR on both sides, and B no longer reading. */
    void stalledPair() {
        assertThat(on(() -> a.rc(2, 3, IP_B, BIG_LOG2))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A, BIG_LOG2))).isZero();
        run(() -> {
            a.bigMr();
            b.bigMr();
        });
        net.b.setReceiving(false); // B, the responder, stops reading what A sends
    }

    /** A posts {@link #WRITES} WRITEs, write i from and to offset i * WRITE_BYTES, and they queue up. */
    void postWrites() {
        run(() -> {
            for (int i = 0; i < WRITES; i++) {
                long off = (long) i * WRITE_BYTES;
                MemorySegment src = a.bigMem(off, WRITE_BYTES);
                for (int j = 0; j < WRITE_BYTES / 8; j++) {
                    le64(src, 8L * j, pattern(i, j));
                }
                a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(BIG_VA + off, BIG)
                        .length(WRITE_BYTES).sge(WQE_PLD, 0, BIG_VA + off, WRITE_BYTES, BIG));
            }
        });
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.requestsSent", (long) WRITES);
        // The wire fills and the rest waits in A's queue: far more than one frame being written.
        assertThat(net.a.queuedBytes()).isGreaterThan(1L << 20);
    }

    /** What each write left in B's memory: 1 its whole pattern, 0 nothing, -1 anything else. */
    int[] landed() {
        return on(() -> {
            int[] r = new int[WRITES];
            for (int i = 0; i < WRITES; i++) {
                MemorySegment dst = b.bigMem((long) i * WRITE_BYTES, WRITE_BYTES);
                boolean all = true, none = true;
                for (int j = 0; j < WRITE_BYTES / 8; j++) {
                    long v = le64(dst, 8L * j);
                    all &= v == pattern(i, j);
                    none &= v == 0;
                }
                r[i] = all ? 1 : none ? 0 : -1;
            }
            return r;
        });
    }

    @Test
    void aFlushedQpTakesBackTheRequestsStillQueuedAndOnlyThoseBeingWrittenArrive() {
        stalledPair();
        postWrites();
        assertThat(on(a::poll)).as("nothing answered while B does not read").isNull();

        // A's QP moves to ERROR: one flush completion for all its WQEs, none answered.
        assertThat(on(() -> a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status())).isZero();
        RawCqe flushed = nextEntry(a);
        assertThat(flushed.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(flushed.error()).isTrue();
        assertThat(flushed.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(flushed.qid()).isEqualTo(2);

        net.b.setReceiving(true);
        await("every WRITE received by B or taken back by A", () -> counter(b, "rdma.remote.requestsReceived")
                + counter(a, "rdma.remote.takenBack") == WRITES);
        long received = counter(b, "rdma.remote.requestsReceived");
        long takenBack = counter(a, "rdma.remote.takenBack");
        assertThat(takenBack).as("some were still queued").isPositive();
        assertThat(received).as("the ones being written still arrive").isPositive();
        // The replies to those come back to a QP that has completed them all: stale, nothing completes twice.
        await("B's replies back at A", () -> counter(a, "rdma.remote.repliesReceived") == received);
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.staleReplies", received)
                .containsEntry("rdma.remote.timeouts", 0L);
        assertThat(on(() -> b.dev.counters())).containsEntry("rdma.remote.repliesSent", received);
        assertThat(net.a.takenBack).isEqualTo(takenBack);
        assertThat(on(a::poll)).isNull();

        // B's memory holds a prefix of the writes, whole, and nothing of the ones taken back.
        int[] landed = landed();
        for (int i = 0; i < WRITES; i++) {
            assertThat(landed[i]).as("write " + i).isEqualTo(i < received ? 1 : 0);
        }
        await("A's queue empty", () -> net.a.queuedBytes() == 0);
    }

    @Test
    void aDestroyedQpsWritesStillArriveEvenWhenItsIdIsTakenAgain() {
        stalledPair();
        postWrites();
        // Destroyed straight after posting: nothing completed those WRITEs, so they go out. A new QP with the
        // same id, flushed at once, does not take back the old one's requests.
        run(() -> {
            assertThat(a.rdma.destroy(OP_DESTROY_QP, 2).status()).isZero();
            assertThat(a.rc(2, 3, IP_B, BIG_LOG2)).isZero();
            assertThat(a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status()).isZero();
        });
        net.b.setReceiving(true);
        await("every WRITE received by B", () -> counter(b, "rdma.remote.requestsReceived") == WRITES);
        await("B's replies back at A", () -> counter(a, "rdma.remote.repliesReceived") == WRITES);
        assertThat(on(() -> a.dev.counters())).containsEntry("rdma.remote.takenBack", 0L)
                .containsEntry("rdma.remote.staleReplies", (long) WRITES);
        assertThat(on(a::poll)).as("no completion for the destroyed QP, none for the new one").isNull();
        assertThat(landed()).containsOnly(1);
    }

    @Test
    void aQpFlushedThenDestroyedStillTakesBackWhatItGaveUp() {
        stalledPair();
        postWrites();
        run(() -> {
            assertThat(a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status()).isZero();
            assertThat(a.rdma.destroy(OP_DESTROY_QP, 2).status()).isZero();
        });
        assertThat(nextEntry(a).statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        net.b.setReceiving(true);
        await("every WRITE received by B or taken back by A", () -> counter(b, "rdma.remote.requestsReceived")
                + counter(a, "rdma.remote.takenBack") == WRITES);
        long received = counter(b, "rdma.remote.requestsReceived");
        assertThat(counter(a, "rdma.remote.takenBack")).isPositive();
        await("B's replies back at A", () -> counter(a, "rdma.remote.staleReplies") == received);
        int[] landed = landed();
        for (int i = 0; i < WRITES; i++) {
            assertThat(landed[i]).as("write " + i).isEqualTo(i < received ? 1 : 0);
        }
    }

    @Test
    void aReadTakenBackGivesBackItsShareOfTheReadBudget() {
        stalledPair();
        postWrites();
        // Behind the queued WRITEs, QP 4 asks B for the whole 32 MiB of READ data a node may ask of one peer.
        assertThat(on(() -> a.rc(4, 5, IP_B))).isZero();
        assertThat(on(() -> b.rc(5, 4, IP_A))).isZero();
        int reads = 8;
        run(() -> {
            for (int k = 0; k < reads; k++) {
                a.postSend(4, w -> w.op(READ).numSgeKey(1).rdma(BIG_VA, BIG).length(BIG_BYTES)
                        .sge(WQE_PLD, 0, BIG_VA, BIG_BYTES, BIG));
            }
        });
        assertThat(counter(a, "rdma.remote.requestsSent")).isEqualTo(WRITES + reads);
        run(() -> {
            assertThat(a.rdma.modifyQp(4, IB_QP_STATE, ERR, 0, 0).status()).isZero();
            assertThat(a.rdma.modifyQp(2, IB_QP_STATE, ERR, 0, 0).status()).isZero();
        });
        assertThat(nextEntry(a).statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(nextEntry(a).statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        net.b.setReceiving(true);
        await("every request received by B or taken back by A", () -> counter(b, "rdma.remote.requestsReceived")
                + counter(a, "rdma.remote.takenBack") == WRITES + reads);
        assertThat(counter(a, "rdma.remote.takenBack")).as("the READs and the WRITEs still queued")
                .isGreaterThan(reads);

        // No reply will come for the READs taken back: a new READ does not wait for them.
        run(() -> le64(b.bigMem(0, 8), 0, 0x0123_4567_89ab_cdefL));
        assertThat(on(() -> a.rc(6, 7, IP_B))).isZero();
        assertThat(on(() -> b.rc(7, 6, IP_A))).isZero();
        run(() -> a.postSend(6, w -> w.op(READ).numSgeKey(1).rdma(BIG_VA, BIG).length(BIG_BYTES)
                .sge(WQE_PLD, 0, BIG_VA, BIG_BYTES, BIG)));
        RawCqe read = next(a);
        assertThat(read.error()).isFalse();
        assertThat(read.qid()).isEqualTo(6);
        assertThat(on(() -> le64(a.bigMem(0, 8), 0))).isEqualTo(0x0123_4567_89ab_cdefL);
    }

    @Test
    void aReadThatTimesOutGivesItsShareOfTheReadBudgetBack() {
        stalledPair();
        // Eight 4 MiB READs ask B for the whole 32 MiB a node may ask of one peer; the ninth waits on the SQ.
        int reads = 9;
        run(() -> {
            for (int k = 0; k < reads; k++) {
                a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(BIG_VA, BIG).length(BIG_BYTES)
                        .sge(WQE_PLD, 0, BIG_VA, BIG_BYTES, BIG));
            }
        });
        assertThat(counter(a, "rdma.remote.requestsSent")).isEqualTo(reads - 1);
        // B answers nothing: after 30 s the eight complete with retry-exceeded ...
        elapse(29_900);
        assertThat(on(a::poll)).as("29.9 s: still waiting").isNull();
        elapse(200);
        // The first error completion moves the QP to ERROR: the rest of its SQ, the ninth READ included,
        // is flushed (one flush completion; the driver flushes its own copies of the WQEs).
        assertThat(next(a).statusLength()).isEqualTo(STS_RETRY_EXCEEDED);
        RawCqe flushed = nextEntry(a);
        assertThat(flushed.type()).isEqualTo(CQE_TYPE_SEND_NPG);
        assertThat(flushed.statusLength()).isEqualTo(STS_WQE_FLUSHED_ERR);
        assertThat(on(a::poll)).isNull();
        assertThat(counter(a, "rdma.remote.timeouts")).isEqualTo(reads - 1);
        assertThat(counter(a, "rdma.remote.requestsSent")).isEqualTo(reads - 1);
        // ... and their shares are back, so a new READ goes out while B still reads nothing.
        run(() -> a.startOver(2, 3, IP_B));
        run(() -> a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(BIG_VA, BIG).length(BIG_BYTES)
                .sge(WQE_PLD, 0, BIG_VA, BIG_BYTES, BIG)));
        await("a new READ sent", () -> counter(a, "rdma.remote.requestsSent") == reads);
        run(() -> le64(b.bigMem(0, 8), 0, 0x0fed_cba9_8765_4321L));
        net.b.setReceiving(true);
        RawCqe ninth = next(a);
        assertThat(ninth.error()).isFalse();
        assertThat(ninth.qid()).isEqualTo(2);
        assertThat(on(() -> le64(a.bigMem(0, 8), 0))).isEqualTo(0x0fed_cba9_8765_4321L);
        await("the eight late replies", () -> counter(a, "rdma.remote.staleReplies") == reads - 1);
    }

    /**
     * The P4 engine's externs take only regions of this node: an RDMA WRITE a program turns into an fp8
     * accumulate is refused (REMOTE_ACC_ERR, p4.wqe.extern.bad_operand) when its QP's peer is on another
     * server, and the peer's memory is left alone; a WRITE the program leaves alone still crosses the mesh.
     */
    @Test
    void aP4ExternRefusesAnRkeyOfAnotherNode() throws IOException {
        String json = java.nio.file.Files.readString(P4WqeHookTest.PROGRAMS.resolve("rdma_fp8.json"));
        a.dev.p4(ernic.ionic.p4hook.P4Hooks.load(json, "rdma_fp8.json",
                "table_add wqe_extern fp8_accumulate 1 4&&&0xff 0&&&0 0x%x&&&0xffffffffffffffff => 1 1 0 1\n"
                        .formatted(VA + 4096), "test", ernic.ionic.p4hook.P4Scope.NONE));
        assertThat(on(() -> a.rc(2, 3, IP_B))).isZero();
        assertThat(on(() -> b.rc(3, 2, IP_A))).isZero();
        run(() -> {
            u8(a.mem(VA, 1), 0, 0x38);
            u8(b.mem(VA + 4096, 1), 0, 0x38);
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 4096, MR).length(1).sge(WQE_PLD, 0, VA, 1, MR));
        });
        assertThat(next(a).statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(on(() -> u8(b.mem(VA + 4096, 1), 0))).isEqualTo(0x38);
        assertThat(on(() -> a.dev.counters())).containsEntry("p4.wqe.extern.bad_operand", 1L)
                .containsEntry("p4.wqe.fp8_accumulate.ops", 0L);
        // Another address: no extern, a plain WRITE across the mesh.
        run(() -> a.startOver(2, 3, IP_B));
        run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 8192, MR).length(1)
                .sge(WQE_PLD, 0, VA, 1, MR)));
        assertThat(next(a).statusLength()).isEqualTo(0);
        assertThat(on(() -> u8(b.mem(VA + 8192, 1), 0))).isEqualTo(0x38);
    }
}
