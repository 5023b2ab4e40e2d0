package ernic.it.fuzz;

import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The roce target reaches what it is meant to: a short seed-fixed run moves the wire end's counters of each kind
 * of hostile packet (malformed, bad ICRC, CNP, CE-marked, unknown QP, wrong source, out of sequence, duplicates,
 * NAKs of each cause, another QP's window key) and of the requester's recovery (ACKs taken, retransmissions,
 * time-outs), and the probe passes.
 */
class RoceFuzzTest {
    @Test
    void aShortRunMovesTheWireEndsCountersAndTheProbePasses() throws Exception {
        try (RoceFuzz t = new RoceFuzz()) {
            t.start();
            t.quiesce();
            for (long i = 0; i < 6000; i++) {
                t.step(i, FuzzCommand.rng(20261207, FuzzCommand.Target.roce, i));
                if ((i + 1) % 2000 == 0) {
                    t.quiesce();
                }
            }
            Map<String, Long> c = t.counters();
            System.out.println(t.stats());
            for (String k : new String[] {"roce.rxFrames", "roce.rxMalformed", "roce.rxBadIcrc", "roce.rxCnp", "roce.rxCeMarked",
                    "refused.roce-rx-truncated-headers", "refused.roce-rx-udp-length", "refused.roce-rx-unknown-opcode",
                    "roce.rxUnknownQp", "roce.rxWrongSource", "roce.rxWrongTransport", "roce.rxNotReady",
                    "roce.rc.respPackets", "roce.rc.respDuplicates", "roce.rc.respOutOfSequence", "roce.rc.respSeqNaks",
                    "roce.rc.respRnrNaks", "roce.rc.respNakAccess", "roce.rc.respNakBadLength",
                    "roce.rc.respNakOpcodeSequence", "roce.rc.respNakMisalignedAtomic", "roce.rc.reqAcks",
                    "roce.rc.reqReadResponses", "roce.rc.reqAtomicAcks", "roce.rc.reqRetransmitted",
                    "roce.rc.reqTimeouts", "roce.rc.reqSeqNaks", "roce.rc.reqRnrNaks", "roce.rc.reqFatalNaks",
                    "roce.rc.reqDropPsnOutOfWindow", "roce.rc.respAtomicReplays", "rdma.ud.dropped",
                    "rdma.ud.qkey_mismatch", "refused.rdma-mw-access-qp", "roce.rc.ucMessagesDropped",
                    "roce.rc.ucDropOutOfSequence", "roce.rc.ucDropAccess"}) {
                assertThat(c.getOrDefault(k, 0L)).as(k).isPositive();
            }
        }
    }

    /** The oracle of hostile keys: memory no key gives the wire is checked at rest, and never seen on the wire. */
    @Test
    void aByteWrittenWhereNoKeyGivesTheWireIsAFinding() throws Exception {
        try (RoceFuzz t = new RoceFuzz()) {
            t.start();
            t.quiesce();
            t.guest.at(RoceFuzz.VA_OTHER_PD + 100, 1).set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            assertThatThrownBy(t::quiesce).isInstanceOf(FuzzFailure.class)
                    .hasMessage("a packet from the wire wrote to the MR of another protection domain (byte 100)");
        }
    }
}
