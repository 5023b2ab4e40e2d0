package ernic.ionic;

import ernic.ionic.eth.EthStats;
import ernic.attach.FrameClaimer;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.DeviceBinding;
import ernic.model.EthQueue;
import ernic.model.EthQueue.Comp;
import ernic.model.IonicDriverModel;
import ernic.model.IonicDriverModel.Bringup;
import ernic.model.IonicDriverModel.Station;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static ernic.model.IonicDriverModel.*;
import static org.assertj.core.api.Assertions.assertThat;
import static ernic.common.Endian.LE;

/** TX and RX queues, interrupts, the notify queue, statistics and faults, driven by the driver model like ionic.ko. */
class DataPathTest {
    static final int DEPTH_LOG2 = 6, DEPTH = 1 << DEPTH_LOG2, BUF = 2048;
    /** ionic_lif_stats at lif_info + 320 and ionic_port_stats at port_info + 576: le64 counters, by index. */
    static final int LIF_STATS = 320, RX_UCAST_BYTES = 0, RX_UCAST_PACKETS = 8, RX_BCAST_PACKETS = 40,
            TX_UCAST_BYTES = 128, TX_UCAST_PACKETS = 136;
    static final int PORT_STATS = 576, FRAMES_RX_OK = 0, FRAMES_RX_BROADCAST = 8 * 8, FRAMES_TX_OK = 32 * 8;
    /** enum ionic_pkt_type. */
    static final int PKT_TYPE_IPV4_UDP = 0x05;
    /** The notifyq's event ring follows its 4 KiB descriptor page; an event is eid le64 @0, ecode le16 @8. */
    static final int NOTIFY_EVENTS = 4096, EVENT_SIZE = 64, ECODE_LINK_CHANGE = 1;

    final Arena arena = Arena.ofAuto();
    IonicDevice dev;
    ModelGuest guest;
    IonicDriverModel drv;
    Bringup up;
    Station station;
    final List<byte[]> sent = new ArrayList<>();
    EthQueue[] tx, rx;
    long[] rxBufBase;

    void start(String profile, String... inject) throws IOException {
        dev = new IonicDevice(ProfileLoader.load(profile), FaultPlan.parse(inject));
        guest = new ModelGuest(dev, 32 << 20);
        drv = guest.drv;
        probe();
        dev.lif().sink(f -> sent.add(f.toArray(ValueLayout.JAVA_BYTE)));
    }

    void probe() throws IOException {
        up = drv.bringUp();
        station = drv.probeLif();
    }

    @AfterEach
    void tearDown() {
        if (guest != null) {
            guest.close();
        }
    }

    /** ionic_open: Q_INIT TX then RX for each pair (intr = 1 + pair), fill RX, Q_CONTROL enable RX then TX. */
    void open(int pairs, boolean fillRx) throws IOException {
        tx = new EthQueue[pairs];
        rx = new EthQueue[pairs];
        rxBufBase = new long[pairs];
        for (int q = 0; q < pairs; q++) {
            tx[q] = EthQueue.tx(drv, 1, q, 1 + q, DEPTH_LOG2);
            rx[q] = EthQueue.rx(drv, 0, q, 1 + q, DEPTH_LOG2);
            drv.intrMask(1 + q, false, true);
        }
        ByteBuffer mode = command(RX_MODE_SET);
        mode.putShort(4, (short) 0x7);
        expectOk(drv.adminq(mode), "RX_MODE_SET");
        for (int q = 0; q < pairs; q++) {
            if (fillRx) {
                postRx(q, DEPTH - 1);
            }
            assertThat(rx[q].control(true)).isZero();
            assertThat(tx[q].control(true)).isZero();
        }
    }

    long rxBuffer(int q, int slot) {
        return rxBufBase[q] + (long) slot * BUF;
    }

    /** Posts {@code count} RX buffers of BUF bytes on queue q and rings its doorbell once. */
    void postRx(int q, int count) throws IOException {
        if (rxBufBase[q] == 0) {
            rxBufBase[q] = drv.alloc((long) DEPTH * BUF);
        }
        for (int k = 0; k < count; k++) {
            int slot = rx[q].head();
            rx[q].writeRx(slot, EthQueue.RX_OPCODE_SIMPLE, rxBuffer(q, slot), BUF);
            rx[q].advance(1);
        }
        rx[q].ring();
    }

    long copyIn(byte[] b) {
        long a = drv.alloc(b.length);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, guest.at(a, b.length), 0, b.length);
        return a;
    }

    /** Posts one TX frame: head buffer plus optional SG pieces; rings the doorbell. */
    int postTx(int q, byte[]... pieces) throws IOException {
        int slot = tx[q].head();
        long head = copyIn(pieces[0]);
        for (int k = 1; k < pieces.length; k++) {
            tx[q].writeSg(slot, k - 1, copyIn(pieces[k]), pieces[k].length);
        }
        tx[q].writeTx(slot, EthQueue.TX_OPCODE_CSUM_NONE, 0, pieces.length - 1, head, pieces[0].length);
        tx[q].advance(1);
        tx[q].ring();
        return slot;
    }

    /** The next RX completion of queue q if its color matches, else null. */
    Comp nextRx(int q) {
        return rx[q].next();
    }

    Comp nextTx(int q) {
        return tx[q].next();
    }

    /** A raw 8-byte doorbell store at page {@code page}, slot {@code qtype}. */
    void doorbell(int page, int qtype, long value) throws IOException {
        drv.doorbell((long) page * 4096 + qtype * 8L, value);
    }

    long intrReg(int vector, long reg) throws IOException {
        return drv.bar0(INTR_CTRL + INTR_CTRL_SIZE * vector + reg, 4);
    }

    void intrWrite(int vector, long reg, long value) throws IOException {
        drv.device().writeLong(DeviceBinding.BAR0, INTR_CTRL + INTR_CTRL_SIZE * vector + reg, 4, value);
    }

    /** An IPv4/UDP frame to our MAC from a given source port. */
    static byte[] udpFrame(int srcPort, int payload) {
        byte[] f = new byte[14 + 20 + 8 + payload];
        byte[] dst = {0x02, 0, 0, (byte) 0xee, 0, 1};
        byte[] src = {0x02, 0x42, 0, 0, 0, 9};
        System.arraycopy(dst, 0, f, 0, 6);
        System.arraycopy(src, 0, f, 6, 6);
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 9] = 17;
        f[14 + 12] = 10; f[14 + 15] = 1;
        f[14 + 16] = 10; f[14 + 19] = 2;
        f[34] = (byte) (srcPort >> 8); f[35] = (byte) srcPort;
        f[36] = 0x13; f[37] = (byte) 0x88;
        for (int i = 0; i < payload; i++) {
            f[42 + i] = (byte) (i * 7 + srcPort);
        }
        return f;
    }

    MemorySegment seg(byte[] b) {
        MemorySegment s = arena.allocate(b.length);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, s, 0, b.length);
        return s;
    }

    @Test
    void txGathersHeadAndSgIntoOneFrame() throws IOException {
        start("compat");
        open(1, true);
        byte[] f = udpFrame(1000, 300);
        byte[] a = java.util.Arrays.copyOfRange(f, 0, 50), b = java.util.Arrays.copyOfRange(f, 50, 200),
                c = java.util.Arrays.copyOfRange(f, 200, f.length);
        long before = guest.count(1);
        int slot = postTx(0, a, b, c);
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0)).isEqualTo(f);
        Comp comp = nextTx(0);
        assertThat(comp).isNotNull();
        assertThat(comp.compIndex()).isEqualTo(slot);
        assertThat(guest.count(1)).isEqualTo(before + 1);
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_PACKETS)).isEqualTo(1);
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_BYTES)).isEqualTo(f.length);
    }

    @Test
    void txWithoutSinkIsCompletedAndCounted() throws IOException {
        start("compat");
        open(1, true);
        dev.lif().sink(null);
        for (int i = 0; i < 3 * DEPTH; i++) {
            int slot = postTx(0, udpFrame(i, 10));
            Comp c = nextTx(0);
            assertThat(c).as("completion %d", i).isNotNull();
            assertThat(c.compIndex()).isEqualTo(slot);
            // The driver returns credits with UNMASK after its NAPI poll.
            drv.intrCredits(1, 1 | CREDIT_UNMASK | CREDIT_RESET_COALESCE);
        }
        assertThat(dev.lif().stats().get(EthStats.Device.TX_DISCARDED)).isEqualTo(3L * DEPTH);
        assertThat(sent).isEmpty();
    }

    @Test
    void txClaimerTakesFramesBeforeTheSink() throws IOException {
        start("compat");
        open(1, true);
        // Claims UDP frames from odd source ports.
        dev.lif().addTxClaimer(f -> (f.get(ValueLayout.JAVA_BYTE, 35) & 1) == 1);
        postTx(0, udpFrame(1, 10));
        postTx(0, udpFrame(2, 10));
        assertThat(sent).hasSize(1);
        assertThat(dev.lif().stats().get(EthStats.Device.TX_CLAIMED)).isEqualTo(1);
    }

    @Test
    void rxFillsPostedBuffersWithCompletions() throws IOException {
        start("compat");
        open(1, true);
        byte[] f = udpFrame(7, 100);
        long before = guest.count(1);
        assertThat(dev.receive(seg(f))).isTrue();
        Comp c = nextRx(0);
        assertThat(c).isNotNull();
        assertThat(c.status()).isZero();
        assertThat(c.compIndex()).isEqualTo(0);
        assertThat(c.len()).isEqualTo(f.length);
        assertThat(c.csumFlags() & 0x80).as("CSUM_F_CALC clear").isZero();
        assertThat(c.pktType()).isEqualTo(PKT_TYPE_IPV4_UDP);
        assertThat(guest.at(rxBuffer(0, 0), f.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(f);
        assertThat(guest.count(1)).isEqualTo(before + 1);
    }

    @Test
    void rxDropsWhenNoBufferPosted() throws IOException {
        start("compat");
        open(1, false);
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse();
        assertThat(nextRx(0)).isNull();
        assertThat(dev.lif().stats().get(EthStats.Device.RX_NO_BUFFER)).isEqualTo(1);
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_QUEUE_EMPTY)).isEqualTo(1);
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_UCAST_DROP_PACKETS)).isEqualTo(1);
        postRx(0, 2);
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isTrue();
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isTrue();
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse();
        assertThat(nextRx(0).compIndex()).isEqualTo(0);
        assertThat(nextRx(0).compIndex()).isEqualTo(1);
        assertThat(nextRx(0)).isNull();
    }

    @Test
    void rxUsesSgElementsForLongFrames() throws IOException {
        start("compat");
        open(1, false);
        long head = drv.alloc(512), more = drv.alloc(4096);
        rx[0].writeRx(0, EthQueue.RX_OPCODE_SG, head, 512);
        rx[0].writeSg(0, 0, more, 4096);
        rx[0].advance(1);
        rx[0].ring();
        byte[] f = udpFrame(3, 1500);
        assertThat(dev.receive(seg(f))).isTrue();
        Comp c = nextRx(0);
        assertThat(c.status()).isZero();
        assertThat(c.numSgElems()).isEqualTo(1);
        assertThat(c.len()).isEqualTo(f.length);
        byte[] got = new byte[f.length];
        MemorySegment.copy(guest.at(head, 512), 0, MemorySegment.ofArray(got), 0, 512);
        MemorySegment.copy(guest.at(more, f.length - 512), 0, MemorySegment.ofArray(got), 512, f.length - 512);
        assertThat(got).isEqualTo(f);
    }

    @Test
    void oneFlowOneQueueAcrossEnabledQueues() throws IOException {
        start("compat");
        open(4, true);
        Set<Integer> queuesUsed = new HashSet<>();
        for (int port = 0; port < 64; port++) {
            int hit = -1;
            for (int rep = 0; rep < 2; rep++) {
                assertThat(dev.receive(seg(udpFrame(port, 20)))).isTrue();
                int q = -1;
                for (int i = 0; i < 4; i++) {
                    if (nextRx(i) != null) {
                        q = i;
                    }
                }
                assertThat(q).isNotNegative();
                if (rep == 0) {
                    hit = q;
                } else {
                    assertThat(q).as("flow %d stays on one queue", port).isEqualTo(hit);
                }
            }
            queuesUsed.add(hit);
            // Re-post the two buffers used so the rings never run dry.
            postRx(hit, 2);
        }
        assertThat(queuesUsed).hasSizeGreaterThan(1);
    }

    @Test
    void interruptLatchesWhileMaskedAndFiresOnUnmask() throws IOException {
        start("compat");
        open(1, true);
        int intr = 1;
        long base = guest.count(intr);
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr) - base).isEqualTo(1); // fired, then auto-masked (mask_assert)
        assertThat(intrReg(intr, INTR_MASK)).isEqualTo(1);
        dev.receive(seg(udpFrame(1, 10)));
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr) - base).isEqualTo(1); // latched, not fired
        assertThat(dev.interruptController().pending(intr)).isTrue();
        assertThat(drv.bar0(INTR_STATUS, 4) & 1 << intr).isNotZero();
        // NAPI still busy: credits without UNMASK do not fire.
        drv.intrCredits(intr, 2 | CREDIT_RESET_COALESCE);
        assertThat(guest.count(intr) - base).isEqualTo(1);
        // NAPI done: credits with UNMASK deliver the latched interrupt once, and mask again.
        drv.intrCredits(intr, 1 | CREDIT_UNMASK);
        assertThat(guest.count(intr) - base).isEqualTo(2);
        assertThat(intrReg(intr, INTR_MASK)).isEqualTo(1);
        // Unmasking with nothing pending fires nothing, and outstanding credits never re-fire.
        drv.intrCredits(intr, CREDIT_UNMASK);
        assertThat(guest.count(intr) - base).isEqualTo(2);
        assertThat(intrReg(intr, INTR_CREDITS)).isZero();
        // Explicit mask write 1 then 0 (ionic_intr_mask) also delivers a latch.
        intrWrite(intr, INTR_MASK, 1);
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr) - base).isEqualTo(2);
        intrWrite(intr, INTR_MASK, 0);
        assertThat(guest.count(intr) - base).isEqualTo(3);
    }

    @Test
    void linkChangeUpdatesLifInfoThenPostsEvent() throws IOException {
        start("compat");
        MemorySegment li = guest.at(up.lifInfo(), 4096);
        assertThat(li.get(LE.u16(), 266)).as("link_status UP").isEqualTo((short) 1);
        drv.intrUnmask(0); // delivers what the bring-up latched (and masks again)
        drv.intrUnmask(0);
        long before = guest.count(0);
        dev.setLink(false);
        assertThat(li.get(LE.u16(), 266)).as("link_status DOWN").isEqualTo((short) 2);
        MemorySegment ev = guest.at(station.notifyRing() + NOTIFY_EVENTS, EVENT_SIZE);
        assertThat(LE.u64(ev, 0)).as("eid").isEqualTo(1);
        assertThat(ev.get(LE.u16(), 8)).as("ecode").isEqualTo((short) ECODE_LINK_CHANGE);
        assertThat(guest.count(0)).isEqualTo(before + 1);
        drv.intrUnmask(0);
        dev.setLink(true);
        assertThat(li.get(LE.u16(), 266)).isEqualTo((short) 1);
        assertThat(LE.u32(li, 268)).isEqualTo(100000);
        assertThat(LE.u64(guest.at(station.notifyRing() + NOTIFY_EVENTS + EVENT_SIZE, EVENT_SIZE), 0)).isEqualTo(2);
        assertThat(guest.at(up.portInfo(), 4096).get(LE.u16(), 265)).as("link_down_count").isEqualTo((short) 1);
    }

    @Test
    void statisticsBlocksAgreeWithTraffic() throws IOException {
        start("compat");
        open(1, true);
        for (int i = 0; i < 5; i++) {
            postTx(0, udpFrame(i, 100));
        }
        byte[] bcast = udpFrame(1, 50);
        java.util.Arrays.fill(bcast, 0, 6, (byte) 0xff);
        dev.receive(seg(udpFrame(1, 60)));
        dev.receive(seg(bcast));
        dev.statisticsTick();
        MemorySegment l = guest.at(up.lifInfo() + LIF_STATS, 1024);
        assertThat(LE.u64(l, TX_UCAST_PACKETS)).isEqualTo(5);
        assertThat(LE.u64(l, TX_UCAST_BYTES)).isEqualTo(5L * udpFrame(0, 100).length);
        assertThat(LE.u64(l, RX_UCAST_PACKETS)).isEqualTo(1);
        assertThat(LE.u64(l, RX_UCAST_BYTES)).isEqualTo(udpFrame(1, 60).length);
        assertThat(LE.u64(l, RX_BCAST_PACKETS)).isEqualTo(1);
        MemorySegment p = guest.at(up.portInfo() + PORT_STATS, 1024);
        assertThat(LE.u64(p, FRAMES_TX_OK)).isEqualTo(5);
        assertThat(LE.u64(p, FRAMES_RX_OK)).isEqualTo(2);
        assertThat(LE.u64(p, FRAMES_RX_BROADCAST)).isEqualTo(1);
        // RESET zeroes every counter.
        assertThat(drv.devcmd(command(RESET)).status()).isZero();
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_PACKETS)).isZero();
    }

    @Test
    void queuedFramesWaitForBuffersAndBlockTheOnesBehind() throws IOException {
        start("compat");
        open(1, false);
        assertThat(dev.queueForGuest(seg(udpFrame(1, 10)))).isTrue();
        assertThat(dev.queueForGuest(seg(udpFrame(2, 20)))).isTrue();
        assertThat(dev.lif().guestQueueBacklog()).isEqualTo(2);
        postRx(0, 1);
        assertThat(dev.lif().guestQueueBacklog()).isEqualTo(1);
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(1, 10).length);
        postRx(0, 5);
        assertThat(dev.lif().guestQueueBacklog()).isZero();
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(2, 20).length);
    }

    @Test
    void postedRxBuffersTellTheClaimersTheQueueHasRoomAgain() throws IOException {
        start("compat");
        open(1, false);
        List<String> told = new ArrayList<>();
        dev.lif().addTxClaimer(new FrameClaimer() {
            @Override
            public boolean claim(MemorySegment frame) {
                return false;
            }

            @Override
            public void guestQueueDrained() {
                told.add("room, backlog " + dev.lif().guestQueueBacklog());
                // An endpoint sends what it held back: straight into a buffer left over, without a second call.
                dev.queueForGuest(seg(udpFrame(9, 90)));
            }
        });
        assertThat(dev.queueForGuest(seg(udpFrame(1, 10)))).isTrue();
        assertThat(dev.queueForGuest(seg(udpFrame(2, 20)))).isTrue();
        assertThat(told).isEmpty();
        postRx(0, 1); // the first queued frame goes in; the hook's frame waits behind the second
        assertThat(told).containsExactly("room, backlog 1");
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(1, 10).length);
        assertThat(dev.lif().guestQueueBacklog()).isEqualTo(2);
        postRx(0, 4); // both go in, then the hook's next frame fills a third buffer
        assertThat(told).containsExactly("room, backlog 1", "room, backlog 0");
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(2, 20).length);
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(9, 90).length);
        assertThat(nextRx(0).len()).isEqualTo(udpFrame(9, 90).length);
        assertThat(dev.lif().guestQueueBacklog()).isZero();
        postRx(0, 1); // nothing was waiting: nobody is told
        assertThat(told).hasSize(2);
    }

    /** Offers the same small UDP frame from the wire {@code n} times; whether each one was delivered. */
    List<Boolean> receiveSame(int n) {
        List<Boolean> got = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            got.add(dev.receive(seg(udpFrame(1, 10))));
        }
        return got;
    }

    @Test
    void rxLostFaultChangesExactlyTheNamedFrames() throws IOException {
        start("compat", "rx-lost:every=3");
        open(1, true);
        assertThat(receiveSame(9)).containsExactly(true, true, false, true, true, false, true, true, false);
        assertThat(dev.faults().injectedCount(FaultKind.RX_LOST)).isEqualTo(3);
        assertThat(dev.lif().stats().get(EthStats.Device.RX_DELIVERED)).isEqualTo(6);
        // Lost frames leave no guest-visible trace.
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_UCAST_DROP_PACKETS)).isZero();
    }

    @Test
    void rxNobufFaultDropsAsIfNoBuffer() throws IOException {
        start("compat", "rx-nobuf:from=2,count=2");
        open(1, true);
        assertThat(receiveSame(5)).containsExactly(true, false, false, true, true);
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_QUEUE_EMPTY)).isEqualTo(2);
        assertThat(dev.faults().injectedCount(FaultKind.RX_NOBUF)).isEqualTo(2);
        // Buffers were not consumed by the dropped frames: completions are 0, 1, 2.
        assertThat(nextRx(0).compIndex()).isEqualTo(0);
        assertThat(nextRx(0).compIndex()).isEqualTo(1);
        assertThat(nextRx(0).compIndex()).isEqualTo(2);
    }

    @Test
    void txDropFaultCompletesButNeverSends() throws IOException {
        start("compat", "tx-drop:burst=2/5");
        open(1, true);
        for (int i = 1; i <= 10; i++) {
            int slot = postTx(0, udpFrame(i, 10));
            assertThat(nextTx(0).compIndex()).isEqualTo(slot);
            drv.intrCredits(1, CREDIT_UNMASK);
        }
        // Frames 1, 2, 6, 7 dropped; 3, 4, 5, 8, 9, 10 sent.
        assertThat(sent).hasSize(6);
        assertThat(sent).extracting(b -> (int) b[35] & 0xff).containsExactly(3, 4, 5, 8, 9, 10);
        assertThat(dev.faults().injectedCount(FaultKind.TX_DROP)).isEqualTo(4);
    }

    @Test
    void resetAndDetachReturnToPowerOn() throws IOException {
        start("compat", "rx-lost:seq=1");
        open(2, true);
        dev.queueForGuest(seg(udpFrame(1, 10)));
        dev.receive(seg(udpFrame(1, 10)));
        drv.device().reset();
        assertThat(dev.lif().lifInfoPa()).isZero();
        assertThat(dev.lif().portInfoPa()).isZero();
        assertThat(dev.lif().filterCount()).isZero();
        assertThat(dev.lif().guestQueueBacklog()).isZero();
        assertThat(dev.faults().occurrences(FaultKind.RX_LOST)).isZero();
        ernic.counters.CounterRegistry registry = new ernic.counters.CounterRegistry();
        dev.registerCounters(registry);
        assertThat(registry.totals()).allSatisfy((k, v) -> {
            if (k.startsWith("eth.")) {
                assertThat(v).as(k).isZero();
            }
        });
        assertThat(dev.interruptController().masked(1)).isTrue();
        assertThat(drv.bar0(FW_HEARTBEAT, 4)).isZero();
        assertThat(dev.configSpace().busMasterEnabled()).isFalse();
        // Doorbells to the old queues are refused, not served.
        doorbell(0, tx[0].hwType(), doorbellValue(tx[0].hwIndex(), 0, 1));
        assertThat(sent).isEmpty();
        // The whole bring-up works again (as the PCI core does after a reset: memory space and bus mastering
        // on first); the fault sequence starts over.
        drv.device().writeLong(DeviceBinding.CONFIG, 4, 2, 0x6);
        probe();
        open(1, true);
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse(); // rx-lost seq=1 again
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isTrue();
        dev.detach();
        assertThat(dev.lif().lifInfoPa()).isZero();
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse();
        dev.attach(guest.context);
    }

    @Test
    void maliciousDoorbellsAreRefusedNotThrown() throws IOException {
        start("compat");
        open(1, true);
        int txType = tx[0].hwType(), txId = tx[0].hwIndex();
        doorbell(0, txType, doorbellValue(txId, 0, 0xffff)); // index past the ring
        doorbell(0, txType, doorbellValue(500, 0, 1));       // queue past the count
        doorbell(0, 9, doorbellValue(0, 0, 1));              // the RDMA EQ type has no doorbell
        doorbell(0, 12, doorbellValue(0, 0, 1));             // a type nothing serves
        doorbell(7, 1, doorbellValue(0, 0, 1));              // notify queue has no doorbell
        // A TX descriptor pointing outside guest memory completes with an error count, no frame.
        int slot = tx[0].head();
        tx[0].writeTx(slot, EthQueue.TX_OPCODE_CSUM_NONE, 0, 0, 0x7_0000_0000L, 100);
        tx[0].advance(1);
        tx[0].ring();
        assertThat(nextTx(0).compIndex()).isEqualTo(slot);
        assertThat(sent).isEmpty();
        assertThat(dev.refusals().count("ionic-db-index")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-db-qid")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-db-qtype")).isEqualTo(1);
        assertThat(dev.refusals().count("rdma-db-eq")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-tx-dma")).isEqualTo(1);
        // A queue's doorbell counts only on its own page (the kernel's, 0): page 5 is another process's.
        slot = tx[0].head();
        tx[0].writeTx(slot, EthQueue.TX_OPCODE_CSUM_NONE, 0, 0, copyIn(udpFrame(1, 10)), udpFrame(1, 10).length);
        tx[0].advance(1);
        doorbell(5, txType, doorbellValue(txId, 0, tx[0].head()));
        assertThat(sent).isEmpty();
        assertThat(dev.refusals().count("ionic-db-page")).isEqualTo(1);
        doorbell(0, txType, doorbellValue(txId, 0, tx[0].head()));
        assertThat(sent).hasSize(1);
    }

    @Test
    void doorbellAsTwoDwordsIsJoined() throws IOException {
        start("compat");
        open(1, true);
        int slot = tx[0].head();
        tx[0].writeTx(slot, EthQueue.TX_OPCODE_CSUM_NONE, 0, 0, drv.alloc(64), 60);
        tx[0].advance(1);
        long v = doorbellValue(tx[0].hwIndex(), 0, tx[0].head());
        long at = tx[0].doorbellOffset();
        drv.device().writeLong(DeviceBinding.BAR2, at, 4, v & 0xffff_ffffL);
        assertThat(sent).isEmpty();
        drv.device().writeLong(DeviceBinding.BAR2, at + 4, 4, v >>> 32);
        assertThat(sent).hasSize(1);
    }
}
