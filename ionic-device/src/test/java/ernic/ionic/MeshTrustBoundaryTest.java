package ernic.ionic;

import ernic.model.rdma.RawCqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static ernic.ionic.RemoteDataPathTest.BIG;
import static ernic.ionic.RemoteDataPathTest.BIG_VA;
import static ernic.ionic.RemoteDataPathTest.IP_A;
import static ernic.ionic.RemoteDataPathTest.IP_B;
import static ernic.ionic.RemoteDataPathTest.MR;
import static ernic.ionic.RemoteDataPathTest.VA;
import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The trust-boundary and flow-control rules of the responder for what peers send over the mesh, each pinned at its
 * bound: the held-message limits (64 MiB or 4096 messages waiting for a receive, then 0.5 s) and key 0 with a
 * non-zero length. Two devices joined by the {@link Loopback} port of {@link RemoteDataPathTest}, whose fixture
 * (sides, posting, the mock clock) this test borrows; A is the requester, B the responder.
 */
class MeshTrustBoundaryTest {
    /** The size of a mesh request's header (WireHeader.SIZE), which counts toward the held bytes. */
    static final int HEADER = 88;
    final RemoteDataPathTest t = new RemoteDataPathTest();
    RemoteDataPathTest.Side a, b;

    @BeforeEach
    void setUp() throws IOException {
        t.setUp();
        a = t.a;
        b = t.b;
    }

    @AfterEach
    void tearDown() {
        t.tearDown();
    }

    long counter(RemoteDataPathTest.Side s, String name) {
        return t.counter(s, name);
    }

    /** A's QP 2 (SQ of {@code 1 << sqLog2} slots) connected to B's QP 3, which never posts a receive. */
    void pair(int sqLog2) {
        assertThat(t.on(() -> a.rc(2, 3, IP_B, sqLog2))).isZero();
        assertThat(t.on(() -> b.rc(3, 2, IP_A))).isZero();
    }

    void sends(int n) {
        t.run(() -> {
            for (int i = 0; i < n; i++) {
                a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(8).sge(WQE_PLD, 0, VA, 8, MR));
            }
        });
    }

    /** 4096 SENDs waiting for a receive are held and B reads on; the 4097th stops B reading from its peers. */
    @Test
    void past4096HeldMessagesTheNodeStopsReadingAndAfterHalfASecondTheyFail() {
        pair(13);
        sends(4096);
        assertThat(counter(b, "rdma.remote.requestsReceived")).isEqualTo(4096);
        assertThat(counter(b, "rdma.remote.readPauses")).as("4096 held: still reading").isZero();
        assertThat(t.net.b.receiving).isTrue();

        sends(2);
        assertThat(counter(b, "rdma.remote.readPauses")).as("4097 held").isEqualTo(1);
        assertThat(t.net.b.receiving).isFalse();
        assertThat(counter(b, "rdma.remote.requestsReceived")).as("the 4098th waits unread").isEqualTo(4097);

        t.elapse(400);
        assertThat(t.on(a::poll)).as("0.4 s: the held SENDs still wait").isNull();
        t.elapse(100);
        // 0.5 s paused: every held SEND fails at once with RNR-retry-exceeded (not after 5 s), and B reads again.
        RawCqe rnr = t.next(a);
        assertThat(rnr.statusLength()).isEqualTo(STS_RNR_RETRY_EXCEEDED);
        assertThat(counter(b, "rdma.remote.rnrFailures")).isEqualTo(4097);
        assertThat(t.net.b.receiving).isTrue();
        assertThat(counter(b, "rdma.remote.requestsReceived")).as("the 4098th read after the pause").isEqualTo(4098);
        assertThat(t.on(() -> b.dev.refusals().count("rdma-remote-held-full"))).isEqualTo(1);
    }

    /** Receives posted while reading is paused make room: B reads again and nothing fails after 0.5 s. */
    @Test
    void aReceivePostedBelowTheLimitResumesReadingAndNothingFails() {
        pair(13);
        sends(4097);
        assertThat(t.net.b.receiving).isFalse();
        t.run(() -> b.postRecv(3, VA + 8192, 64));
        assertThat(t.next(b).error()).isFalse();
        assertThat(t.net.b.receiving).as("4096 held again: reading resumes").isTrue();
        t.elapse(600);
        assertThat(counter(b, "rdma.remote.rnrFailures")).isZero();
        assertThat(counter(b, "rdma.remote.readPauses")).isEqualTo(1);
        assertThat(t.on(() -> b.dev.refusals().count("rdma-remote-held-full"))).isZero();
    }

    /** Sixteen 4 MiB messages (64 MiB held) still leave B reading; the seventeenth stops it. */
    @Test
    void past64MiBHeldTheNodeStopsReadingAndAfterHalfASecondTheyFail() {
        pair(5);
        t.run(a::bigMr);
        int payload = (4 << 20) - HEADER; // each message is 4 MiB with its header
        t.run(() -> {
            for (int i = 0; i < 16; i++) {
                a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(payload).sge(WQE_PLD, 0, BIG_VA, payload, BIG));
            }
        });
        t.await("16 held", () -> counter(b, "rdma.remote.requestsReceived") == 16);
        assertThat(counter(b, "rdma.remote.heldBytes")).isEqualTo(64L << 20);
        assertThat(counter(b, "rdma.remote.readPauses")).isZero();
        assertThat(t.net.b.receiving).isTrue();

        t.run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(payload)
                .sge(WQE_PLD, 0, BIG_VA, payload, BIG)));
        t.await("17 held", () -> counter(b, "rdma.remote.requestsReceived") == 17);
        assertThat(counter(b, "rdma.remote.readPauses")).isEqualTo(1);
        assertThat(t.net.b.receiving).isFalse();
        t.elapse(499);
        assertThat(t.on(a::poll)).isNull();
        t.elapse(1);
        assertThat(t.next(a).statusLength()).isEqualTo(STS_RNR_RETRY_EXCEEDED);
        assertThat(counter(b, "rdma.remote.rnrFailures")).isEqualTo(17);
        assertThat(counter(b, "rdma.remote.heldBytes")).isZero();
        assertThat(t.net.b.receiving).isTrue();
    }

    /**
     * A peer names memory only by rkey: key 0 (locally the raw bus address of a privileged QP) with a non-zero
     * length is refused with the remote access error, counted and logged once, for WRITE, READ and atomics; a
     * zero-length WRITE with key 0 moves nothing and succeeds.
     */
    @Test
    void key0WithANonZeroLengthFromAPeerIsARemoteAccessError() {
        pair(4);
        t.run(() -> {
            for (int i = 0; i < 8; i++) {
                u8(b.mem(VA + i, 1), 0, 0x77);
            }
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(b.buf, 0).length(8).sge(WQE_PLD, 0, VA, 8, MR));
        });
        assertThat(t.next(a).statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(t.on(() -> u8(b.mem(VA, 1), 0))).as("nothing landed").isEqualTo(0x77);
        for (int op : new int[] {READ, ATOMIC_FA}) {
            t.run(() -> a.startOver(2, 3, IP_B));
            t.run(() -> b.startOver(3, 2, IP_A));
            if (op == READ) {
                t.run(() -> a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(b.buf, 0).length(8)
                        .sge(WQE_PLD, 0, VA + 64, 8, MR)));
            } else {
                t.run(() -> a.postSend(2, w -> {
                    RemoteDataPathTest.atomic(w, ATOMIC_FA, b.buf, 0, 1, VA + 128);
                    w.rdma(b.buf, 0);
                }));
            }
            assertThat(t.next(a).statusLength()).as("op " + op).isEqualTo(STS_REMOTE_ACC_ERR);
        }
        assertThat(t.on(() -> b.dev.refusals().count("rdma-rkey-0"))).isEqualTo(3);
        assertThat(counter(b, "rdma.access.denied")).isEqualTo(3);

        t.run(() -> a.startOver(2, 3, IP_B));
        t.run(() -> b.startOver(3, 2, IP_A));
        t.run(() -> a.postSend(2, w -> w.op(WRITE).numSgeKey(0).rdma(b.buf, 0).length(0)));
        assertThat(t.next(a).error()).as("a zero-length WRITE under key 0 moves nothing").isFalse();
        assertThat(t.on(() -> b.dev.refusals().count("rdma-rkey-0"))).isEqualTo(3);
    }
}
