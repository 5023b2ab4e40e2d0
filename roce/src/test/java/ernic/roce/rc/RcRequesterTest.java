package ernic.roce.rc;

import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;
import ernic.roce.rc.RcTestBed.Completion;
import ernic.roce.rc.RcTestBed.Packet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static ernic.roce.IbOpcode.*;
import static ernic.roce.rc.RcTestBed.MR_RKEY;
import static ernic.roce.rc.RcTestBed.ack;
import static ernic.roce.rc.RcTestBed.response;
import static org.assertj.core.api.Assertions.assertThat;

/** The send side alone: what it puts on the wire, and what each response, NAK and timer does to it. */
class RcRequesterTest {
    private static final long VA = RcTestBed.BASE_VA + 0x100;

    private final RcTestBed bed = new RcTestBed(RcAttributes.defaults());
    private final RcRequester req = bed.requester;

    private static List<IbOpcode> opcodes(List<Packet> ps) {
        return ps.stream().map(Packet::op).toList();
    }

    private static List<Integer> psns(List<Packet> ps) {
        return ps.stream().map(p -> p.h().psn).toList();
    }

    private List<Completion> completions() {
        return bed.sendSide.completions;
    }

    @Test
    void cutsASendIntoPathMtuPacketsWithAckReqOnTheLast() {
        bed.postSend(1, 2500);
        List<Packet> ps = bed.poll();
        assertThat(opcodes(ps)).containsExactly(RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST);
        assertThat(psns(ps)).containsExactly(0, 1, 2);
        assertThat(ps).extracting(p -> p.data().length).containsExactly(1024, 1024, 452);
        assertThat(ps).extracting(p -> p.h().ackReq).containsExactly(false, false, true);
        assertThat(ps).allMatch(p -> p.h().destQp == RcTestBed.RESPONDER_QP);
        byte[] whole = RcTestBed.pattern(1, 2500);
        assertThat(ps.get(2).data()).isEqualTo(java.util.Arrays.copyOfRange(whole, 2048, 2500));
    }

    @Test
    void atMost128PsnsGoUnacknowledgedWithAckReqEvery64Packets() {
        bed.postWrite(1, 300 * 1024, VA); // 300 packets at MTU 1024
        List<Packet> first = bed.poll();
        assertThat(first).hasSize(RcRequester.MAX_UNACKED_PSNS);
        assertThat(java.util.stream.IntStream.range(0, first.size()).filter(i -> first.get(i).h().ackReq).boxed())
                .as("the packets that ask for an ACK").containsExactly(63, 127);
        assertThat(bed.poll()).as("the window is full").isEmpty();
        bed.toRequester(RcTestBed.ack(TransportHeader.AETH_ACK, 63)); // the ACK the AckReq of packet 64 asked for
        List<Packet> more = bed.poll();
        assertThat(psns(more)).hasSize(64).startsWith(128).endsWith(191);
        assertThat(completions()).isEmpty();
    }

    @Test
    void afterATimeoutTheWindowStartsSmallAndDoublesWithEachAcknowledgement() {
        bed.postWrite(1, 300 * 1024, VA);
        assertThat(bed.poll()).hasSize(RcRequester.MAX_UNACKED_PSNS);
        bed.now = bed.requester.nextDeadline();
        bed.requester.tick(bed.now);
        List<Packet> again = bed.poll();
        assertThat(psns(again)).as("go-back-N, a small window").containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(java.util.stream.IntStream.range(0, again.size()).filter(i -> again.get(i).h().ackReq).boxed())
                .as("acknowledged before the window fills").containsExactly(3, 7);
        bed.toRequester(RcTestBed.ack(TransportHeader.AETH_ACK, 3));
        assertThat(psns(bed.poll())).as("the window doubled: 4 .. 19 outstanding")
                .containsExactly(8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19);
        bed.toRequester(RcTestBed.ack(TransportHeader.AETH_ACK, 19));
        assertThat(bed.poll()).hasSize(32);
    }

    @Test
    void aMessageOfAtMostOneMtuIsOnePacketEvenEmpty() {
        bed.postSends(0, 1024);
        List<Packet> ps = bed.poll();
        assertThat(opcodes(ps)).containsExactly(RC_SEND_ONLY, RC_SEND_ONLY);
        assertThat(ps).extracting(p -> p.data().length).containsExactly(0, 1024);
        assertThat(ps).allMatch(p -> p.h().ackReq);
    }

    @Test
    void immediateAndInvalidateGoOnTheLastPacket() {
        bed.post(1, RcOp.SEND_WITH_IMM, new byte[100], 0, 0, 0xabcd, 0, 0);
        bed.post(2, RcOp.SEND_WITH_INV, new byte[2000], 0, 0, 0x7777, 0, 0);
        bed.post(3, RcOp.RDMA_WRITE_WITH_IMM, new byte[3000], VA, MR_RKEY, 0x55, 0, 0);
        List<Packet> ps = bed.poll();
        assertThat(opcodes(ps)).containsExactly(RC_SEND_ONLY_WITH_IMMEDIATE, RC_SEND_FIRST,
                RC_SEND_LAST_WITH_INVALIDATE, RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE,
                RC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
        assertThat(ps.get(0).h().imm).isEqualTo(0xabcd);
        assertThat(ps.get(2).h().invRkey).isEqualTo(0x7777);
        assertThat(ps.get(5).h().imm).isEqualTo(0x55);
    }

    @Test
    void aWriteCarriesItsRethOnTheFirstPacket() {
        bed.postWrite(1, 3000, VA);
        Packet first = bed.poll().getFirst();
        assertThat(first.op()).isEqualTo(RC_RDMA_WRITE_FIRST);
        assertThat(first.h().va).isEqualTo(VA);
        assertThat(first.h().rkey).isEqualTo(MR_RKEY);
        assertThat(first.h().dmaLength).isEqualTo(3000);
    }

    @Test
    void aReadRequestTakesOnePsnPerResponsePacket() {
        bed.postRead(1, 5000, VA);
        bed.postSend(2, 10);
        List<Packet> ps = bed.poll();
        assertThat(opcodes(ps)).containsExactly(RC_RDMA_READ_REQUEST, RC_SEND_ONLY);
        assertThat(psns(ps)).containsExactly(0, 5);
        assertThat(ps.get(0).h().dmaLength).isEqualTo(5000);
        assertThat(ps.get(0).h().ackReq).isTrue();
        assertThat(req.nextPsn()).isEqualTo(6);
    }

    @Test
    void atomicsCarryTheirOperands() {
        bed.post(1, RcOp.ATOMIC_CMP_AND_SWP, new byte[0], VA, MR_RKEY, 0, 9, 4);
        Packet p = bed.poll().getFirst();
        assertThat(p.op()).isEqualTo(RC_CMP_SWAP);
        assertThat(p.h().va).isEqualTo(VA);
        assertThat(p.h().swapAdd).isEqualTo(9);
        assertThat(p.h().compare).isEqualTo(4);
        assertThat(p.data()).isEmpty();
    }

    @Test
    void maxRdAtomicBoundsTheReadsAndAtomicsInFlight() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRdAtomic(2, 2));
        b.postRead(1, 10, VA);
        b.post(2, RcOp.ATOMIC_FETCH_AND_ADD, new byte[0], VA, MR_RKEY, 0, 1, 0);
        b.postRead(3, 10, VA);
        b.postSend(4, 10);
        assertThat(opcodes(b.poll())).containsExactly(RC_RDMA_READ_REQUEST, RC_FETCH_ADD);
        assertThat(b.requester.readsInFlight()).isEqualTo(2);
        b.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 0, new byte[10]));
        assertThat(b.sendSide.completions).containsExactly(new Completion(1, RcStatus.SUCCESS));
        assertThat(opcodes(b.poll())).containsExactly(RC_RDMA_READ_REQUEST, RC_SEND_ONLY);
    }

    @Test
    void aSolicitedSendOrWriteWithImmediateSetsSeOnItsLastPacketAndTheReceiverSeesIt() {
        int sol = ConnectedRequester.SOLICITED;
        bed.post(1, RcOp.SEND, sol, RcTestBed.pattern(1, 2500), 0, 0, 0, 0, 0);
        bed.post(2, RcOp.RDMA_WRITE, sol, RcTestBed.pattern(2, 10), VA, MR_RKEY, 0, 0, 0); // a WRITE cannot ask
        bed.post(3, RcOp.RDMA_WRITE_WITH_IMM, sol, RcTestBed.pattern(3, 10), VA, MR_RKEY, 7, 0, 0);
        bed.postSend(4, 10);
        for (int i = 0; i < 3; i++) {
            bed.receiveSide.postedReceives.add(4096);
        }
        List<Packet> ps = bed.poll();
        assertThat(ps).extracting(p -> p.h().solicited).containsExactly(false, false, true, false, true, false);
        bed.exchange(ps);
        assertThat(bed.receiveSide.received).extracting(RcTestBed.Received::solicited)
                .containsExactly(true, true, false);
        assertThat(completions()).hasSize(4);
    }

    @Test
    void aFencedMessageWaitsUntilTheReadsAndAtomicsBeforeItHaveCompleted() {
        int fence = ConnectedRequester.FENCE;
        bed.postRead(1, 10, VA);
        bed.post(2, RcOp.SEND, fence, RcTestBed.pattern(2, 10), 0, 0, 0, 0, 0);
        bed.postSend(3, 10);
        assertThat(opcodes(bed.poll())).as("the SEND waits, and what follows it").containsExactly(RC_RDMA_READ_REQUEST);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 0, new byte[10]));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS));
        assertThat(psns(bed.poll())).as("begun once the READ completed").containsExactly(1, 2);
        bed.post(4, RcOp.SEND, fence, RcTestBed.pattern(4, 10), 0, 0, 0, 0, 0);
        assertThat(psns(bed.poll())).as("no READ before it: at once").containsExactly(3);
    }

    @Test
    void aCoalescedAckCompletesEveryMessageUpToItsPsnInOrder() {
        bed.postSends(10, 3000, 10);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_ACK, 3));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS),
                new Completion(2, RcStatus.SUCCESS));
        bed.toRequester(ack(TransportHeader.AETH_ACK, 4));
        assertThat(completions()).hasSize(3);
        assertThat(req.outstanding()).isZero();
        assertThat(req.nextDeadline()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void anAckInsideAMessageAcknowledgesPartOfIt() {
        bed.postSend(1, 3000);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_ACK, 1));
        assertThat(completions()).isEmpty();
        assertThat(req.ackPsn()).isEqualTo(2);
    }

    @Test
    void readResponsesGoToTheBufferAndAcknowledgeWhatPrecedes() {
        bed.postSend(1, 10);
        bed.postRead(2, 1500, VA);
        bed.poll();
        byte[] data = RcTestBed.pattern(99, 1500);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_FIRST, 1, java.util.Arrays.copyOf(data, 1024)));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS));
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_LAST, 2, java.util.Arrays.copyOfRange(data, 1024, 1500)));
        assertThat(completions()).last().isEqualTo(new Completion(2, RcStatus.SUCCESS));
        assertThat(bed.sendSide.readBuffers.get(2L)).isEqualTo(data);
        assertThat(req.readsInFlight()).isZero();
    }

    @Test
    void anAckPastAnUnansweredReadIsAnImpliedNakThatResendsTheRead() {
        bed.postRead(1, 100, VA);
        bed.postSend(2, 10);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_ACK, 1));
        assertThat(completions()).isEmpty();
        assertThat(bed.count(RcCounter.REQ_IMPLIED_NAKS)).isEqualTo(1);
        List<Packet> again = bed.poll();
        assertThat(opcodes(again)).containsExactly(RC_RDMA_READ_REQUEST, RC_SEND_ONLY);
        assertThat(psns(again)).containsExactly(0, 1);
        assertThat(bed.count(RcCounter.REQ_RETRANSMITTED)).isEqualTo(2);
    }

    @Test
    void aReadResponseAfterAGapIsAnImpliedNakThatResendsTheRestOfTheRead() {
        bed.postRead(1, 3000, VA);
        bed.poll();
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_FIRST, 0, new byte[1024]));
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_LAST, 2, new byte[952]));
        assertThat(completions()).isEmpty();
        Packet again = bed.poll().getFirst();
        assertThat(again.op()).isEqualTo(RC_RDMA_READ_REQUEST);
        assertThat(again.h().psn).isEqualTo(1);
        assertThat(again.h().va).isEqualTo(VA + 1024);
        assertThat(again.h().dmaLength).isEqualTo(3000 - 1024);
    }

    @Test
    void aReadResentFromPartWayIsAnsweredFromFirstOrOnlyThere() {
        bed.postRead(1, 3000, VA);
        bed.poll();
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_FIRST, 0, new byte[1024]));
        bed.now = req.nextDeadline();
        req.tick(bed.now);
        assertThat(psns(bed.poll())).containsExactly(1);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_FIRST, 1, new byte[1024]));
        bed.now = req.nextDeadline();
        req.tick(bed.now);
        assertThat(bed.poll().getFirst().h().dmaLength).isEqualTo(952);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 2, new byte[952]));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS));
        assertThat(bed.count(RcCounter.REQ_DROP_UNEXPECTED)).isZero();
    }

    @Test
    void anAtomicAckGivesTheOriginalValueThenTheCompletion() {
        bed.post(1, RcOp.ATOMIC_FETCH_AND_ADD, new byte[0], VA, MR_RKEY, 0, 5, 0);
        bed.poll();
        Packet a = response(RC_ATOMIC_ACKNOWLEDGE, 0, new byte[0]);
        a.h().origData = 41;
        bed.toRequester(a);
        assertThat(bed.sendSide.atomicResults).containsEntry(1L, 41L);
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS));
    }

    @Test
    void aSequenceNakGoesBackToItsPsnAndAcknowledgesWhatPrecedes() {
        bed.postSends(10, 10, 10);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_NAK_PSN_SEQUENCE, 1));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS));
        List<Packet> again = bed.poll();
        assertThat(psns(again)).containsExactly(1, 2);
        assertThat(bed.count(RcCounter.REQ_RETRANSMITTED)).isEqualTo(2);
        // a second NAK for the same PSN while that retry is under way starts no other
        bed.toRequester(ack(TransportHeader.AETH_NAK_PSN_SEQUENCE, 1));
        assertThat(bed.poll()).isEmpty();
    }

    @Test
    void aSequenceNakInsideAMessageResendsFromThatPacket() {
        bed.postSend(1, 4000);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_NAK_PSN_SEQUENCE, 2));
        List<Packet> again = bed.poll();
        assertThat(opcodes(again)).containsExactly(RC_SEND_MIDDLE, RC_SEND_LAST);
        assertThat(psns(again)).containsExactly(2, 3);
    }

    @Test
    void anRnrNakWaitsTheTimeItsCodeGivesThenGoesBack() {
        bed.postSend(1, 10);
        bed.poll();
        bed.toRequester(ack(TransportHeader.AETH_RNR_NAK | 14, 0)); // 1.28 ms
        assertThat(req.rnrWaiting()).isTrue();
        assertThat(req.nextDeadline()).isEqualTo(1_280_000);
        bed.now = 1_279_999;
        req.tick(bed.now);
        assertThat(bed.poll()).isEmpty();
        bed.now = 1_280_000;
        req.tick(bed.now);
        assertThat(psns(bed.poll())).containsExactly(0);
        assertThat(completions()).isEmpty();
    }

    @Test
    void rnrTimerCodesAreTheSpecsTable() {
        assertThat(RcAttributes.rnrTimerNanos(0)).isEqualTo(655_360_000L);
        assertThat(RcAttributes.rnrTimerNanos(1)).isEqualTo(10_000L);
        assertThat(RcAttributes.rnrTimerNanos(12)).isEqualTo(640_000L);
        assertThat(RcAttributes.rnrTimerNanos(31)).isEqualTo(491_520_000L);
    }

    @Test
    void rnrRetriesRunOutWithRnrRetryExceeded() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(14, 7, 2));
        b.postSends(10, 10);
        for (int i = 0; i < 2; i++) {
            b.poll();
            b.toRequester(ack(TransportHeader.AETH_RNR_NAK | 1, 0));
            b.now += 10_000;
            b.requester.tick(b.now);
        }
        b.poll();
        b.toRequester(ack(TransportHeader.AETH_RNR_NAK | 1, 0));
        assertThat(b.sendSide.completions).containsExactly(new Completion(1, RcStatus.RNR_RETRY_EXC_ERR),
                new Completion(2, RcStatus.WR_FLUSH_ERR));
        assertThat(b.requester.failed()).isTrue();
    }

    @Test
    void rnrRetrySevenRetriesForEver() {
        bed.postSend(1, 10);
        for (int i = 0; i < 100; i++) {
            bed.poll();
            bed.toRequester(ack(TransportHeader.AETH_RNR_NAK | 1, 0));
            bed.now += 10_000;
            req.tick(bed.now);
        }
        assertThat(req.failed()).isFalse();
        assertThat(bed.count(RcCounter.REQ_RNR_NAKS)).isEqualTo(100);
    }

    @ParameterizedTest
    @CsvSource({"0x61, REM_INV_REQ_ERR", "0x62, REM_ACCESS_ERR", "0x63, REM_OP_ERR", "0x64, REM_INV_RD_REQ_ERR"})
    void aFatalNakCompletesItsMessageWithItsStatusAndFlushesTheRest(String syndrome, RcStatus status) {
        bed.postSend(1, 10);
        bed.postWrite(2, 10, VA);
        bed.postSend(3, 10);
        bed.poll();
        bed.toRequester(ack(Integer.decode(syndrome), 1));
        assertThat(completions()).containsExactly(new Completion(1, RcStatus.SUCCESS), new Completion(2, status),
                new Completion(3, RcStatus.WR_FLUSH_ERR));
        assertThat(req.failed()).isTrue();
        bed.postSend(4, 10);
        assertThat(completions()).last().isEqualTo(new Completion(4, RcStatus.WR_FLUSH_ERR));
        assertThat(bed.poll()).isEmpty();
        bed.toRequester(ack(TransportHeader.AETH_ACK, 2));
        assertThat(bed.count(RcCounter.REQ_DROP_QP_ERROR)).isEqualTo(1);
    }

    @Test
    void theTimerResendsFromTheOldestUnacknowledgedPsn() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(10, 7, 7));
        long timeout = 4096L << 10;
        b.postSend(1, 3000);
        b.poll();
        b.toRequester(ack(TransportHeader.AETH_ACK, 0));
        assertThat(b.requester.nextDeadline()).isEqualTo(timeout);
        b.now = timeout - 1;
        b.requester.tick(b.now);
        assertThat(b.poll()).isEmpty();
        b.now = timeout;
        b.requester.tick(b.now);
        assertThat(psns(b.poll())).containsExactly(1, 2);
        assertThat(b.count(RcCounter.REQ_TIMEOUTS)).isEqualTo(1);
        assertThat(b.requester.nextDeadline()).isEqualTo(2 * timeout);
    }

    @Test
    void retriesWithoutProgressRunOutWithRetryExceeded() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(1, 3, 7));
        b.postSends(10, 10);
        int sent = b.poll().size();
        while (!b.requester.failed()) {
            b.now = b.requester.nextDeadline();
            b.requester.tick(b.now);
            sent += b.poll().size();
        }
        assertThat(b.sendSide.completions).containsExactly(new Completion(1, RcStatus.RETRY_EXC_ERR),
                new Completion(2, RcStatus.WR_FLUSH_ERR));
        assertThat(b.count(RcCounter.REQ_TIMEOUTS)).isEqualTo(4);
        assertThat(sent).isEqualTo(2 * (1 + 3));
    }

    @Test
    void retryCountSevenRetriesForEverAsRxeDoes() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(1, RcAttributes.RETRY_FOREVER, 7));
        b.postSend(1, 10);
        b.poll();
        for (int i = 0; i < 100; i++) {
            b.now = b.requester.nextDeadline();
            b.requester.tick(b.now);
            assertThat(psns(b.poll())).as("timeout " + (i + 1)).containsExactly(0);
        }
        assertThat(b.requester.failed()).isFalse();
        b.toRequester(ack(TransportHeader.AETH_ACK, 0)); // the peer was alive after all
        assertThat(b.sendSide.completions).containsExactly(new Completion(1, RcStatus.SUCCESS));
    }

    @Test
    void progressGivesTheRetriesBack() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(1, 1, 7));
        b.postSends(10, 10);
        b.poll();
        b.now = b.requester.nextDeadline();
        b.requester.tick(b.now); // the one retry
        b.poll();
        b.toRequester(ack(TransportHeader.AETH_ACK, 0));
        b.now = b.requester.nextDeadline();
        b.requester.tick(b.now); // a retry again, not a failure
        assertThat(b.requester.failed()).isFalse();
        assertThat(psns(b.poll())).containsExactly(1);
    }

    @Test
    void timeoutZeroMeansNoTimer() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRetry(0, 7, 7));
        b.postSend(1, 10);
        b.poll();
        assertThat(b.requester.nextDeadline()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void psnsWrapAround() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults(), 0xff_fffe, 1 << 16);
        b.postSend(1, 3000);
        assertThat(psns(b.poll())).containsExactly(0xff_fffe, 0xff_ffff, 0);
        b.toRequester(ack(TransportHeader.AETH_ACK, 0));
        assertThat(b.sendSide.completions).containsExactly(new Completion(1, RcStatus.SUCCESS));
    }

    @Test
    void eachRefusedResponseIsCountedUnderItsCause() {
        bed.postSend(1, 10);
        bed.postRead(2, 100, VA);
        bed.poll();
        bed.toRequester(RcTestBed.request(RC_SEND_ONLY, 0, false, new byte[0]));
        assertThat(bed.count(RcCounter.REQ_DROP_NOT_RESPONSE)).isEqualTo(1);
        bed.toRequester(ack(TransportHeader.AETH_ACK, 7));
        assertThat(bed.count(RcCounter.REQ_DROP_PSN_OUT_OF_WINDOW)).isEqualTo(1);
        bed.toRequester(ack(0x40, 0));
        assertThat(bed.count(RcCounter.REQ_DROP_BAD_SYNDROME)).isEqualTo(1);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 0, new byte[10]));
        assertThat(bed.count(RcCounter.REQ_DROP_UNEXPECTED)).isEqualTo(1);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 1, new byte[99]));
        assertThat(bed.count(RcCounter.REQ_DROP_BAD_LENGTH)).isEqualTo(1);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_FIRST, 1, new byte[1024]));
        assertThat(bed.count(RcCounter.REQ_DROP_UNEXPECTED)).isEqualTo(2);
        bed.toRequester(response(RC_RDMA_READ_RESPONSE_ONLY, 1, new byte[100]));
        assertThat(completions()).extracting(Completion::status).containsExactly(RcStatus.SUCCESS, RcStatus.SUCCESS);
        bed.toRequester(ack(TransportHeader.AETH_ACK, 0));
        assertThat(bed.count(RcCounter.REQ_DROP_DUPLICATE)).isEqualTo(1);
        assertThat(req.failed()).isFalse();
    }
}
