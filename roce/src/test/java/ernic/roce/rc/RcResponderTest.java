package ernic.roce.rc;

import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;
import ernic.roce.rc.RcTestBed.Packet;
import ernic.roce.rc.RcTestBed.Received;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static ernic.roce.IbOpcode.*;
import static ernic.roce.rc.RcTestBed.BASE_VA;
import static ernic.roce.rc.RcTestBed.MR_RKEY;
import static ernic.roce.rc.RcTestBed.READ_ONLY_RKEY;
import static ernic.roce.rc.RcTestBed.request;
import static org.assertj.core.api.Assertions.assertThat;

/** The receive side alone: requests built by hand, and what it executes and answers. */
class RcResponderTest {
    private final RcTestBed bed = new RcTestBed(RcAttributes.defaults());
    private final RcResponder resp = bed.responder;
    private final RcTestBed.ReceiveSide host = bed.receiveSide;

    private static Packet write(IbOpcode op, int psn, boolean ackReq, long va, int rkey, int dmaLength, byte[] data) {
        Packet p = request(op, psn, ackReq, data);
        p.h().va = va;
        p.h().rkey = rkey;
        p.h().dmaLength = dmaLength;
        return p;
    }

    private static Packet read(int psn, long va, int rkey, int length) {
        return write(RC_RDMA_READ_REQUEST, psn, true, va, rkey, length, new byte[0]);
    }

    private static Packet atomic(IbOpcode op, int psn, long va, long swapAdd, long compare) {
        Packet p = write(op, psn, true, va, MR_RKEY, 0, new byte[0]);
        p.h().swapAdd = swapAdd;
        p.h().compare = compare;
        return p;
    }

    private static void assertAck(Packet a, int syndrome, int psn) {
        assertThat(a.op()).isEqualTo(RC_ACKNOWLEDGE);
        assertThat(a.h().syndrome).as("syndrome").isEqualTo(syndrome);
        assertThat(a.h().psn).as("psn").isEqualTo(psn);
        assertThat(a.h().destQp).isEqualTo(RcTestBed.REQUESTER_QP);
    }

    @Test
    void anInOrderSendGoesIntoThePostedReceiveAndIsAckedWhenAsked() {
        host.postedReceives.add(4096);
        byte[] msg = RcTestBed.pattern(3, 1500);
        assertThat(bed.toResponder(request(RC_SEND_FIRST, 0, false, Arrays.copyOf(msg, 1024)))).isEmpty();
        List<Packet> out = bed.toResponder(request(RC_SEND_LAST, 1, true, Arrays.copyOfRange(msg, 1024, 1500)));
        assertThat(out).hasSize(1);
        assertAck(out.getFirst(), TransportHeader.AETH_ACK, 1);
        assertThat(out.getFirst().h().msn).isEqualTo(1);
        assertThat(host.received).hasSize(1);
        Received r = host.received.getFirst();
        assertThat(r.status()).isEqualTo(RcStatus.SUCCESS);
        assertThat(r.length()).isEqualTo(1500);
        assertThat(r.withImm() || r.withInv()).isFalse();
        assertThat(r.data()).isEqualTo(msg);
        assertThat(resp.expectedPsn()).isEqualTo(2);
    }

    @Test
    void aSendWithImmediateOrInvalidateCompletesWithIt() {
        host.postedReceives.add(100);
        host.postedReceives.add(100);
        host.invalidatable.add(0x7001);
        Packet imm = request(RC_SEND_ONLY_WITH_IMMEDIATE, 0, true, new byte[5]);
        imm.h().imm = 0x1234;
        Packet inv = request(RC_SEND_ONLY_WITH_INVALIDATE, 1, true, new byte[7]);
        inv.h().invRkey = 0x7001;
        bed.toResponder(imm);
        bed.toResponder(inv);
        assertThat(host.received).extracting(Received::withImm, Received::imm, Received::withInv, Received::invRkey)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(true, 0x1234, false, 0),
                        org.assertj.core.groups.Tuple.tuple(false, 0, true, 0x7001));
        assertThat(host.invalidated).containsExactly(0x7001);
    }

    @Test
    void aWriteGoesToMemoryByRkey() {
        byte[] msg = RcTestBed.pattern(4, 2000);
        bed.toResponder(write(RC_RDMA_WRITE_FIRST, 0, false, BASE_VA + 64, MR_RKEY, 2000, Arrays.copyOf(msg, 1024)));
        bed.toResponder(request(RC_RDMA_WRITE_LAST, 1, true, Arrays.copyOfRange(msg, 1024, 2000)));
        assertThat(Arrays.copyOfRange(host.memory, 64, 2064)).isEqualTo(msg);
        assertThat(host.received).isEmpty();
        assertThat(resp.msn()).isEqualTo(1);
    }

    @Test
    void aWriteWithImmediateConsumesAReceive() {
        host.postedReceives.add(0);
        bed.toResponder(write(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, true, BASE_VA, MR_RKEY, 8, new byte[8]));
        assertThat(host.received).extracting(Received::length, Received::imm).containsExactly(
                org.assertj.core.groups.Tuple.tuple(8L, 0));
    }

    @Test
    void aReadIsAnsweredWithResponsesFromMemory() {
        byte[] data = RcTestBed.pattern(5, 2500);
        System.arraycopy(data, 0, host.memory, 128, 2500);
        List<Packet> out = bed.toResponder(read(10, BASE_VA + 128, MR_RKEY, 2500));
        // the responder starts at PSN 0: this request is ahead, so first make it the expected one
        assertThat(out).hasSize(1);
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_PSN_SEQUENCE, 0);
        RcTestBed b = new RcTestBed(RcAttributes.defaults(), 10, 1 << 16);
        System.arraycopy(data, 0, b.receiveSide.memory, 128, 2500);
        out = b.toResponder(read(10, BASE_VA + 128, MR_RKEY, 2500));
        assertThat(out).extracting(Packet::op).containsExactly(RC_RDMA_READ_RESPONSE_FIRST,
                RC_RDMA_READ_RESPONSE_MIDDLE, RC_RDMA_READ_RESPONSE_LAST);
        assertThat(out).extracting(p -> p.h().psn).containsExactly(10, 11, 12);
        byte[] got = new byte[2500];
        int at = 0;
        for (Packet p : out) {
            System.arraycopy(p.data(), 0, got, at, p.data().length);
            at += p.data().length;
        }
        assertThat(got).isEqualTo(data);
        assertThat(out.getLast().h().msn).isEqualTo(1);
        assertThat(b.responder.expectedPsn()).isEqualTo(13);
    }

    @Test
    void atomicsAreExecutedAndAnsweredWithTheOriginalValue() {
        MemoryView.setLong(host.memory, 0, 10);
        List<Packet> out = bed.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA, 5, 0));
        assertThat(out).extracting(Packet::op).containsExactly(RC_ATOMIC_ACKNOWLEDGE);
        assertThat(out.getFirst().h().origData).isEqualTo(10);
        out = bed.toResponder(atomic(RC_CMP_SWAP, 1, BASE_VA, 99, 15));
        assertThat(out.getFirst().h().origData).isEqualTo(15);
        assertThat(host.longAt(BASE_VA)).isEqualTo(99);
        assertThat(host.atomicsExecuted).isEqualTo(2);
    }

    @Test
    void requestsAheadGetOneSequenceNakPerGap() {
        host.postedReceives.add(100);
        host.postedReceives.add(100);
        List<Packet> out = bed.toResponder(request(RC_SEND_ONLY, 2, true, new byte[1]));
        assertThat(out).hasSize(1);
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_PSN_SEQUENCE, 0);
        assertThat(bed.toResponder(request(RC_SEND_ONLY, 3, true, new byte[1]))).isEmpty();
        assertThat(bed.toResponder(request(RC_SEND_ONLY, 1, true, new byte[1]))).isEmpty();
        assertThat(host.received).isEmpty();
        assertThat(bed.count(RcCounter.RESP_OUT_OF_SEQUENCE)).isEqualTo(3);
        bed.toResponder(request(RC_SEND_ONLY, 0, true, new byte[1]));
        assertThat(host.received).hasSize(1);
        out = bed.toResponder(request(RC_SEND_ONLY, 2, true, new byte[1]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_PSN_SEQUENCE, 1); // a new gap, a new NAK
        assertThat(bed.count(RcCounter.RESP_SEQ_NAKS)).isEqualTo(2);
    }

    @Test
    void aDuplicateSendOrWriteIsAckedAgainWhenItAsksAndNeverExecuted() {
        host.postedReceives.add(100);
        host.postedReceives.add(100);
        bed.toResponder(request(RC_SEND_ONLY, 0, true, new byte[3]));
        bed.toResponder(write(RC_RDMA_WRITE_ONLY, 1, true, BASE_VA, MR_RKEY, 4, new byte[4]));
        long written = host.bytesWritten;
        List<Packet> out = bed.toResponder(request(RC_SEND_ONLY, 0, true, new byte[3]));
        assertAck(out.getFirst(), TransportHeader.AETH_ACK, 0); // its own PSN: no more than was sent again
        out = bed.toResponder(write(RC_RDMA_WRITE_ONLY, 1, true, BASE_VA, MR_RKEY, 4, new byte[4]));
        assertAck(out.getFirst(), TransportHeader.AETH_ACK, 1);
        // Without AckReq (the middle of a message sent again), a duplicate gets no ACK, as a new packet would not.
        assertThat(bed.toResponder(write(RC_RDMA_WRITE_ONLY, 1, false, BASE_VA, MR_RKEY, 4, new byte[4]))).isEmpty();
        assertThat(host.received).hasSize(1);
        assertThat(host.postedReceives).hasSize(1);
        assertThat(host.bytesWritten).isEqualTo(written);
        assertThat(bed.count(RcCounter.RESP_DUPLICATES)).isEqualTo(3);
    }

    @Test
    void aDuplicateReadIsAnsweredAgainFromMemoryFromItsPsn() {
        byte[] data = RcTestBed.pattern(6, 3000);
        System.arraycopy(data, 0, host.memory, 0, 3000);
        bed.toResponder(read(0, BASE_VA, MR_RKEY, 3000));
        host.memory[2048] = 42; // answered from memory as it is now, not from a copy
        List<Packet> again = bed.toResponder(read(2, BASE_VA + 2048, MR_RKEY, 952));
        assertThat(again).extracting(Packet::op).containsExactly(RC_RDMA_READ_RESPONSE_ONLY);
        assertThat(again.getFirst().h().psn).isEqualTo(2);
        assertThat(again.getFirst().data()).hasSize(952).startsWith((byte) 42);
        again = bed.toResponder(read(1, BASE_VA + 1024, MR_RKEY, 1976));
        assertThat(again).extracting(Packet::op).containsExactly(RC_RDMA_READ_RESPONSE_FIRST,
                RC_RDMA_READ_RESPONSE_LAST);
        assertThat(resp.expectedPsn()).isEqualTo(3);
    }

    @Test
    void aDuplicateAtomicIsAnsweredFromItsReplayRecordNeverExecutedTwice() {
        bed.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA, 1, 0));
        bed.toResponder(atomic(RC_FETCH_ADD, 1, BASE_VA, 1, 0));
        List<Packet> again = bed.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA, 1, 0));
        assertThat(again).extracting(Packet::op).containsExactly(RC_ATOMIC_ACKNOWLEDGE);
        assertThat(again.getFirst().h().origData).isEqualTo(0);
        assertThat(again.getFirst().h().psn).isEqualTo(0);
        assertThat(host.atomicsExecuted).isEqualTo(2);
        assertThat(host.longAt(BASE_VA)).isEqualTo(2);
        assertThat(bed.count(RcCounter.RESP_ATOMIC_REPLAYS)).isEqualTo(1);
    }

    @Test
    void maxDestRdAtomicBoundsTheReplayRecords() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withRdAtomic(2, 2));
        for (int psn = 0; psn < 3; psn++) {
            b.toResponder(atomic(RC_FETCH_ADD, psn, BASE_VA, 1, 0));
        }
        assertThat(b.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA, 1, 0))).isEmpty();
        assertThat(b.count(RcCounter.RESP_DROP_NO_RECORD)).isEqualTo(1);
        assertThat(b.toResponder(atomic(RC_FETCH_ADD, 1, BASE_VA, 1, 0))).hasSize(1);
        assertThat(b.receiveSide.atomicsExecuted).isEqualTo(3);
    }

    @Test
    void withMaxDestRdAtomicZeroAReadAndAnAtomicAreInvalidRequests() {
        RcTestBed reads = new RcTestBed(RcAttributes.defaults().withRdAtomic(1, 0));
        assertAck(reads.toResponder(read(0, BASE_VA, MR_RKEY, 4)).getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST,
                0);
        assertThat(reads.count(RcCounter.RESP_NAK_NO_RD_ATOMIC_RESOURCES)).isEqualTo(1);
        assertThat(reads.receiveSide.failure).isEqualTo(RcStatus.REM_INV_REQ_ERR);
        RcTestBed atomics = new RcTestBed(RcAttributes.defaults().withRdAtomic(1, 0));
        assertAck(atomics.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA, 1, 0)).getFirst(),
                TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(atomics.receiveSide.atomicsExecuted).isZero();
        // A SEND still goes through: only READs and atomics need responder resources.
        RcTestBed sends = new RcTestBed(RcAttributes.defaults().withRdAtomic(1, 0));
        sends.receiveSide.postedReceives.add(64);
        sends.toResponder(request(RC_SEND_ONLY, 0, true, new byte[8]));
        assertThat(sends.receiveSide.received).extracting(Received::status).containsExactly(RcStatus.SUCCESS);
    }

    @Test
    void noReceivePostedGetsAnRnrNakWithTheMinRnrTimerAndIsNotExecuted() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withMinRnrTimer(14));
        List<Packet> out = b.toResponder(request(RC_SEND_FIRST, 0, false, new byte[1024]));
        assertAck(out.getFirst(), TransportHeader.AETH_RNR_NAK | 14, 0);
        assertThat(b.toResponder(request(RC_SEND_LAST, 1, true, new byte[10]))).isEmpty(); // silent behind it
        assertThat(b.responder.expectedPsn()).isZero();
        assertThat(b.receiveSide.received).isEmpty();
        b.receiveSide.postedReceives.add(2048);
        assertThat(b.toResponder(request(RC_SEND_FIRST, 0, false, new byte[1024]))).isEmpty();
        b.toResponder(request(RC_SEND_LAST, 1, true, new byte[10]));
        assertThat(b.receiveSide.received).extracting(Received::length).containsExactly(1034L);
    }

    @Test
    void aWriteWithImmediateWithNoReceiveIsNotExecuted() {
        List<Packet> out = bed.toResponder(write(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0, true, BASE_VA, MR_RKEY, 4,
                new byte[]{1, 2, 3, 4}));
        assertAck(out.getFirst(), TransportHeader.AETH_RNR_NAK | 12, 0);
        assertThat(host.bytesWritten).isZero();
    }

    @Test
    void anUnknownRkeyIsARemoteAccessNakAndFailsTheQp() {
        List<Packet> out = bed.toResponder(write(RC_RDMA_WRITE_ONLY, 0, true, BASE_VA, 0x9999, 4, new byte[4]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_REMOTE_ACCESS, 0);
        assertThat(resp.failed()).isTrue();
        assertThat(host.failure).isEqualTo(RcStatus.REM_ACCESS_ERR);
        assertThat(bed.toResponder(write(RC_RDMA_WRITE_ONLY, 0, true, BASE_VA, MR_RKEY, 4, new byte[4]))).isEmpty();
        assertThat(bed.count(RcCounter.RESP_DROP_QP_ERROR)).isEqualTo(1);
        assertThat(host.bytesWritten).isZero();
    }

    @Test
    void rkeyZeroAccessAndRangeAreChecked() {
        assertAck(new RcTestBed(RcAttributes.defaults()).toResponder(read(0, BASE_VA, 0, 4)).getFirst(),
                TransportHeader.AETH_NAK_REMOTE_ACCESS, 0);
        assertAck(new RcTestBed(RcAttributes.defaults()).toResponder(
                        write(RC_RDMA_WRITE_ONLY, 0, true, BASE_VA, READ_ONLY_RKEY, 4, new byte[4])).getFirst(),
                TransportHeader.AETH_NAK_REMOTE_ACCESS, 0);
        assertAck(new RcTestBed(RcAttributes.defaults()).toResponder(read(0, BASE_VA + (1 << 16) - 2, MR_RKEY, 4))
                .getFirst(), TransportHeader.AETH_NAK_REMOTE_ACCESS, 0);
        assertAck(new RcTestBed(RcAttributes.defaults()).toResponder(read(0, -8, MR_RKEY, 16)).getFirst(),
                TransportHeader.AETH_NAK_REMOTE_ACCESS, 0); // wraps past 2^64
        RcTestBed b = new RcTestBed(RcAttributes.defaults());
        assertThat(b.toResponder(read(0, BASE_VA, READ_ONLY_RKEY, 4))).extracting(Packet::op)
                .containsExactly(RC_RDMA_READ_RESPONSE_ONLY);
        Packet swap = atomic(RC_CMP_SWAP, 1, BASE_VA, 1, 0);
        swap.h().rkey = READ_ONLY_RKEY;
        assertAck(b.toResponder(swap).getFirst(), TransportHeader.AETH_NAK_REMOTE_ACCESS, 1);
    }

    @Test
    void aMisalignedAtomicIsAnInvalidRequest() {
        List<Packet> out = bed.toResponder(atomic(RC_FETCH_ADD, 0, BASE_VA + 4, 1, 0));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(bed.count(RcCounter.RESP_NAK_MISALIGNED_ATOMIC)).isEqualTo(1);
        assertThat(host.atomicsExecuted).isZero();
    }

    @Test
    void aWriteWhosePayloadIsNotItsDmaLengthIsAnInvalidRequest() {
        List<Packet> out = bed.toResponder(write(RC_RDMA_WRITE_ONLY, 0, true, BASE_VA, MR_RKEY, 8, new byte[4]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(bed.count(RcCounter.RESP_NAK_BAD_LENGTH)).isEqualTo(1);
        assertThat(host.failure).isEqualTo(RcStatus.REM_INV_REQ_ERR);
    }

    @Test
    void aFirstPacketShorterThanTheMtuIsAnInvalidRequest() {
        host.postedReceives.add(4096);
        List<Packet> out = bed.toResponder(request(RC_SEND_FIRST, 0, false, new byte[1000]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
    }

    @Test
    void aSendLongerThanItsReceiveIsAnInvalidRequestAndALengthError() {
        host.postedReceives.add(10);
        List<Packet> out = bed.toResponder(request(RC_SEND_ONLY, 0, true, new byte[11]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(host.received).extracting(Received::status).containsExactly(RcStatus.LOC_LEN_ERR);
        assertThat(host.failure).isEqualTo(RcStatus.LOC_LEN_ERR);
        assertThat(bed.count(RcCounter.RESP_NAK_RECEIVE_TOO_SHORT)).isEqualTo(1);
    }

    @Test
    void anOpcodeOutOfItsMessagesOrderIsAnInvalidRequest() {
        host.postedReceives.add(4096);
        List<Packet> out = bed.toResponder(request(RC_SEND_MIDDLE, 0, false, new byte[1024]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(bed.count(RcCounter.RESP_NAK_OPCODE_SEQUENCE)).isEqualTo(1);

        RcTestBed b = new RcTestBed(RcAttributes.defaults());
        b.receiveSide.postedReceives.add(4096);
        b.toResponder(request(RC_SEND_FIRST, 0, false, new byte[1024]));
        out = b.toResponder(write(RC_RDMA_WRITE_ONLY, 1, true, BASE_VA, MR_RKEY, 4, new byte[4]));
        assertAck(out.getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 1);
    }

    @Test
    void anInvalidateOfAnRkeyThatCannotBeIsAnInvalidRequest() {
        host.postedReceives.add(100);
        Packet inv = request(RC_SEND_ONLY_WITH_INVALIDATE, 0, true, new byte[7]);
        inv.h().invRkey = 0x7001;
        assertAck(bed.toResponder(inv).getFirst(), TransportHeader.AETH_NAK_INVALID_REQUEST, 0);
        assertThat(bed.count(RcCounter.RESP_NAK_INVALIDATE)).isEqualTo(1);
    }

    @Test
    void withAckEveryItAcksEveryNPacketsWithoutAckReq() {
        RcTestBed b = new RcTestBed(RcAttributes.defaults().withAckEvery(2));
        b.receiveSide.postedReceives.add(8192);
        int acks = 0;
        for (int psn = 0; psn < 4; psn++) {
            IbOpcode op = psn == 0 ? RC_SEND_FIRST : psn == 3 ? RC_SEND_LAST : RC_SEND_MIDDLE;
            List<Packet> out = b.toResponder(request(op, psn, false, new byte[psn == 3 ? 5 : 1024]));
            acks += out.size();
            if (!out.isEmpty()) {
                assertAck(out.getFirst(), TransportHeader.AETH_ACK, psn);
            }
        }
        assertThat(acks).isEqualTo(2);
        assertThat(b.count(RcCounter.RESP_ACKS)).isEqualTo(2);
    }

    @Test
    void whatIsNotAnRcRequestIsDroppedAndCounted() {
        assertThat(bed.toResponder(RcTestBed.ack(TransportHeader.AETH_ACK, 0))).isEmpty();
        assertThat(bed.toResponder(request(UC_SEND_ONLY, 0, true, new byte[1]))).isEmpty();
        Packet unknown = request(RC_SEND_ONLY, 0, true, new byte[1]);
        unknown.h().opcode = 0x1f;
        assertThat(bed.toResponder(unknown)).isEmpty();
        assertThat(bed.count(RcCounter.RESP_DROP_NOT_REQUEST)).isEqualTo(3);
        assertThat(resp.expectedPsn()).isZero();
    }

    /** Big-endian-agnostic access to the test memory, as the test host reads it. */
    private static final class MemoryView {
        static void setLong(byte[] b, int at, long v) {
            java.lang.foreign.MemorySegment.ofArray(b)
                    .set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, at, v);
        }
    }
}
