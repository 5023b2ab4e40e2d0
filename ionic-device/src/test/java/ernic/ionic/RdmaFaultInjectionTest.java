package ernic.ionic;

import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --inject}'s RDMA kinds through the driver model in process, as an application sees them (libionic's work
 * completions, flushes reported one per WQE): a chosen WQE of a chosen RC QP completes with REM_ACCESS_ERR,
 * RNR_RETRY_EXC_ERR or RETRY_EXC_ERR, its QP goes to ERROR and what it still had is flushed, and nothing of the
 * chosen WQE lands (no data, no receive consumed, the responder's QP untouched); an added latency holds a QP's
 * WQE, and its remote effect, until the device's clock has moved on by the time, in order.
 */
class RdmaFaultInjectionTest {
    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final int QP_ALL = QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC;
    static final long PAGE = 4096;

    final MockTicker clock = Ticker.newMockTicker();
    IonicDevice dev;
    ModelGuest guest;
    RdmaVerbs v;
    Cq cq;
    /** QPs 2 and 3 connected to each other, and 4 and 5: the values below choose 2 (or 4) by number. */
    Qp a, b, c, d;
    Buffer buf;
    Mr mr;
    final Wc wc = new Wc();
    final SendWr wr = new SendWr();

    void start(String... inject) throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.parse(inject));
        guest = new ModelGuest(dev, 16 << 20);
        dev.rdma().clock(clock);
        v = RdmaVerbs.open(guest.drv);
        cq = v.createCq(7);
        a = v.createQp(RC, cq, cq, 4, 4, 7, QP_ALL);
        b = v.createQp(RC, cq, cq, 4, 4, 7, QP_ALL);
        c = v.createQp(RC, cq, cq, 4, 4, 7, QP_ALL);
        d = v.createQp(RC, cq, cq, 4, 4, 7, QP_ALL);
        assertThat(new int[] {a.id, b.id, c.id, d.id}).as("the model hands out QP ids in order").containsExactly(2, 3,
                4, 5);
        v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
        v.connect(c, Path.of("10.0.0.1", "10.0.0.2"), d, Path.of("10.0.0.2", "10.0.0.1"));
        buf = v.buffer(4 * PAGE, true);
        mr = v.regMr(buf, 0, buf.length, ALL);
    }

    @AfterEach
    void tearDown() {
        if (guest != null) {
            guest.close();
        }
    }

    static String status(int s) {
        return switch (s) {
            case STS_OK -> "SUCCESS";
            case STS_LOCAL_PROT_ERR -> "LOC_PROT_ERR";
            case STS_WQE_FLUSHED_ERR -> "WR_FLUSH_ERR";
            case STS_REMOTE_ACC_ERR -> "REM_ACCESS_ERR";
            case STS_RETRY_EXCEEDED -> "RETRY_EXC_ERR";
            case STS_RNR_RETRY_EXCEEDED -> "RNR_RETRY_EXC_ERR";
            default -> "status " + s;
        };
    }

    /** The next work completion as {@code QP/wr_id/STATUS}. */
    String next() {
        assertThat(v.pollWait(cq, wc, 2000)).as("a completion").isTrue();
        return wc.qpNum + "/" + wc.wrId + "/" + status(wc.status);
    }

    /** Every completion there is now, as {@link #next}. */
    List<String> drain() {
        List<String> out = new ArrayList<>();
        while (cq.poll(wc)) {
            out.add(wc.qpNum + "/" + wc.wrId + "/" + status(wc.status));
        }
        return out;
    }

    long va(long off) {
        return mr.va() + off;
    }

    /** Posts (without the doorbell when {@code !ring}) an RDMA WRITE of 8 bytes from offset {@code from} to {@code to}. */
    void write(Qp qp, long wrId, long from, long to, boolean ring) {
        wr.reset().sge(va(from), 8, mr.lkey());
        wr.wrId = wrId;
        wr.opcode = WRITE;
        wr.remoteVa = va(to);
        wr.rkey = mr.rkey();
        v.postSend(qp, wr, ring);
    }

    void send(Qp qp, long wrId, long from, int len, boolean ring) {
        wr.reset().sge(va(from), len, mr.lkey());
        wr.wrId = wrId;
        wr.opcode = SEND;
        v.postSend(qp, wr, ring);
    }

    void read(Qp qp, long wrId, long from, long into) {
        wr.reset().sge(va(into), 8, mr.lkey());
        wr.wrId = wrId;
        wr.opcode = READ;
        wr.remoteVa = va(from);
        wr.rkey = mr.rkey();
        v.postSend(qp, wr);
    }

    void advanceMicros(long us) {
        clock.advance(us, TimeUnit.MICROSECONDS);
        dev.rdma().tick(clock.nanoTime());
    }

    @Test
    void aRemoteAccessErrorCompletesTheChosenWqeMovesItsQpToErrorAndFlushesTheRest() throws IOException {
        start("rdma-rem-access:seq=2,qp=2");
        buf.putLong(0, 0x1111);
        buf.putLong(8, 0x2222);
        buf.putLong(16, 0x3333);
        v.postRecv(a, 50, va(PAGE), 64, mr.lkey()); // the requester's own receive: flushed with its QP
        v.postRecv(b, 60, va(PAGE + 64), 64, mr.lkey()); // the responder's: never touched
        write(a, 1, 0, 1024, false);
        write(a, 2, 8, 1032, false);
        write(a, 3, 16, 1040, false);
        v.ringSq(a);
        assertThat(next()).isEqualTo("2/1/SUCCESS");
        assertThat(next()).isEqualTo("2/2/REM_ACCESS_ERR");
        assertThat(drain()).as("QP 2 went to ERROR: its receive and the WRITE behind are flushed")
                .containsExactly("2/50/WR_FLUSH_ERR", "2/3/WR_FLUSH_ERR");
        assertThat(buf.getLong(1024)).isEqualTo(0x1111);
        assertThat(buf.getLong(1032)).as("nothing of the chosen WRITE landed").isZero();
        assertThat(buf.getLong(1040)).isZero();
        assertThat(v.query(a).state()).isEqualTo(ERR);
        assertThat(v.query(b).state()).as("the responder never saw the request").isEqualTo(RTS);
        // Values are numbered among their own QPs: QP 4's WRITEs are not QP 2's.
        write(c, 7, 0, 2048, true);
        write(c, 8, 8, 2056, true);
        assertThat(drain()).containsExactly("4/7/SUCCESS", "4/8/SUCCESS");
        assertThat(dev.faults().occurrences(FaultKind.RDMA_REM_ACCESS)).as("every RC WRITE reached").isEqualTo(4);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_REM_ACCESS)).isEqualTo(1);
        assertThat(dev.counters()).containsEntry("fault.rdma-rem-access.injected", 1L)
                .containsEntry("fault.rdma-rem-access.occurrences", 4L)
                .containsEntry("rdma.sq.errors", 1L)
                .containsEntry("fault.rdma-rnr.injected", 0L)
                .containsEntry("fault.rdma-retry-exc.injected", 0L)
                .containsEntry("fault.rdma-latency.injected", 0L);
        // The responder's receive is still posted: its own ERROR now flushes it.
        v.toState(b, ERR);
        assertThat(drain()).containsExactly("3/60/WR_FLUSH_ERR");
    }

    @Test
    void aReadOrAtomicChosenForARemoteAccessErrorLeavesBothSidesAlone() throws IOException {
        start("rdma-rem-access:qp=2,4");
        buf.putLong(0, 0xabcd);
        buf.putLong(64, 40);
        v.postRecv(b, 60, va(PAGE), 64, mr.lkey());
        send(a, 1, 0, 8, true); // a SEND carries no rkey: not this kind's
        assertThat(drain()).containsExactly("3/60/SUCCESS", "2/1/SUCCESS");
        read(a, 2, 0, 512);
        assertThat(next()).isEqualTo("2/2/REM_ACCESS_ERR");
        assertThat(buf.getLong(512)).as("no READ data landed").isZero();
        wr.reset().sge(va(128), 8, mr.lkey());
        wr.wrId = 3;
        wr.opcode = ATOMIC_FA;
        wr.remoteVa = va(64);
        wr.rkey = mr.rkey();
        wr.swapAdd = 2;
        v.postSend(c, wr);
        assertThat(next()).isEqualTo("4/3/REM_ACCESS_ERR");
        assertThat(buf.getLong(64)).as("the remote word is unchanged").isEqualTo(40);
        assertThat(buf.getLong(128)).as("no old value came back").isZero();
        assertThat(dev.faults().occurrences(FaultKind.RDMA_REM_ACCESS)).isEqualTo(2);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_REM_ACCESS)).isEqualTo(2);
    }

    @Test
    void anRnrRetryExceededConsumesNoReceiveAndComesAtOnce() throws IOException {
        start("rdma-rnr:seq=2,qp=2", "rdma-rnr:seq=1,qp=4");
        buf.putLong(0, 0x5151);
        v.postRecv(b, 60, va(PAGE), 64, mr.lkey());
        v.postRecv(b, 61, va(PAGE + 64), 64, mr.lkey());
        write(a, 1, 0, 1024, false); // a WRITE takes no receive: not this kind's
        send(a, 2, 0, 8, false);
        send(a, 3, 0, 8, false);
        send(a, 4, 0, 8, false);
        v.ringSq(a);
        assertThat(drain()).as("no time passes: the retries are taken as spent").containsExactly("3/60/SUCCESS",
                "2/1/SUCCESS", "2/2/SUCCESS", "2/3/RNR_RETRY_EXC_ERR", "2/4/WR_FLUSH_ERR");
        assertThat(buf.getLong(PAGE + 64)).as("the chosen SEND did not land").isZero();
        assertThat(v.query(b).state()).isEqualTo(RTS);
        v.toState(b, ERR);
        assertThat(drain()).as("the receive it would have taken is still there").containsExactly("3/61/WR_FLUSH_ERR");
        // WRITE_IMM takes a receive too.
        v.postRecv(d, 70, va(PAGE), 64, mr.lkey());
        wr.reset().sge(va(0), 8, mr.lkey());
        wr.wrId = 5;
        wr.opcode = WRITE_IMM;
        wr.imm = 0x77;
        wr.remoteVa = va(2048);
        wr.rkey = mr.rkey();
        v.postSend(c, wr);
        assertThat(next()).isEqualTo("4/5/RNR_RETRY_EXC_ERR");
        assertThat(buf.getLong(2048)).isZero();
        assertThat(dev.faults().occurrences(FaultKind.RDMA_RNR)).as("SENDs 2 and 3 (4 never ran), the WRITE_IMM")
                .isEqualTo(3);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_RNR)).isEqualTo(2);
        assertThat(dev.counters()).as("the device's own 5 s RNR failures are another count")
                .containsEntry("rdma.rnr.failures", 0L).containsEntry("fault.rdma-rnr.injected", 2L);
    }

    @Test
    void aRetryExceededLeavesNothingBehind() throws IOException {
        start("rdma-retry-exc:every=2,qp=2");
        buf.putLong(0, 0x6161);
        v.postRecv(b, 60, va(PAGE), 64, mr.lkey());
        write(a, 1, 0, 1024, true);
        read(a, 2, 0, 512);
        send(a, 3, 0, 8, true);
        assertThat(drain()).containsExactly("2/1/SUCCESS", "2/2/RETRY_EXC_ERR", "2/3/WR_FLUSH_ERR");
        assertThat(buf.getLong(1024)).isEqualTo(0x6161);
        assertThat(buf.getLong(512)).isZero();
        v.toState(b, ERR);
        assertThat(drain()).as("the SEND behind never reached b's receive").containsExactly("3/60/WR_FLUSH_ERR");
        assertThat(dev.counters()).containsEntry("fault.rdma-retry-exc.occurrences", 2L)
                .containsEntry("fault.rdma-retry-exc.injected", 1L);
    }

    @Test
    void anAddedLatencyHoldsTheWqeAndItsRemoteEffectInOrder() throws IOException {
        start("rdma-latency:us=500,qp=2");
        buf.putLong(0, 0x7171);
        buf.putLong(8, 0x7272);
        write(a, 1, 0, 1024, false);
        write(a, 2, 8, 1032, false);
        v.ringSq(a);
        write(c, 9, 0, 2048, true);
        assertThat(drain()).as("QP 4 is not chosen").containsExactly("4/9/SUCCESS");
        assertThat(buf.getLong(1024)).as("not carried out yet").isZero();
        write(a, 3, 0, 1040, true); // a doorbell while held does not jump the queue
        advanceMicros(499);
        assertThat(drain()).isEmpty();
        advanceMicros(1);
        assertThat(drain()).containsExactly("2/1/SUCCESS");
        assertThat(buf.getLong(1024)).isEqualTo(0x7171);
        assertThat(buf.getLong(1032)).as("the next one waits its own time").isZero();
        advanceMicros(500);
        assertThat(drain()).containsExactly("2/2/SUCCESS");
        assertThat(buf.getLong(1032)).isEqualTo(0x7272);
        advanceMicros(500);
        assertThat(drain()).containsExactly("2/3/SUCCESS");
        // A SEND's receiver sees it only when its time is up.
        v.postRecv(b, 60, va(PAGE), 64, mr.lkey());
        send(a, 4, 0, 8, true);
        advanceMicros(400);
        assertThat(drain()).isEmpty();
        advanceMicros(100);
        assertThat(drain()).containsExactly("3/60/SUCCESS", "2/4/SUCCESS");
        assertThat(buf.getLong(PAGE)).isEqualTo(0x7171);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_LATENCY)).isEqualTo(4);
        assertThat(dev.faults().occurrences(FaultKind.RDMA_LATENCY)).isEqualTo(5);
    }

    @Test
    void theDeviceTimerEndsAnAddedLatencyWithoutATick() throws IOException {
        start("rdma-latency:us=250,qp=2");
        List<Long> delays = new ArrayList<>();
        List<Runnable> tasks = new ArrayList<>();
        dev.rdma().timer((nanos, task) -> {
            delays.add(nanos);
            tasks.add(task);
            return null;
        });
        buf.putLong(0, 0x8181);
        write(a, 1, 0, 1024, false);
        write(a, 2, 0, 1032, false);
        v.ringSq(a);
        assertThat(delays).containsExactly(250_000L);
        tasks.get(0).run(); // early (a timer may fire at once): nothing is due, nothing runs
        assertThat(drain()).isEmpty();
        clock.advance(250, TimeUnit.MICROSECONDS);
        tasks.get(0).run();
        assertThat(drain()).containsExactly("2/1/SUCCESS");
        assertThat(buf.getLong(1024)).isEqualTo(0x8181);
        assertThat(delays).as("the next WQE's own wake-up").hasSize(3).endsWith(250_000L);
        clock.advance(250, TimeUnit.MICROSECONDS);
        tasks.get(tasks.size() - 1).run();
        assertThat(drain()).containsExactly("2/2/SUCCESS");
    }

    @Test
    void aHeldWqeOfAQpMovedToErrorIsFlushedNotRun() throws IOException {
        start("rdma-latency:us=500,qp=2");
        buf.putLong(0, 0x9191);
        write(a, 1, 0, 1024, true);
        v.toState(a, ERR);
        assertThat(drain()).containsExactly("2/1/WR_FLUSH_ERR");
        advanceMicros(1000);
        assertThat(drain()).isEmpty();
        assertThat(buf.getLong(1024)).isZero();
    }

    @Test
    void aDelayedWqeCanFailToo() throws IOException {
        start("rdma-latency:us=100,qp=2", "rdma-retry-exc:seq=1,qp=2");
        write(a, 1, 0, 1024, true);
        assertThat(drain()).isEmpty();
        advanceMicros(100);
        assertThat(drain()).containsExactly("2/1/RETRY_EXC_ERR");
    }

    @Test
    void localChecksComeFirst() throws IOException {
        start("rdma-rem-access:qp=2");
        wr.reset().sge(va(0), 8, mr.lkey() ^ 0x80);
        wr.wrId = 1;
        wr.opcode = WRITE;
        wr.remoteVa = va(1024);
        wr.rkey = mr.rkey();
        v.postSend(a, wr);
        assertThat(next()).as("a bad lkey is caught before anything leaves").isEqualTo("2/1/LOC_PROT_ERR");
        assertThat(dev.faults().occurrences(FaultKind.RDMA_REM_ACCESS)).isEqualTo(1);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_REM_ACCESS)).isZero();
    }

    @Test
    void aFractionIsTheSameOnEveryRun() throws IOException {
        String spec = "rdma-latency:us=1,frac=0.3,seed=5,qp=2";
        start(spec);
        List<Boolean> held = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            write(a, i, 0, 1024, true);
            List<String> now = drain();
            held.add(now.isEmpty());
            advanceMicros(1); // the same time passes either way
            if (now.isEmpty()) {
                now = drain();
            }
            assertThat(now).containsExactly("2/" + i + "/SUCCESS");
        }
        FaultPlan model = FaultPlan.parse(spec);
        List<Boolean> expected = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            expected.add(model.check(FaultKind.RDMA_LATENCY, 2));
        }
        assertThat(held).isEqualTo(expected);
        assertThat(dev.faults().injectedCount(FaultKind.RDMA_LATENCY)).isBetween(8L, 30L);
    }

    @Test
    void ucQpsAreNotChosen() throws IOException {
        start("rdma-retry-exc:every=1", "rdma-latency:us=10");
        RdmaRaw raw = v.raw();
        long ring = guest.drv.alloc(32L << 6);
        assertThat(raw.createCq(8, 2, ring, 6).status()).isZero();
        RawCqe.Ring rawCq = raw.cqRing(ring, 6);
        Mr pd0 = v.regMr(0, buf, 0, buf.length, ALL); // raw QPs are in protection domain 0
        long[] sqs = new long[2];
        for (int i = 0; i < 2; i++) {
            int id = 10 + i;
            sqs[i] = guest.drv.alloc(64 * 16);
            assertThat(raw.createQp(id, 1 /* UC */, 0, 8, sqs[i], 4, guest.drv.alloc(64 * 16), 4).status()).isZero();
            assertThat(raw.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0, QP_REMOTE_WRITE).status())
                    .isZero();
            assertThat(raw.modifyQp(id, IB_QP_STATE | IB_QP_DEST_QPN, RTR, 0, 21 - id).status()).isZero();
            assertThat(raw.modifyQp(id, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        }
        buf.putLong(0, 0xa1a1);
        new RawWqe().wrap(guest.at(sqs[0], 64)).wqeId(0).op(WRITE).numSgeKey(1).rdma(va(1024), pd0.rkey()).length(8)
                .sge(WQE_PLD, 0, va(0), 8, pd0.lkey());
        raw.ringSq(0, 10, 1);
        RawCqe done = rawCq.poll();
        assertThat(done).as("UC: completed at once").isNotNull();
        assertThat(done.error()).isFalse();
        assertThat(buf.getLong(1024)).isEqualTo(0xa1a1);
        assertThat(dev.faults().occurrences(FaultKind.RDMA_RETRY_EXC)).isZero();
        assertThat(dev.faults().occurrences(FaultKind.RDMA_LATENCY)).isZero();
    }
}
