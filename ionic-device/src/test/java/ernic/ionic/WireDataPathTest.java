package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RdmaRaw;
import ernic.roce.RoceFrame;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.function.Consumer;

import static ernic.ionic.ModelGuest.HDR_LEN;
import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two devices with {@code --roce} whose Ethernet ports are joined by a cable the test holds (frames delivered on
 * the test's thread, in order; time from a mock clock): RC QPs between their guests are placed on the wire, and
 * every operation crosses as RoCEv2 packets both devices build and check (ICRC, PSNs, ACKs, READ responses,
 * atomic ACKs, NAKs). Also what the port's claimer refuses, and what it leaves to the guest. Each guest is the
 * driver model on a {@link ModelGuest}, with raw WQEs and CQEs, as in {@link RemoteDataPathTest}.
 */
class WireDataPathTest {
    static final int CQ = 8, LOG2 = 4, DEPTH = 1 << LOG2, MR = 1 << 8 | 0x11;
    static final int IP_A = 0x0a00_0001, IP_B = 0x0a00_0002;
    static final long VA = 0x7f00_0000_0000L;
    /** The station MACs: this, with the low byte of the side's address. */
    static final long MAC = 0x02_00_00_00_00_00L;

    final MockTicker clock = Ticker.newMockTicker();
    Side a, b;
    /** Frames on the cable, in order: each with the side it goes to. */
    final ArrayDeque<Object[]> cable = new ArrayDeque<>();
    /** Frames taken off the cable by the test instead of delivered. */
    final ArrayDeque<byte[]> tapped = new ArrayDeque<>();
    boolean tapping;

    final class Side extends RawSide {
        final int ip;
        Side peer;

        Side(int ip, boolean roce) throws IOException {
            this(ip, roce, FaultPlan.none());
        }

        Side(int ip, boolean roce, FaultPlan faults) throws IOException {
            super(new IonicDevice(ProfileLoader.compat(), faults, MAC | ip & 0xff, "ERNICWIRE" + ip), VA);
            this.ip = ip;
            dev.rdma().clock(clock);
            if (roce) {
                dev.roce();
            }
            dev.lif().sink(frame -> cable.add(new Object[]{peer, frame.toArray(ValueLayout.JAVA_BYTE)}));
            open();
        }

        /** The rsq_depth the next QPs' RTR gives (max_dest_rd_atomic 16 unless a test says otherwise). */
        int rsqDepth = RdmaRaw.RSQ_DEPTH_16;

        /** An RC QP through INIT, RTR (toward {@code destQpn} at {@code destIp}) and RTS, remote access granted. */
        void rc(int id, int destQpn, int destIp) throws IOException {
            connected(RC, id, destQpn, destIp);
        }

        /** A QP of {@code type} (RC or UC) through INIT, RTR and RTS, as {@link #rc}. */
        void connected(int type, int id, int destQpn, int destIp) throws IOException {
            rings(id, LOG2);
            assertThat(rdma.createQp(id, type, 0, CQ, sq[id], LOG2, rq[id], LOG2).status()).isZero();
            assertThat(rdma.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, INIT, 0, 0,
                    QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC).status()).isZero();
            assertThat(rdma.modifyQpAv(id, RTR, 0, destQpn, header(destIp), HDR_LEN, rsqDepth).status()).isZero();
            // RTS as rdma-core's tools set it: local ACK timeout 14 (67 ms), 7 retries, RNR retries for ever.
            assertThat(rdma.admin(OP_MODIFY_QP, LEN_MODIFY_QP, c -> {
                be32(c, MQP_ATTR_MASK_BE, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY);
                u8(c, MQP_RETRY, 7 | 7 << 4);
                u8(c, MQP_RETRY_TIMEOUT, 14);
                u8(c, MQP_TYPE_STATE, RTS);
                le32(c, MQP_ID_VER, id);
            }).status()).isZero();
        }

        /** The driver's header template toward {@code destIp}, the MACs filled in as its neighbour table would. */
        long header(int destIp) {
            long at = guest.ipv4Header(ip, destIp);
            MemorySegment h = guest.at(at, HDR_LEN);
            for (int i = 0; i < 6; i++) {
                u8(h, i, (int) ((MAC | destIp & 0xff) >>> 8 * (5 - i)));
                u8(h, 6 + i, (int) ((MAC | ip & 0xff) >>> 8 * (5 - i)));
            }
            return at;
        }

        long counter(String key) {
            return dev.counters().getOrDefault(key, 0L);
        }

        /** The next completion once the cable is quiet. */
        RawCqe next() {
            deliver();
            RawCqe c = cq.pollWork();
            assertThat(c).as("a completion").isNotNull();
            return c;
        }
    }

    /** Delivers every frame on the cable, and those its deliveries cause (or keeps them, while tapping). */
    void deliver() {
        while (!cable.isEmpty()) {
            Object[] f = cable.poll();
            if (tapping) {
                tapped.add((byte[]) f[1]);
                continue;
            }
            ((Side) f[0]).dev.receive(MemorySegment.ofArray((byte[]) f[1]));
        }
    }

    void run(Step s) {
        try {
            s.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        deliver();
    }

    interface Step {
        void run() throws IOException;
    }

    @BeforeEach
    void setUp() throws IOException {
        a = new Side(IP_A, true);
        b = new Side(IP_B, true);
        a.peer = b;
        b.peer = a;
    }

    /** The two devices again, side A's with {@code faults}. */
    void withFaultsOnA(FaultPlan faults) throws IOException {
        tearDown();
        a = new Side(IP_A, true, faults);
        b = new Side(IP_B, true);
        a.peer = b;
        b.peer = a;
    }

    @AfterEach
    void tearDown() {
        a.dev.detach();
        b.dev.detach();
        a.guest.close();
        b.guest.close();
    }

    @Test
    void sendWriteReadAndAtomicsCrossTheWireAsRoceV2() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
        });
        assertThat(a.counter("roce.qpsPlaced")).isEqualTo(1);
        // A SEND with immediate data into a posted receive, 3000 bytes: three packets at path MTU 1024.
        run(() -> RcScenario.postSendWithImmediate(a, 2, b, 3, 3000, VA));
        RcScenario.assertReceived(b.next(), b, 3000, VA);
        RawCqe sent = a.next();
        assertThat(sent.error()).isFalse();
        assertThat(sent.msn()).isEqualTo(1);

        // WRITE 4 KiB across a page boundary of B's MR, then READ it back into A (four response packets).
        run(() -> RcScenario.postWriteThenRead(a, 2, VA));
        assertThat(a.next().error()).isFalse();
        RawCqe read = a.next();
        assertThat(read.error()).isFalse();
        assertThat(read.msn()).isEqualTo(3);
        RcScenario.assertWrittenAndReadBack(a, b, VA);

        // Fetch-and-add, then compare-and-swap, on B's memory; the old values land in A's.
        run(() -> RcScenario.postAtomics(a, b, 2, VA));
        assertThat(a.next().error()).isFalse();
        assertThat(a.next().error()).isFalse();
        RcScenario.assertAtomicsRan(a, b, VA);

        // A's requests: the SEND and the WRITE in 1 KiB packets, the READ, two atomics
        assertThat(a.counter("roce.txFrames")).isEqualTo(3 + 4 + 1 + 1 + 1);
        assertThat(a.counter("roce.rxFrames")).isEqualTo(a.counter("roce.rc.reqAcks")
                + a.counter("roce.rc.reqReadResponses") + a.counter("roce.rc.reqAtomicAcks"));
        assertThat(b.counter("roce.rxMalformed") + a.counter("roce.rxMalformed")).isZero();
    }

    @Test
    void ucSendsAndWritesCrossUnacknowledgedAndALostPacketLosesOnlyItsMessage() {
        run(() -> {
            a.connected(UC, 2, 3, IP_B);
            b.connected(UC, 3, 2, IP_A);
        });
        assertThat(a.counter("roce.qpsPlaced")).isEqualTo(1);
        // A SEND with immediate data, three packets; a WRITE of 2 KiB past the end of B's region (dropped by B in
        // silence); the same WRITE inside it. All complete at A as they go out.
        run(() -> {
            for (int i = 0; i < 3000; i++) {
                u8(a.mem(VA + i, 1), 0, i ^ 0x3c);
            }
            b.postRecv(3, VA + 8192, 4096);
            a.postSend(2, w -> w.op(SEND_IMM).immDataKey(0x5eed).numSgeKey(1).length(3000)
                    .sge(WQE_PLD, 0, VA, 3000, MR));
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 15360, MR).length(2048)
                    .sge(WQE_PLD, 0, VA, 2048, MR));
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 12288, MR).length(2048)
                    .sge(WQE_PLD, 0, VA, 2048, MR));
        });
        RawCqe recv = b.next();
        assertThat(recv.error()).isFalse();
        assertThat(recv.statusLength()).isEqualTo(3000);
        assertThat(recv.immDataRkey()).isEqualTo(0x5eed);
        for (int k = 0; k < 3; k++) {
            assertThat(a.next().error()).isFalse();
        }
        for (int i = 0; i < 3000; i += 11) {
            assertThat(u8(b.mem(VA + 8192 + i, 1), 0)).isEqualTo((i ^ 0x3c) & 0xff);
        }
        for (int i = 0; i < 2048; i += 7) {
            assertThat(u8(b.mem(VA + 12288 + i, 1), 0)).isEqualTo((i ^ 0x3c) & 0xff);
        }
        assertThat(u8(b.mem(VA + 15360 + 1024 - 1, 1), 0)).as("nothing of the refused WRITE").isZero();
        assertThat(b.counter("roce.rc.ucDropAccess")).isEqualTo(1);
        assertThat(b.counter("roce.rc.ucDropOutOfSequence")).as("its second packet").isEqualTo(1);
        assertThat(a.counter("roce.txFrames")).isEqualTo(3 + 2 + 2);
        assertThat(b.counter("roce.txFrames")).as("nothing is acknowledged").isZero();

        // The middle packet of the next SEND is lost: that message is dropped, the receive it began to fill
        // takes the SEND after it, and the sender saw success for both (UC tells the sender nothing).
        tapping = true;
        run(() -> {
            b.postRecv(3, VA + 8192, 4096);
            a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(3000).sge(WQE_PLD, 0, VA, 3000, MR));
        });
        tapping = false;
        assertThat(tapped).hasSize(3);
        b.dev.receive(MemorySegment.ofArray(tapped.poll()));
        tapped.poll();
        b.dev.receive(MemorySegment.ofArray(tapped.poll()));
        assertThat(b.cq.pollWork()).isNull();
        run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(100).sge(WQE_PLD, 0, VA + 512, 100, MR)));
        assertThat(b.next().statusLength()).isEqualTo(100);
        assertThat(u8(b.mem(VA + 8192, 1), 0)).isEqualTo((512 ^ 0x3c) & 0xff);
        assertThat(a.next().error()).isFalse();
        assertThat(a.next().error()).isFalse();
        assertThat(b.counter("roce.rc.ucDropOutOfSequence")).isEqualTo(2);
        assertThat(b.counter("roce.rc.ucMessagesDropped")).isEqualTo(2);

        // UC carries no READ: refused at A, no packet sent.
        long sent = a.counter("roce.txFrames");
        run(() -> a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(VA, MR).length(64)
                .sge(WQE_PLD, 0, VA, 64, MR)));
        assertThat(a.next().statusLength()).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        assertThat(a.counter("roce.txFrames")).isEqualTo(sent);
    }

    @Test
    void udDatagramsCrossTheWireWithTheirGrh() {
        run(() -> {
            a.ud(4);
            b.ud(5);
            assertThat(a.rdma.createAh(1, a.header(IP_B), HDR_LEN).status()).isZero();
            b.postRecv(5, VA + 8192, 256);
            for (int i = 0; i < 32; i++) {
                u8(a.mem(VA + i, 1), 0, 0xa0 + i);
            }
            a.postSend(4, w -> w.op(SEND_IMM).immDataKey(0x1234_5678).numSgeKey(1).length(32).ud(1, 5, 0x1234)
                    .sge(WQE_PLD, 0, VA, 32, MR));
        });
        assertThat(a.next().error()).as("a datagram completes once it is on its way").isFalse();
        assertThat(a.counter("roce.txFrames")).isEqualTo(1);
        RawCqe recv = b.next();
        assertThat(recv.error()).isFalse();
        assertThat(recv.statusLength()).isEqualTo(40 + 32);
        assertThat(recv.immDataRkey()).isEqualTo(0x1234_5678);
        assertThat(u8(b.mem(VA + 8192 + 40, 1), 0)).isEqualTo(0xa0);
        assertThat(be32(b.mem(VA + 8192 + 32, 4), 0)).as("the IPv4 source in the GRH area").isEqualTo(IP_A);
        // A wrong Q_Key is dropped at B and counted; a datagram for an RC QP or none is refused.
        run(() -> a.postSend(4, w -> w.op(SEND).numSgeKey(1).length(8).ud(1, 5, 0x9999)
                .sge(WQE_PLD, 0, VA, 8, MR)));
        assertThat(a.next().error()).isFalse();
        assertThat(b.counter("rdma.ud.dropped")).isEqualTo(1);
        run(() -> a.postSend(4, w -> w.op(SEND).numSgeKey(1).length(8).ud(1, 9, 0x1234)
                .sge(WQE_PLD, 0, VA, 8, MR)));
        assertThat(a.next().error()).isFalse();
        assertThat(b.counter("roce.rxUnknownQp")).isEqualTo(1);
    }

    /**
     * Each wire fault, on side A's packets both ways: every message still arrives once and in order, and the
     * fetch-and-adds run once each (a doubled or late request is answered from the responder's records).
     */
    @ParameterizedTest
    @ValueSource(strings = {"roce-drop:every=7", "roce-duplicate:every=3", "roce-reorder:every=4",
            "roce-corrupt:every=6", "roce-drop:frac=0.1,seed=3 roce-duplicate:frac=0.1,seed=4"
            + " roce-reorder:frac=0.1,seed=5 roce-corrupt:frac=0.05,seed=6"})
    void withWireFaultsEachWayEveryMessageArrivesOnce(String inject) throws IOException {
        withFaultsOnA(FaultPlan.parse(inject.split(" ")));
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            for (int i = 0; i < 4096; i++) {
                u8(a.mem(VA + i, 1), 0, i * 13);
            }
        });
        for (int round = 0; round < 3; round++) {
            int r = round;
            run(() -> {
                b.postRecv(3, VA + 8192, 4096);
                a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(3000).sge(WQE_PLD, 0, VA, 3000, MR));
                a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 12288 + r, MR).length(2048)
                        .sge(WQE_PLD, 0, VA, 2048, MR));
                a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(VA + 12288 + r, MR).length(2048)
                        .sge(WQE_PLD, 0, VA + 4096 + r, 2048, MR));
                a.postSend(2, w -> RemoteDataPathTest.atomic(w, ATOMIC_FA, VA + 64, 0, 1, VA + 128));
            });
            for (int k = 0; k < 4; k++) {
                assertThat(settle(a).error()).as("round " + r + ", completion " + k).isFalse();
            }
            assertThat(settle(b).statusLength()).isEqualTo(3000);
            for (int i = 0; i < 2048; i += 61) {
                assertThat(u8(a.mem(VA + 4096 + r + i, 1), 0)).isEqualTo((i * 13) & 0xff);
            }
        }
        assertThat(le64(b.mem(VA + 64, 8), 0)).as("each fetch-and-add executed once").isEqualTo(3);
        for (String spec : inject.split(" ")) {
            String kind = spec.substring(0, spec.indexOf(':'));
            assertThat(a.counter("fault." + kind + ".injected")).as(kind).isPositive();
        }
        assertThat(a.counter("roce.rc.reqRetransmitted") + b.counter("roce.rc.respDuplicates")
                + a.counter("roce.rc.respDuplicates") + a.counter("roce.rc.reqDropDuplicate")).isPositive();
        if (inject.contains("corrupt")) {
            assertThat(a.counter("roce.rxBadIcrc") + b.counter("roce.rxBadIcrc")).as("damaged packets").isPositive();
        }
        assertThat(a.counter("roce.rxMalformed") + b.counter("roce.rxMalformed")).isZero();
        // What the guest's hw_counters show: the wire end's counts.
        java.util.Map<String, Long> hw = a.dev.rdma().hwCounters(), peer = b.dev.rdma().hwCounters();
        assertThat(hw.get("roce_tx_pkts")).isEqualTo(a.counter("roce.txFrames")).isPositive();
        assertThat(hw.get("roce_rx_bytes")).isEqualTo(a.counter("roce.rxBytes")).isPositive();
        assertThat(hw.get("ack_rcvd")).isEqualTo(a.counter("roce.rc.reqAcks")).isPositive();
        assertThat(hw.get("retransmits") + peer.get("duplicate_req") + hw.get("duplicate_req")).isPositive();
    }

    /** {@code peer=}: only packets to or from that address count; another peer's traffic is untouched. */
    @Test
    void aWireFaultForAnotherPeerLeavesThisOneAlone() throws IOException {
        withFaultsOnA(FaultPlan.parse("roce-drop:peer=10.9.9.9"));
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            b.postRecv(3, VA + 8192, 4096);
            a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(3000).sge(WQE_PLD, 0, VA, 3000, MR));
        });
        assertThat(b.next().statusLength()).isEqualTo(3000);
        assertThat(a.next().error()).isFalse();
        assertThat(a.counter("fault.roce-drop.occurrences")).isPositive();
        assertThat(a.counter("fault.roce-drop.injected")).isZero();
        assertThat(a.counter("roce.rc.reqRetransmitted")).isZero();
    }

    /** The next completion of {@code s}: the cable delivered, then time passes (100 ms a step) until one comes. */
    RawCqe settle(Side s) {
        for (int step = 0; step < 100; step++) {
            deliver();
            RawCqe c = s.cq.pollWork();
            if (c != null) {
                return c;
            }
            clock.advance(100, java.util.concurrent.TimeUnit.MILLISECONDS);
            a.dev.rdma().tick(clock.nanoTime());
            b.dev.rdma().tick(clock.nanoTime());
        }
        throw new AssertionError("no completion after 10 s of the devices' time");
    }

    @Test
    void traceRdmaWritesThePacketsThatLeaveAndArrive() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("ernic-wire", ".pcap");
        ernic.ionic.trace.PcapTrace trace = ernic.ionic.trace.PcapTrace.open(file);
        try {
            a.dev.rdma().traceRdma(trace);
            run(() -> {
                a.rc(2, 3, IP_B);
                b.rc(3, 2, IP_A);
                b.postRecv(3, VA + 8192, 4096);
                a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(3000).sge(WQE_PLD, 0, VA, 3000, MR));
            });
            assertThat(a.next().error()).isFalse();
            a.dev.rdma().traceRdma(null);
        } finally {
            trace.flush();
            trace.close();
            trace.reclaim();
        }
        // Three SEND packets out, one ACK in: the real frames, ICRC and all, which parse as received frames do.
        java.nio.ByteBuffer p = java.nio.ByteBuffer.wrap(java.nio.file.Files.readAllBytes(file))
                .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.nio.file.Files.delete(file);
        p.position(24);
        ernic.roce.RoceParser parser = new ernic.roce.RoceParser();
        java.util.List<Integer> opcodes = new java.util.ArrayList<>();
        while (p.remaining() >= 16) {
            p.position(p.position() + 8);
            int captured = p.getInt(), length = p.getInt();
            byte[] frame = new byte[captured];
            p.get(frame);
            if (captured == length) {
                assertThat(parser.parse(MemorySegment.ofArray(frame))).isEqualTo(ernic.roce.RoceParser.Refusal.NONE);
            }
            opcodes.add(frame[14 + 20 + 8] & 0xff);
        }
        assertThat(opcodes).containsExactly(0x00, 0x01, 0x02, 0x11); // SEND FIRST, MIDDLE, LAST; ACKNOWLEDGE
    }

    @Test
    void aSolicitedSendRaisesTheEventOfACqArmedForSolicitedCompletionsOnly() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
        });
        while (b.rdma.nextEqe(2) != -1) {
            // the admin CQ's events of the set-up
        }
        b.rdma.ringCq(CQ, 2, 0); // armed for a solicited completion only
        run(() -> {
            b.postRecv(3, VA + 8192, 4096);
            a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR));
        });
        assertThat(b.next().statusLength()).isEqualTo(64);
        assertThat(b.rdma.nextEqe(2)).as("an unsolicited SEND raises no event").isEqualTo(-1);
        b.rdma.ringCq(CQ, 0, b.cq.consumer());
        run(() -> {
            b.postRecv(3, VA + 8192, 4096);
            a.postSend(2, w -> w.op(SEND).flags(WQE_FLAG_SOL).numSgeKey(1).length(32)
                    .sge(WQE_PLD, 0, VA, 32, MR));
        });
        assertThat(b.rdma.nextEqe(2)).as("the SE bit crossed the wire").isEqualTo(CQ << 8 | 1);
        assertThat(b.next().statusLength()).isEqualTo(32);
    }

    @Test
    void aFencedSendLeavesOnlyOnceTheReadBeforeItHasCompleted() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            b.postRecv(3, VA + 8192, 4096);
        });
        tapping = true;
        run(() -> {
            a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(VA, MR).length(64).sge(WQE_PLD, 0, VA + 4096, 64, MR));
            a.postSend(2, w -> w.op(SEND).flags(WQE_FLAG_FENCE).numSgeKey(1).length(32)
                    .sge(WQE_PLD, 0, VA, 32, MR));
        });
        assertThat(tapped).as("the READ request alone: the SEND waits for its response").hasSize(1);
        tapping = false;
        b.dev.receive(MemorySegment.ofArray(tapped.poll()));
        deliver();
        assertThat(a.next().error()).as("the READ").isFalse();
        assertThat(b.next().statusLength()).as("then the SEND").isEqualTo(32);
        assertThat(a.next().error()).isFalse();
    }

    /**
     * Several QPs whose retransmission timers run on a lossy link keep one wake-up in the loop's queue: a wake-up
     * brought forward cancels the one it supersedes. Left there, each fired and rescheduled the earliest deadlines
     * of every QP again, and the queue grew until its young collections stalled the device thread.
     */
    @Test
    void timersOfManyQpsKeepOneWakeUpInTheLoopsQueue() {
        java.util.PriorityQueue<Object[]> queue = new java.util.PriorityQueue<>(
                java.util.Comparator.comparingLong(e -> (Long) e[0]));
        a.dev.rdma().timer((nanos, task) -> {
            java.util.concurrent.FutureTask<Void> f = new java.util.concurrent.FutureTask<>(task, null);
            queue.add(new Object[]{clock.nanoTime() + nanos, f});
            return f;
        });
        run(() -> {
            for (int qp = 2; qp <= 5; qp++) {
                a.rc(qp, qp, IP_B);
                b.rc(qp, qp, IP_A);
            }
        });
        tapping = true; // every packet A sends is lost: its timers fire and it sends again, for ever (retry_cnt 7)
        for (int qp = 5; qp >= 2; qp--) { // the earliest deadline on the QP pumped last
            int q = qp;
            run(() -> a.postSend(q, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR)));
            clock.advance(1, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
        int most = 0;
        for (int fired = 0; fired < 500 && !queue.isEmpty(); fired++) {
            queue.removeIf(e -> ((java.util.concurrent.Future<?>) e[1]).isCancelled());
            most = Math.max(most, queue.size());
            Object[] e = queue.poll();
            long due = (Long) e[0] - clock.nanoTime();
            if (due > 0) {
                clock.advance(due, java.util.concurrent.TimeUnit.NANOSECONDS);
            }
            ((Runnable) e[1]).run();
            deliver();
        }
        assertThat(a.counter("roce.rc.reqRetransmitted")).as("the timers fired").isGreaterThan(20);
        assertThat(most).as("wake-ups in the loop's queue at once").isEqualTo(1);
        tapping = false;
        tapped.clear();
    }

    @Test
    void aWrongRkeyIsNakedAndBothQpsFail() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA, MR ^ 1).length(8).sge(WQE_PLD, 0, VA, 8, MR));
        });
        assertThat(a.next().statusLength()).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(b.counter("roce.rc.respNakAccess")).isEqualTo(1);
        assertThat(a.counter("roce.rc.reqFatalNaks")).isEqualTo(1);
    }

    @Test
    void aReadToAQpWithMaxDestRdAtomicZeroIsAnInvalidRequest() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rsqDepth = 0; // B's guest asks max_dest_rd_atomic 0: ionic's driver then leaves rsq_depth 0
            b.rc(3, 2, IP_A);
            a.postSend(2, w -> w.op(READ).numSgeKey(1).rdma(VA, MR).length(8).sge(WQE_PLD, 0, VA + 64, 8, MR));
        });
        assertThat(a.next().statusLength()).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(b.counter("roce.rc.respNakNoRdAtomicResources")).isEqualTo(1);
    }

    @Test
    void aSendWithoutAReceiveWaitsForOneAfterAnRnrNak() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR));
        });
        assertThat(b.counter("roce.rc.respRnrNaks")).isEqualTo(1);
        assertThat(a.cq.pollWork()).as("no completion while the receiver is not ready").isNull();
        run(() -> b.postRecv(3, VA + 8192, 4096));
        clock.advance(1, java.util.concurrent.TimeUnit.SECONDS); // past any RNR timer
        a.dev.rdma().tick(clock.nanoTime());
        deliver();
        assertThat(b.next().statusLength()).isEqualTo(64);
        assertThat(a.next().error()).isFalse();
    }

    @Test
    void aDamagedPacketIsDroppedAndCountedAndTheRetryDeliversIt() {
        byte[] frame = aSendTakenOffTheCable();
        frame[frame.length - 10] ^= 1; // a payload byte: the ICRC no longer matches
        assertThat(b.dev.receive(MemorySegment.ofArray(frame))).as("taken, not passed to the guest").isTrue();
        assertThat(b.counter("roce.rxBadIcrc")).isEqualTo(1);
        assertThat(b.counter("roce.rxMalformed")).isZero();
        assertThat(b.cq.pollWork()).isNull();
        // A second SEND reveals the gap before the retransmission timer: the responder NAKs the sequence, and the
        // requester goes back to the damaged one.
        run(() -> {
            b.postRecv(3, VA + 12288, 4096);
            a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(32).sge(WQE_PLD, 0, VA, 32, MR));
        });
        assertThat(b.next().statusLength()).isEqualTo(64);
        assertThat(b.next().statusLength()).isEqualTo(32);
        assertThat(a.next().error()).isFalse();
        assertThat(a.next().error()).isFalse();
        assertThat(b.counter("roce.rc.respSeqNaks")).isEqualTo(1);
    }

    @Test
    void packetsForNoWireQpOrFromAnotherSourceAreDroppedAndCounted() {
        byte[] good = aSendTakenOffTheCable();
        RoceFrame f = new RoceFrame();
        // The same packet for QP 5 of B, which does not exist; and from another address than A's.
        byte[] toQp5 = rebuilt(good, h -> h.bth.destQp = 5, f);
        byte[] fromElsewhere = rebuilt(good, h -> h.srcIp = 0x0a00_0009, f);
        assertThat(b.dev.receive(MemorySegment.ofArray(toQp5))).isTrue();
        assertThat(b.dev.receive(MemorySegment.ofArray(fromElsewhere))).isTrue();
        assertThat(b.counter("roce.rxUnknownQp")).isEqualTo(1);
        assertThat(b.counter("roce.rxWrongSource")).isEqualTo(1);
        assertThat(b.cq.pollWork()).isNull();
        // A frame that is not RoCEv2 (another UDP port) is the guest's: not taken.
        byte[] other = good.clone();
        other[14 + 20 + 3] ^= 0x40; // UDP port 4791 (0x12b7) becomes 0x12f7
        long claimed = b.counter("device.rx_claimed");
        b.dev.receive(MemorySegment.ofArray(other));
        assertThat(b.counter("device.rx_claimed")).as("left for the guest's stack").isEqualTo(claimed);
        // RoCEv2 for another host on the segment (its MAC, its address) is not this device's either.
        b.dev.receive(MemorySegment.ofArray(rebuilt(good, h -> {
            h.dmac = MAC | 0x99;
            h.dstIp = 0x0a00_0099;
        }, f)));
        assertThat(b.counter("device.rx_claimed")).isEqualTo(claimed);
    }

    @Test
    void withoutRoceRoceV2FramesAreTheGuestsEthernet() throws IOException {
        Side plain = new Side(IP_B, false);
        try {
            run(() -> {
                a.rc(2, 3, IP_B);
                a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR));
            });
            // (A's frame went to b; offered to a device without --roce, it is not taken.)
            a.peer = plain;
            tapping = true;
            run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR)));
            tapping = false;
            assertThat(tapped).isNotEmpty();
            plain.dev.receive(MemorySegment.ofArray(tapped.poll()));
            assertThat(plain.counter("device.rx_claimed")).as("no RDMA claimer: the frame goes the Ethernet way")
                    .isZero();
            assertThat(plain.counter("device.rx_offered")).isEqualTo(1);
        } finally {
            plain.dev.detach();
            plain.guest.close();
        }
    }

    /** QP 2 of A connected to QP 3 of B (a receive posted): A's 64-byte SEND, taken off the cable undelivered. */
    byte[] aSendTakenOffTheCable() {
        run(() -> {
            a.rc(2, 3, IP_B);
            b.rc(3, 2, IP_A);
            b.postRecv(3, VA + 8192, 4096);
        });
        tapping = true;
        run(() -> a.postSend(2, w -> w.op(SEND).numSgeKey(1).length(64).sge(WQE_PLD, 0, VA, 64, MR)));
        tapping = false;
        byte[] frame = tapped.poll();
        assertThat(frame).isNotNull();
        return frame;
    }

    /** {@code frame} read, changed by {@code change} and written again (a correct ICRC for the changed frame). */
    static byte[] rebuilt(byte[] frame, Consumer<RoceFrame> change, RoceFrame f) {
        ernic.roce.RoceParser p = new ernic.roce.RoceParser();
        assertThat(p.parse(MemorySegment.ofArray(frame))).isEqualTo(ernic.roce.RoceParser.Refusal.NONE);
        f.copyOuter(p.frame);
        f.bth.set(p.frame.bth);
        int len = p.payloadLength;
        byte[] payload = MemorySegment.ofArray(frame).asSlice(p.payloadOffset, len).toArray(ValueLayout.JAVA_BYTE);
        change.accept(f);
        byte[] out = new byte[f.frameLength(len)];
        int at = f.headers(out, 0, len);
        System.arraycopy(payload, 0, out, at, len);
        f.trailer(out, 0, len);
        return out;
    }
}
