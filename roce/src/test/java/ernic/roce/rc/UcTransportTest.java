package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.rc.RcTestBed.Packet;
import ernic.roce.rc.RcTestBed.Received;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static ernic.roce.IbOpcode.*;
import static ernic.roce.rc.RcTestBed.BASE_VA;
import static ernic.roce.rc.RcTestBed.MR_RKEY;
import static ernic.roce.rc.RcTestBed.READ_ONLY_RKEY;
import static ernic.roce.rc.RcTestBed.pattern;
import static ernic.roce.rc.RcTestBed.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The UC engines (IBTA vol. 1, 9.8; rdma_rxe's UC paths): packets and PSNs as RC cuts them, with UC opcodes and no
 * acknowledgement; the responder takes a message whole or drops it, and never answers. The hosts are
 * {@link RcTestBed}'s stand-ins for the device.
 */
class UcTransportTest {
    static final int MTU = 1024;

    RcTestBed bed;
    Counters<RcCounter> counters;
    List<Packet> sent;
    UcRequester requester;
    UcResponder responder;

    UcTransportTest() {
        fresh();
    }

    /** A new pair of engines, PSNs from 100, on the bed's stand-ins (each property try starts from here). */
    private void fresh() {
        bed = new RcTestBed(RcAttributes.defaults().withPathMtu(MTU), 0, 1 << 16);
        counters = new Counters<>(RcCounter.class);
        sent = new ArrayList<>();
        requester = new UcRequester(bed.attr, RcTestBed.RESPONDER_QP, 100,
                (h, p) -> sent.add(new Packet(RcTestBed.copy(h), bytes(p))), bed.sendSide, counters);
        responder = new UcResponder(bed.attr, 100, bed.receiveSide, counters);
    }

    private byte[] bytes(RcPayload p) {
        byte[] b = new byte[p.length];
        if (p.kind == RcPayload.Kind.MESSAGE) {
            bed.sendSide.gather(p.wrId, p.offset, MemorySegment.ofArray(b), 0, p.length);
        }
        return b;
    }

    void post(long wrId, RcOp op, byte[] data, long va, int rkey, int imm) {
        bed.sendSide.messages.put(wrId, data);
        assertThat(requester.post(wrId, op, 0, data.length, va, rkey, imm, 0, 0)).isTrue();
    }

    void deliver(Packet p) {
        responder.receive(p.h(), MemorySegment.ofArray(p.data()), 0, p.data().length, 0);
    }

    List<Integer> opcodes() {
        return sent.stream().map(p -> p.h().opcode).toList();
    }

    @Test
    void aSolicitedMessageSetsSeOnItsLastPacketAndTheReceiverSeesIt() {
        byte[] send = pattern(1, 2500);
        assertThat(requester.post(1, RcOp.SEND, ConnectedRequester.SOLICITED, send.length, 0, 0, 0, 0, 0)).isTrue();
        bed.sendSide.messages.put(1L, send);
        post(2, RcOp.SEND, pattern(2, 10), 0, 0, 0);
        requester.poll(0, 100);
        assertThat(sent).extracting(p -> p.h().solicited).containsExactly(false, false, true, false);
        bed.receiveSide.postedReceives.add(4096);
        bed.receiveSide.postedReceives.add(4096);
        sent.forEach(this::deliver);
        assertThat(bed.receiveSide.received).extracting(Received::solicited).containsExactly(true, false);
    }

    @Test
    void messagesAreCutIntoUcPacketsAndEachCompletesAsItsLastPacketGoes() {
        byte[] send = pattern(1, 2500), write = pattern(2, 1024);
        post(1, RcOp.SEND, send, 0, 0, 0);
        post(2, RcOp.RDMA_WRITE_WITH_IMM, write, BASE_VA + 64, MR_RKEY, 0x77);
        post(3, RcOp.SEND_WITH_IMM, new byte[0], 0, 0, 0x99);
        assertThat(requester.poll(0, 2)).isEqualTo(2);
        assertThat(bed.sendSide.completions).as("the SEND's LAST has not gone").isEmpty();
        assertThat(requester.poll(0, 100)).isEqualTo(3);
        assertThat(bed.sendSide.completions).extracting(RcTestBed.Completion::wrId).containsExactly(1L, 2L, 3L);
        assertThat(bed.sendSide.completions).allMatch(c -> c.status() == RcStatus.SUCCESS);
        assertThat(opcodes()).containsExactly(UC_SEND_FIRST.code, UC_SEND_MIDDLE.code, UC_SEND_LAST.code,
                UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.code, UC_SEND_ONLY_WITH_IMMEDIATE.code);
        assertThat(sent).extracting(p -> p.h().psn).containsExactly(100, 101, 102, 103, 104);
        assertThat(sent).noneMatch(p -> p.h().ackReq);
        assertThat(requester.nextPsn()).isEqualTo(105);

        bed.receiveSide.postedReceives.add(4096);
        bed.receiveSide.postedReceives.add(64);
        bed.receiveSide.postedReceives.add(64);
        sent.forEach(this::deliver);
        List<Received> got = bed.receiveSide.received;
        assertThat(got).hasSize(3);
        assertThat(got.get(0).data()).isEqualTo(send);
        assertThat(got.get(1).withImm()).isTrue();
        assertThat(got.get(1).imm()).isEqualTo(0x77);
        assertThat(got.get(1).length()).isEqualTo(1024);
        assertThat(Arrays.copyOfRange(bed.receiveSide.memory, 64, 64 + 1024)).isEqualTo(write);
        assertThat(got.get(2).length()).isZero();
        assertThat(got.get(2).imm()).isEqualTo(0x99);
        assertThat(bed.toRequester).as("UC answers nothing").isEmpty();
        assertThat(counters.get(RcCounter.RESP_PACKETS)).isEqualTo(5);
    }

    /**
     * Two SENDs, of 3000 bytes (three packets) and {@code second} bytes, one receive posted, every packet delivered
     * but packet {@code lost}: the first message is dropped, the second taken.
     */
    private void twoSendsLosing(int lost, int second) {
        post(1, RcOp.SEND, pattern(1, 3000), 0, 0, 0);
        post(2, RcOp.SEND, pattern(2, second), 0, 0, 0);
        requester.poll(0, 100);
        bed.receiveSide.postedReceives.add(4096);
        for (int i = 0; i < sent.size(); i++) {
            if (i != lost) {
                deliver(sent.get(i));
            }
        }
        assertThat(bed.receiveSide.received).extracting(Received::data).containsExactly(pattern(2, second));
        assertThat(counters.get(RcCounter.UC_MESSAGES_DROPPED)).isEqualTo(1);
    }

    @Test
    void aLostPacketDropsItsMessageAndTheNextIsTakenIntoTheSameReceive() {
        twoSendsLosing(1, 100); // the first message's MIDDLE
        assertThat(counters.get(RcCounter.UC_DROP_OUT_OF_SEQUENCE)).isEqualTo(1);
        assertThat(bed.receiveSide.postedReceives).as("one receive for the one message taken").isEmpty();
    }

    @Test
    void aFirstInTheMiddleOfAMessageStartsANewOne() {
        twoSendsLosing(2, 2048); // the first message's LAST: the second's FIRST comes in its place
        assertThat(counters.get(RcCounter.UC_DROP_OUT_OF_SEQUENCE)).isZero();
        assertThat(responder.expectedPsn()).isEqualTo(105);
    }

    @Test
    void aMessageThatCannotBeTakenIsDroppedInSilenceAndTheQpGoesOn() {
        // no receive posted
        deliver(request(UC_SEND_ONLY, 100, false, new byte[10]));
        assertThat(counters.get(RcCounter.UC_DROP_NO_RECEIVE)).isEqualTo(1);
        // a SEND longer than its receive: dropped, the receive kept for the next message
        bed.receiveSide.postedReceives.add(16);
        deliver(request(UC_SEND_ONLY, 101, false, new byte[17]));
        assertThat(counters.get(RcCounter.UC_DROP_RECEIVE_TOO_SHORT)).isEqualTo(1);
        assertThat(responder.receiveHeld()).isTrue();
        deliver(request(UC_SEND_ONLY, 102, false, pattern(5, 16)));
        assertThat(bed.receiveSide.received).extracting(Received::data).containsExactly(pattern(5, 16));
        // a MIDDLE outside a message; a FIRST shorter than the path MTU; another transport's opcode
        deliver(request(UC_SEND_MIDDLE, 103, false, new byte[MTU]));
        assertThat(counters.get(RcCounter.UC_DROP_OPCODE_SEQUENCE)).isEqualTo(1);
        deliver(request(UC_SEND_FIRST, 104, false, new byte[MTU - 1]));
        assertThat(counters.get(RcCounter.UC_DROP_BAD_LENGTH)).isEqualTo(1);
        deliver(request(RC_SEND_ONLY, 105, false, new byte[4]));
        assertThat(counters.get(RcCounter.RESP_DROP_NOT_REQUEST)).isEqualTo(1);
        // WRITEs: rkey 0, a read-only rkey, past the region, a LAST beyond the RETH's length
        for (int rkey : new int[]{0, READ_ONLY_RKEY}) {
            deliver(write(UC_RDMA_WRITE_ONLY, 106, rkey, BASE_VA, 8, 8));
        }
        deliver(write(UC_RDMA_WRITE_ONLY, 107, MR_RKEY, BASE_VA + (1 << 16) - 4, 8, 8));
        assertThat(counters.get(RcCounter.UC_DROP_ACCESS)).isEqualTo(3);
        deliver(write(UC_RDMA_WRITE_FIRST, 108, MR_RKEY, BASE_VA, MTU + 4, MTU));
        deliver(request(UC_RDMA_WRITE_LAST, 109, false, new byte[8]));
        assertThat(counters.get(RcCounter.UC_DROP_BAD_LENGTH)).isEqualTo(2);
        assertThat(bed.receiveSide.bytesWritten).as("only the FIRST's bytes").isEqualTo(MTU);
        // a WRITE with immediate and no receive: its bytes land, its message is dropped before the completion
        deliver(write(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 110, MR_RKEY, BASE_VA, 8, 8));
        assertThat(counters.get(RcCounter.UC_DROP_NO_RECEIVE)).isEqualTo(2);
        // and after all that, a SEND is taken
        bed.receiveSide.postedReceives.add(64);
        deliver(request(UC_SEND_ONLY, 111, false, pattern(6, 40)));
        assertThat(bed.receiveSide.received).hasSize(2);
        assertThat(bed.toRequester).isEmpty();
    }

    private static Packet write(IbOpcode op, int psn, int rkey, long va, int dmaLength, int payload) {
        Packet p = request(op, psn, false, new byte[payload]);
        p.h().rkey = rkey;
        p.h().va = va;
        p.h().dmaLength = dmaLength;
        return p;
    }

    @Test
    void theRequesterRefusesWhatUcCannotCarryAndExpectsNothingBack() {
        for (RcOp op : new RcOp[]{RcOp.RDMA_READ, RcOp.ATOMIC_FETCH_AND_ADD, RcOp.ATOMIC_CMP_AND_SWP,
                RcOp.SEND_WITH_INV}) {
            assertThatThrownBy(() -> requester.post(9, op, 0, 8, 0, 0, 0, 0, 0))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        requester.receive(RcTestBed.ack(0, 100).h(), MemorySegment.NULL, 0, 0, 0);
        assertThat(counters.get(RcCounter.UC_REQ_DROP_UNEXPECTED)).isEqualTo(1);
        assertThat(requester.nextDeadline()).isEqualTo(Long.MAX_VALUE);
        assertThat(requester.failed()).isFalse();
    }

    /**
     * With loss alone, a message is received exactly when none of its packets was lost, in order, intact, and
     * takes one receive; with duplication and reordering too, nothing received is ever a mix or a part of messages:
     * each is byte for byte one that was sent.
     */
    @Property(tries = 300)
    void aMessageIsTakenWholeOrNotAtAll(@ForAll @Size(min = 1, max = 20) List<@IntRange(max = 5000) Integer> lengths,
                                       @ForAll @IntRange(max = 30) int lossPercent,
                                       @ForAll @IntRange(max = 20) int duplicatePercent,
                                       @ForAll @IntRange(max = 20) int reorderPercent, @ForAll long seed) {
        fresh();
        Random random = new Random(seed);
        for (int i = 0; i < lengths.size(); i++) {
            post(i, RcOp.SEND, pattern(i, lengths.get(i)), 0, 0, 0);
            bed.receiveSide.postedReceives.add(8192);
        }
        requester.poll(0, Integer.MAX_VALUE);
        assertThat(bed.sendSide.completions).hasSize(lengths.size());
        List<Packet> wire = new ArrayList<>();
        boolean[] lost = new boolean[lengths.size()];
        int message = 0;
        for (Packet p : sent) {
            if (random.nextInt(100) < lossPercent) {
                lost[message] = true;
            } else {
                wire.add(p);
                if (random.nextInt(100) < duplicatePercent) {
                    wire.add(p);
                }
            }
            if (p.op().last()) {
                message++;
            }
        }
        boolean clean = duplicatePercent == 0 && reorderPercent == 0;
        for (int i = 1; i < wire.size(); i++) {
            if (random.nextInt(100) < reorderPercent) {
                wire.set(i - 1, wire.set(i, wire.get(i - 1)));
            }
        }
        wire.forEach(this::deliver);

        List<byte[]> got = bed.receiveSide.received.stream().map(Received::data).toList();
        for (byte[] data : got) {
            assertThat(sentId(data, lengths)).as("a message received is one sent, whole").isGreaterThanOrEqualTo(0);
        }
        if (clean) {
            List<byte[]> expected = new ArrayList<>();
            for (int i = 0; i < lengths.size(); i++) {
                if (!lost[i]) {
                    expected.add(pattern(i, lengths.get(i)));
                }
            }
            assertThat(got).containsExactlyElementsOf(expected);
            int held = responder.receiveHeld() ? 1 : 0;
            assertThat(bed.receiveSide.postedReceives.size() + got.size() + held).isEqualTo(lengths.size());
        }
    }

    private static int sentId(byte[] data, List<Integer> lengths) {
        for (int i = 0; i < lengths.size(); i++) {
            if (lengths.get(i) == data.length && Arrays.equals(pattern(i, data.length), data)) {
                return i;
            }
        }
        return -1;
    }
}
