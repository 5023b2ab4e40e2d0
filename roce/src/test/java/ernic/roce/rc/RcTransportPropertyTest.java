package ernic.roce.rc;

import ernic.roce.rc.RcTestBed.Completion;
import ernic.roce.rc.RcTestBed.Received;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static ernic.roce.rc.RcTestBed.BASE_VA;
import static ernic.roce.rc.RcTestBed.MR_RKEY;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The model-based property of the RC transport: a requester and a responder joined by a channel that drops,
 * duplicates and reorders packets, random message mixes and path MTUs. Whatever the channel does, every message
 * is executed once, in order, with the right bytes (atomics exactly once, against a sequential model), and the
 * requester completes each in order; or, when the loss lasts long enough, the requester completes the oldest
 * outstanding message with RETRY_EXC_ERR after retry_cnt retransmissions, flushes the rest, and what was
 * delivered before is still exactly-once.
 */
class RcTransportPropertyTest {
    private static final int MAX_MESSAGES = 24, MAX_LENGTH = 3 * 4096 + 100;
    /** Memory of the responder: one write slot per message, a read area, four atomic words. */
    private static final int SLOT = 16384, READ_AREA = MAX_MESSAGES * SLOT, READ_AREA_LENGTH = 1 << 16,
            ATOMIC_AREA = READ_AREA + READ_AREA_LENGTH, MEMORY = ATOMIC_AREA + 64;
    private static final int INV_RKEY_BASE = 0x7000;

    /** One generated message: the operation, its length, a seed for its bytes and its place, atomic operands. */
    record Msg(RcOp op, int length, int seed, long operand, long compare) {
    }

    @Provide
    Arbitrary<List<Msg>> messages() {
        return message().list().ofMinSize(1).ofMaxSize(MAX_MESSAGES);
    }

    private static Arbitrary<Msg> message() {
        Arbitrary<Integer> length = Arbitraries.oneOf(Arbitraries.integers().between(0, 64),
                Arbitraries.integers().between(0, MAX_LENGTH), Arbitraries.of(256, 512, 1024, 2048, 4096, 8192));
        return Combinators.combine(Arbitraries.of(RcOp.class), length, Arbitraries.integers(),
                Arbitraries.longs().between(0, 3), Arbitraries.longs().between(0, 3)).as(Msg::new);
    }

    @Provide
    Arbitrary<List<Msg>> fewMessages() {
        return message().list().ofMinSize(1).ofMaxSize(8);
    }

    @Provide
    Arbitrary<Integer> mtus() {
        return Arbitraries.of(256, 512, 1024, 2048, 4096);
    }

    @Property(tries = 300)
    void everyMessageIsExecutedOnceInOrderWhateverTheChannelDoes(
            @ForAll("messages") List<Msg> msgs, @ForAll("mtus") int mtu,
            @ForAll @IntRange(max = 10) int dropPercent, @ForAll @IntRange(max = 10) int duplicatePercent,
            @ForAll @IntRange(max = 8_000) int jitterNanos, @ForAll @IntRange(min = 1, max = 4) int maxRdAtomic,
            @ForAll @IntRange(max = 3) int ackEvery, @ForAll @IntRange(max = 0xff_ffff) int initialPsn,
            @ForAll long seed) {
        RcAttributes attr = new RcAttributes(mtu, 4, 7, 7, maxRdAtomic, 4, 1, ackEvery, 64);
        Run run = new Run(attr, initialPsn, msgs, seed);
        RcChannel channel = new RcChannel(run.bed, seed, dropPercent, duplicatePercent, 1_000, jitterNanos);
        channel.run(2_000_000);
        boolean failed = run.bed.requester.failed();
        Statistics.label("outcome").collect(failed ? "retry exceeded" : "all delivered");
        Statistics.label("recovery").collect(run.bed.count(RcCounter.REQ_RETRANSMITTED) > 0
                ? "retransmitted" : "none needed");
        // Retries run out only when retry_cnt + 1 = 8 rounds in a row make no progress; at no more than 10% loss a
        // round fails less than one time in five, so 8 in a row (under 1 in 300,000) means a bug, not bad luck.
        assertThat(failed).as("retries ran out at %d%% loss (%d packets dropped)", dropPercent, channel.dropped)
                .isFalse();
        run.check();
    }

    @Property(tries = 100)
    void aBlackoutShorterThanTheRetriesLoseNothing(
            @ForAll("messages") List<Msg> msgs, @ForAll("mtus") int mtu,
            @ForAll @IntRange(max = 10) int duplicatePercent, @ForAll @IntRange(max = 8_000) int jitterNanos,
            @ForAll @IntRange(max = 300_000) int blackoutStart, @ForAll @IntRange(max = 4) int blackoutTimeouts,
            @ForAll @IntRange(max = 0xff_ffff) int initialPsn, @ForAll long seed) {
        RcAttributes attr = new RcAttributes(mtu, 4, 7, 7, 2, 4, 1, 0, 64);
        Run run = new Run(attr, initialPsn, msgs, seed);
        long length = blackoutTimeouts * attr.ackTimeoutNanos();
        new RcChannel(run.bed, seed, 0, duplicatePercent, 1_000, jitterNanos)
                .blackout(blackoutStart, blackoutStart + length).run(2_000_000);
        assertThat(run.bed.requester.failed()).as("failed").isFalse();
        run.check();
    }

    @Property(tries = 100)
    void totalLossEndsInRetryExceededAfterRetryCntRetransmissions(
            @ForAll("fewMessages") List<Msg> msgs, @ForAll("mtus") int mtu,
            @ForAll @IntRange(max = 6) int retryCnt, @ForAll @IntRange(min = 1, max = 12) int timeout,
            @ForAll @IntRange(max = 0xff_ffff) int initialPsn, @ForAll long seed) {
        RcAttributes attr = new RcAttributes(mtu, timeout, retryCnt, 7, 4, 4, 1, 0, 64);
        Run run = new Run(attr, initialPsn, msgs, seed);
        long end = new RcChannel(run.bed, seed, 0, 0, 1_000, 0).blackout(0, Long.MAX_VALUE).run(100_000);

        assertThat(run.bed.requester.failed()).isTrue();
        List<Completion> done = run.bed.sendSide.completions;
        assertThat(done).extracting(Completion::wrId).containsExactlyElementsOf(run.wrIds());
        assertThat(done.getFirst().status()).isEqualTo(RcStatus.RETRY_EXC_ERR);
        assertThat(done.subList(1, done.size())).allMatch(c -> c.status() == RcStatus.WR_FLUSH_ERR);
        // the first packet went out once, then once per retry; the timer fired retry_cnt + 1 times
        assertThat(run.bed.toResponder).filteredOn(p -> p.h().psn == initialPsn).hasSize(1 + retryCnt);
        assertThat(run.bed.count(RcCounter.REQ_TIMEOUTS)).isEqualTo(retryCnt + 1);
        assertThat(end).isEqualTo((retryCnt + 1) * attr.ackTimeoutNanos());
        assertThat(run.bed.responder.expectedPsn()).isEqualTo(initialPsn);
        assertThat(run.bed.receiveSide.received).isEmpty();
    }

    @Property(tries = 100)
    void lossThatNeverEndsAfterAWhileFailsTheQpAndKeepsWhatWasDeliveredExactlyOnce(
            @ForAll("messages") List<Msg> msgs, @ForAll("mtus") int mtu,
            @ForAll @IntRange(max = 5) int dropPercent, @ForAll @IntRange(max = 5) int duplicatePercent,
            @ForAll @IntRange(max = 8_000) int jitterNanos, @ForAll @IntRange(max = 200_000) int blackoutStart,
            @ForAll @IntRange(max = 6) int retryCnt, @ForAll long seed) {
        RcAttributes attr = new RcAttributes(mtu, 4, retryCnt, 7, 2, 4, 1, 0, 64);
        Run run = new Run(attr, 0, msgs, seed);
        new RcChannel(run.bed, seed, dropPercent, duplicatePercent, 1_000, jitterNanos)
                .blackout(blackoutStart, Long.MAX_VALUE).run(2_000_000);
        Statistics.label("outcome").collect(run.bed.requester.failed() ? "retry exceeded" : "all delivered first");
        run.check();
    }

    @Property(tries = 100)
    void receivesPostedLateGetRnrNaksAndStillEveryMessageOnce(
            @ForAll("messages") List<Msg> msgs, @ForAll("mtus") int mtu,
            @ForAll @IntRange(max = 3) int dropPercent, @ForAll @IntRange(max = 5) int duplicatePercent,
            @ForAll @IntRange(max = 8_000) int jitterNanos, @ForAll @IntRange(max = 2) int receivesUpFront,
            @ForAll @IntRange(min = 5_000, max = 100_000) int postEvery, @ForAll @IntRange(min = 1, max = 6) int rnrTimer,
            @ForAll long seed) {
        RcAttributes attr = new RcAttributes(mtu, 4, 7, RcAttributes.RNR_RETRY_FOREVER, 2, 4, rnrTimer, 0, 64);
        Run run = new Run(attr, 0, msgs, seed, receivesUpFront);
        long[] nextPost = {postEvery};
        int[] posted = {receivesUpFront};
        new RcChannel(run.bed, seed, dropPercent, duplicatePercent, 1_000, jitterNanos).onTime(now -> {
            while (now >= nextPost[0] && posted[0] < msgs.size()) {
                run.bed.receiveSide.postedReceives.add(SLOT);
                posted[0]++;
                nextPost[0] += postEvery;
            }
        }).run(2_000_000);
        Statistics.label("RNR NAKs").collect(run.bed.count(RcCounter.RESP_RNR_NAKS) > 0 ? "some" : "none");
        Statistics.label("outcome").collect(run.bed.requester.failed() ? "retry exceeded" : "all delivered");
        run.check();
    }

    /** One test run: the test bed with its messages posted, and the model to check it against. */
    private static final class Run {
        final RcTestBed bed;
        final List<Msg> msgs;
        final long[] readVa;

        Run(RcAttributes attr, int initialPsn, List<Msg> msgs, long seed) {
            this(attr, initialPsn, msgs, seed, msgs.size());
        }

        /** {@code receives}: how many receives are posted before the first message. */
        Run(RcAttributes attr, int initialPsn, List<Msg> msgs, long seed, int receives) {
            this.bed = new RcTestBed(attr, initialPsn, MEMORY);
            this.msgs = msgs;
            this.readVa = new long[msgs.size()];
            Random random = new Random(seed);
            byte[] readArea = new byte[READ_AREA_LENGTH];
            random.nextBytes(readArea);
            System.arraycopy(readArea, 0, bed.receiveSide.memory, READ_AREA, READ_AREA_LENGTH);
            for (int i = 0; i < receives; i++) {
                bed.receiveSide.postedReceives.add(SLOT);
            }
            for (int i = 0; i < msgs.size(); i++) {
                Msg m = msgs.get(i);
                byte[] data = RcTestBed.pattern(m.seed(), m.length());
                switch (m.op()) {
                    case SEND, SEND_WITH_IMM -> bed.post(i, m.op(), data, 0, 0, m.seed(), 0, 0);
                    case SEND_WITH_INV -> {
                        bed.receiveSide.invalidatable.add(INV_RKEY_BASE + i);
                        bed.post(i, m.op(), data, 0, 0, INV_RKEY_BASE + i, 0, 0);
                    }
                    case RDMA_WRITE, RDMA_WRITE_WITH_IMM ->
                            bed.post(i, m.op(), data, BASE_VA + (long) i * SLOT, MR_RKEY, m.seed(), 0, 0);
                    case RDMA_READ -> {
                        readVa[i] = BASE_VA + READ_AREA + Math.floorMod(m.seed(), READ_AREA_LENGTH - m.length());
                        bed.post(i, m.op(), new byte[m.length()], readVa[i], MR_RKEY, 0, 0, 0);
                    }
                    case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD ->
                            bed.post(i, m.op(), new byte[0], atomicVa(i), MR_RKEY, 0, m.operand(), m.compare());
                }
            }
        }

        static long atomicVa(int i) {
            return BASE_VA + ATOMIC_AREA + 8L * (i % 4);
        }

        List<Long> wrIds() {
            List<Long> ids = new ArrayList<>();
            for (long i = 0; i < msgs.size(); i++) {
                ids.add(i);
            }
            return ids;
        }

        /**
         * Checks the outcome against the model: the requester completed every message in order, all with
         * SUCCESS, or a prefix with SUCCESS, then RETRY_EXC_ERR, then WR_FLUSH_ERR; the responder executed a
         * prefix of the messages (at least the successful ones), each once, with the right bytes; the responder
         * never failed (an honest requester gives it no reason).
         */
        void check() {
            assertThat(bed.responder.failed()).as("responder failed").isFalse();
            List<Completion> done = bed.sendSide.completions;
            assertThat(done).extracting(Completion::wrId).containsExactlyElementsOf(wrIds());
            int ok = 0;
            while (ok < done.size() && done.get(ok).status() == RcStatus.SUCCESS) {
                ok++;
            }
            if (ok < done.size()) {
                assertThat(bed.requester.failed()).isTrue();
                assertThat(done.get(ok).status()).isEqualTo(RcStatus.RETRY_EXC_ERR);
                assertThat(done.subList(ok + 1, done.size())).allMatch(c -> c.status() == RcStatus.WR_FLUSH_ERR);
            }

            // receives: in order, each message once; all of those completed with SUCCESS, and a prefix in all
            List<Received> received = bed.receiveSide.received;
            List<Integer> expectReceive = new ArrayList<>();
            List<Integer> invalidated = new ArrayList<>();
            for (int i = 0; i < msgs.size(); i++) {
                RcOp op = msgs.get(i).op();
                if (op == RcOp.SEND || op == RcOp.SEND_WITH_IMM || op == RcOp.SEND_WITH_INV
                        || op == RcOp.RDMA_WRITE_WITH_IMM) {
                    expectReceive.add(i);
                }
            }
            assertThat(received.size()).isLessThanOrEqualTo(expectReceive.size());
            for (int k = 0; k < received.size(); k++) {
                int i = expectReceive.get(k);
                Msg m = msgs.get(i);
                Received r = received.get(k);
                assertThat(r.status()).isEqualTo(RcStatus.SUCCESS);
                assertThat(r.length()).as("length of message %d", i).isEqualTo(m.length());
                assertThat(r.withImm()).isEqualTo(m.op() == RcOp.SEND_WITH_IMM || m.op() == RcOp.RDMA_WRITE_WITH_IMM);
                if (r.withImm()) {
                    assertThat(r.imm()).isEqualTo(m.seed());
                }
                assertThat(r.withInv()).isEqualTo(m.op() == RcOp.SEND_WITH_INV);
                if (r.withInv()) {
                    assertThat(r.invRkey()).isEqualTo(INV_RKEY_BASE + i);
                    invalidated.add(INV_RKEY_BASE + i);
                }
                if (m.op() != RcOp.RDMA_WRITE_WITH_IMM) {
                    assertThat(r.data()).as("bytes of message %d", i).isEqualTo(RcTestBed.pattern(m.seed(), m.length()));
                }
            }
            int receivedOk = 0;
            for (int i : expectReceive) {
                receivedOk += i < ok ? 1 : 0;
            }
            assertThat(received.size()).as("receives of the messages completed").isGreaterThanOrEqualTo(receivedOk);
            assertThat(bed.receiveSide.invalidated).containsExactlyElementsOf(invalidated);

            // writes: every byte once; those completed are in memory
            long written = 0;
            for (int i = 0; i < msgs.size(); i++) {
                Msg m = msgs.get(i);
                boolean write = m.op() == RcOp.RDMA_WRITE || m.op() == RcOp.RDMA_WRITE_WITH_IMM;
                if (write && i < ok) {
                    written += m.length();
                    byte[] at = Arrays.copyOfRange(bed.receiveSide.memory, i * SLOT, i * SLOT + m.length());
                    assertThat(at).as("memory of write %d", i).isEqualTo(RcTestBed.pattern(m.seed(), m.length()));
                }
            }
            if (ok == msgs.size()) {
                assertThat(bed.receiveSide.bytesWritten).as("bytes written").isEqualTo(written);
            } else {
                assertThat(bed.receiveSide.bytesWritten).isGreaterThanOrEqualTo(written);
            }

            // reads: the bytes of the read area
            for (int i = 0; i < ok; i++) {
                Msg m = msgs.get(i);
                if (m.op() == RcOp.RDMA_READ) {
                    int from = (int) (readVa[i] - BASE_VA);
                    assertThat(bed.sendSide.readBuffers.get((long) i)).as("read %d", i)
                            .isEqualTo(Arrays.copyOfRange(bed.receiveSide.memory, from, from + m.length()));
                }
            }

            // atomics: against a sequential model, each executed once
            long[] model = new long[4];
            int atomics = 0, atomicsOk = 0;
            for (int i = 0; i < msgs.size(); i++) {
                Msg m = msgs.get(i);
                if (!m.op().atomic()) {
                    continue;
                }
                atomics++;
                long original = model[i % 4];
                if (i < ok) {
                    atomicsOk++;
                    assertThat(bed.sendSide.atomicResults.get((long) i)).as("atomic %d", i).isEqualTo(original);
                }
                if (m.op() == RcOp.ATOMIC_FETCH_AND_ADD) {
                    model[i % 4] = original + m.operand();
                } else if (original == m.compare()) {
                    model[i % 4] = m.operand();
                }
            }
            assertThat(bed.receiveSide.atomicsExecuted).isBetween(atomicsOk, atomics);
            if (ok == msgs.size()) {
                assertThat(bed.receiveSide.atomicsExecuted).isEqualTo(atomics);
                for (int w = 0; w < 4; w++) {
                    assertThat(bed.receiveSide.longAt(BASE_VA + ATOMIC_AREA + 8L * w)).isEqualTo(model[w]);
                }
            }
        }
    }
}
