package ernic.ionic;

import ernic.ionic.eth.EthStats;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Cmd;
import ernic.ionic.layout.InfoBlock.LifStats;
import ernic.ionic.layout.InfoBlock.PortStats;
import ernic.ionic.layout.Le;
import ernic.ionic.layout.Ring;
import ernic.ionic.layout.Ring.RxComp;
import ernic.ionic.layout.Ring.TxComp;
import ernic.ionic.layout.Ring.TxDesc;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.Opcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** TX and RX queues, interrupts, the notify queue, statistics and faults, driven like ionic.ko. */
class DataPathTest {
    static final int DEPTH_LOG2 = 6, DEPTH = 1 << DEPTH_LOG2, BUF = 2048;
    final Arena arena = Arena.ofAuto();
    FakeGuest guest;
    IonicDevice dev;
    Driver drv;
    final List<byte[]> sent = new ArrayList<>();
    long[] txRing, txCq, txSg, rxRing, rxCq, rxSg;
    int[] txHead, rxHead, txCqTail, rxCqTail;
    boolean[] txColor, rxColor;

    void start(String profile, String... inject) {
        guest = new FakeGuest(32 << 20);
        dev = new IonicDevice(ProfileLoader.load(profile), FaultPlan.parse(inject));
        dev.attach(guest);
        drv = new Driver(dev, guest);
        drv.probeToAdminq();
        drv.probeAdminqCommands();
        dev.frameSink(f -> sent.add(f.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
    }

    @AfterEach
    void tearDown() {
        if (dev != null) {
            dev.detach();
            guest.close();
        }
    }

    /** ionic_open: Q_INIT TX then RX for each pair (intr = 1 + pair), fill RX, Q_CONTROL enable RX then TX. */
    void open(int pairs, boolean fillRx) {
        int n = pairs;
        txRing = new long[n]; txCq = new long[n]; txSg = new long[n];
        rxRing = new long[n]; rxCq = new long[n]; rxSg = new long[n];
        txHead = new int[n]; rxHead = new int[n]; txCqTail = new int[n]; rxCqTail = new int[n];
        txColor = new boolean[n]; rxColor = new boolean[n];
        for (int i = 0; i < n; i++) {
            int q = i;
            txRing[i] = guest.alloc(DEPTH * 16L);
            txCq[i] = guest.alloc(DEPTH * 16L);
            txSg[i] = guest.alloc(DEPTH * 256L);
            rxRing[i] = guest.alloc(DEPTH * 16L);
            rxCq[i] = guest.alloc(DEPTH * 16L);
            rxSg[i] = guest.alloc(DEPTH * 128L);
            txColor[i] = rxColor[i] = true;
            unmaskAdminq();
            check(drv.adminq(s -> new Cmd.QInit().wrap(Driver.op(s, Opcode.Q_INIT), 0).type(3).ver(1).index(q)
                    .intrIndex(1 + q).flags(Cmd.QInit.F_IRQ | Cmd.QInit.F_SG).ringSize(DEPTH_LOG2)
                    .ringBase(txRing[q]).cqRingBase(txCq[q]).sgRingBase(txSg[q])));
            check(drv.adminq(s -> new Cmd.QInit().wrap(Driver.op(s, Opcode.Q_INIT), 0).type(2).ver(0).index(q)
                    .intrIndex(1 + q).flags(Cmd.QInit.F_IRQ | Cmd.QInit.F_SG).ringSize(DEPTH_LOG2)
                    .ringBase(rxRing[q]).cqRingBase(rxCq[q]).sgRingBase(rxSg[q])));
            drv.write32(Bar0.INTR_CTRL + 32L * (1 + q) + Bar0.INTR_MASK_ASSERT, 1);
            drv.write32(Bar0.INTR_CTRL + 32L * (1 + q) + Bar0.INTR_MASK, 0);
        }
        check(drv.adminq(s -> new Cmd.RxModeSet().wrap(Driver.op(s, Opcode.RX_MODE_SET), 0).rxMode(0x7)));
        for (int i = 0; i < n; i++) {
            int q = i;
            if (fillRx) {
                postRx(q, DEPTH - 1);
            }
            check(drv.adminq(s -> new Cmd.QControl().wrap(Driver.op(s, Opcode.Q_CONTROL), 0).type(2).index(q).oper(1)));
            check(drv.adminq(s -> new Cmd.QControl().wrap(Driver.op(s, Opcode.Q_CONTROL), 0).type(3).index(q).oper(1)));
        }
    }

    static void check(MemorySegment comp) {
        Driver.check(Driver.status(comp), "admin command");
    }

    void unmaskAdminq() {
        drv.write32(Bar0.INTR_CTRL + Bar0.INTR_CREDITS, Bar0.CRED_UNMASK);
    }

    long rxBuffer(int q, int slot) {
        return rxBufBase[q] + (long) slot * BUF;
    }

    long[] rxBufBase;

    /** Posts {@code count} RX buffers of BUF bytes on queue q and rings its doorbell once. */
    void postRx(int q, int count) {
        if (rxBufBase == null) {
            rxBufBase = new long[rxRing.length];
        }
        if (rxBufBase[q] == 0) {
            rxBufBase[q] = guest.alloc((long) DEPTH * BUF);
        }
        for (int k = 0; k < count; k++) {
            int slot = rxHead[q];
            new Ring.RxDesc().wrap(guest.at(rxRing[q] + slot * 16L, 16), 0)
                    .opcode(Ring.RxDesc.OPCODE_SIMPLE).len(BUF).addr(rxBuffer(q, slot));
            rxHead[q] = (slot + 1) & (DEPTH - 1);
        }
        drv.doorbell(0, 2, Ring.Doorbell.encode(q, 0, rxHead[q]));
    }

    /** Posts one TX frame: head buffer plus optional SG pieces; rings the doorbell. */
    int postTx(int q, byte[]... pieces) {
        int slot = txHead[q];
        long head = guest.alloc(pieces[0].length);
        MemorySegment.copy(MemorySegment.ofArray(pieces[0]), 0, guest.at(head, pieces[0].length), 0, pieces[0].length);
        for (int k = 1; k < pieces.length; k++) {
            long a = guest.alloc(pieces[k].length);
            MemorySegment.copy(MemorySegment.ofArray(pieces[k]), 0, guest.at(a, pieces[k].length), 0, pieces[k].length);
            new Ring.SgElem().wrap(guest.at(txSg[q] + slot * 256L + (k - 1) * 16L, 16), 0).addr(a).len(pieces[k].length);
        }
        new TxDesc().wrap(guest.at(txRing[q] + slot * 16L, 16), 0)
                .cmd(TxDesc.encode(TxDesc.OPCODE_CSUM_NONE, 0, pieces.length - 1, head)).len(pieces[0].length);
        txHead[q] = (slot + 1) & (DEPTH - 1);
        drv.doorbell(0, 3, Ring.Doorbell.encode(q, 0, txHead[q]));
        return slot;
    }

    /** The next RX completion of queue q if its color matches, else null. */
    RxComp nextRx(int q) {
        RxComp c = new RxComp().wrap(guest.at(rxCq[q] + rxCqTail[q] * 16L, 16), 0);
        if (c.color() != rxColor[q]) {
            return null;
        }
        rxCqTail[q] = (rxCqTail[q] + 1) & (DEPTH - 1);
        if (rxCqTail[q] == 0) {
            rxColor[q] = !rxColor[q];
        }
        return c;
    }

    TxComp nextTx(int q) {
        TxComp c = new TxComp().wrap(guest.at(txCq[q] + txCqTail[q] * 16L, 16), 0);
        if (c.color() != txColor[q]) {
            return null;
        }
        txCqTail[q] = (txCqTail[q] + 1) & (DEPTH - 1);
        if (txCqTail[q] == 0) {
            txColor[q] = !txColor[q];
        }
        return c;
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
    void txGathersHeadAndSgIntoOneFrame() {
        start("compat");
        open(1, true);
        byte[] f = udpFrame(1000, 300);
        byte[] a = java.util.Arrays.copyOfRange(f, 0, 50), b = java.util.Arrays.copyOfRange(f, 50, 200),
                c = java.util.Arrays.copyOfRange(f, 200, f.length);
        long before = guest.count(1);
        int slot = postTx(0, a, b, c);
        assertThat(sent).hasSize(1);
        assertThat(sent.get(0)).isEqualTo(f);
        TxComp comp = nextTx(0);
        assertThat(comp).isNotNull();
        assertThat(comp.compIndex()).isEqualTo(slot);
        assertThat(guest.count(1)).isEqualTo(before + 1);
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_PACKETS)).isEqualTo(1);
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_BYTES)).isEqualTo(f.length);
    }

    @Test
    void txWithoutSinkIsCompletedAndCounted() {
        start("compat");
        open(1, true);
        dev.frameSink(null);
        for (int i = 0; i < 3 * DEPTH; i++) {
            int slot = postTx(0, udpFrame(i, 10));
            TxComp c = nextTx(0);
            assertThat(c).as("completion %d", i).isNotNull();
            assertThat(c.compIndex()).isEqualTo(slot);
            // The driver returns credits with UNMASK after its NAPI poll.
            drv.write32(Bar0.INTR_CTRL + 32 + Bar0.INTR_CREDITS, 1 | Bar0.CRED_UNMASK | Bar0.CRED_RESET_COALESCE);
        }
        assertThat(dev.lif().stats().get(EthStats.Device.TX_DISCARDED)).isEqualTo(3L * DEPTH);
        assertThat(sent).isEmpty();
    }

    @Test
    void txClaimerTakesFramesBeforeTheSink() {
        start("compat");
        open(1, true);
        // Claims UDP frames from odd source ports.
        dev.addTxClaimer(f -> (f.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 35) & 1) == 1);
        postTx(0, udpFrame(1, 10));
        postTx(0, udpFrame(2, 10));
        assertThat(sent).hasSize(1);
        assertThat(dev.lif().stats().get(EthStats.Device.TX_CLAIMED)).isEqualTo(1);
    }

    @Test
    void rxFillsPostedBuffersWithCompletions() {
        start("compat");
        open(1, true);
        byte[] f = udpFrame(7, 100);
        long before = guest.count(1);
        assertThat(dev.receive(seg(f))).isTrue();
        RxComp c = nextRx(0);
        assertThat(c).isNotNull();
        assertThat(c.status()).isZero();
        assertThat(c.compIndex()).isEqualTo(0);
        assertThat(c.len()).isEqualTo(f.length);
        assertThat(c.csumFlags() & 0x80).as("CSUM_F_CALC clear").isZero();
        assertThat(c.pktType()).isEqualTo(RxComp.PKT_TYPE_IPV4_UDP);
        assertThat(guest.at(rxBuffer(0, 0), f.length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(f);
        assertThat(guest.count(1)).isEqualTo(before + 1);
    }

    @Test
    void rxDropsWhenNoBufferPosted() {
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
    void rxUsesSgElementsForLongFrames() {
        start("compat");
        open(1, false);
        long head = guest.alloc(512), more = guest.alloc(4096);
        new Ring.RxDesc().wrap(guest.at(rxRing[0], 16), 0).opcode(Ring.RxDesc.OPCODE_SG).len(512).addr(head);
        new Ring.SgElem().wrap(guest.at(rxSg[0], 16), 0).addr(more).len(4096);
        rxHead[0] = 1;
        drv.doorbell(0, 2, Ring.Doorbell.encode(0, 0, 1));
        byte[] f = udpFrame(3, 1500);
        assertThat(dev.receive(seg(f))).isTrue();
        RxComp c = nextRx(0);
        assertThat(c.status()).isZero();
        assertThat(c.numSgElems()).isEqualTo(1);
        assertThat(c.len()).isEqualTo(f.length);
        byte[] got = new byte[f.length];
        MemorySegment.copy(guest.at(head, 512), 0, MemorySegment.ofArray(got), 0, 512);
        MemorySegment.copy(guest.at(more, f.length - 512), 0, MemorySegment.ofArray(got), 512, f.length - 512);
        assertThat(got).isEqualTo(f);
    }

    @Test
    void oneFlowOneQueueAcrossEnabledQueues() {
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
    void interruptLatchesWhileMaskedAndFiresOnUnmask() {
        start("compat");
        open(1, true);
        int intr = 1;
        guest.msix.clear();
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr)).isEqualTo(1); // fired, then auto-masked (mask_assert)
        assertThat(drv.read32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_MASK)).isEqualTo(1);
        dev.receive(seg(udpFrame(1, 10)));
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr)).isEqualTo(1); // latched, not fired
        assertThat(dev.interruptController().pending(intr)).isTrue();
        assertThat(drv.read32(Bar0.INTR_STATUS) & 1 << intr).isNotZero();
        // NAPI still busy: credits without UNMASK do not fire.
        drv.write32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_CREDITS, 2 | Bar0.CRED_RESET_COALESCE);
        assertThat(guest.count(intr)).isEqualTo(1);
        // NAPI done: credits with UNMASK deliver the latched interrupt once, and mask again.
        drv.write32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_CREDITS, 1 | Bar0.CRED_UNMASK);
        assertThat(guest.count(intr)).isEqualTo(2);
        assertThat(drv.read32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_MASK)).isEqualTo(1);
        // Unmasking with nothing pending fires nothing, and outstanding credits never re-fire.
        drv.write32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_CREDITS, Bar0.CRED_UNMASK);
        assertThat(guest.count(intr)).isEqualTo(2);
        assertThat(drv.read32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_CREDITS)).isZero();
        // Explicit mask write 1 then 0 (ionic_intr_mask) also delivers a latch.
        drv.write32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_MASK, 1);
        dev.receive(seg(udpFrame(1, 10)));
        assertThat(guest.count(intr)).isEqualTo(2);
        drv.write32(Bar0.INTR_CTRL + 32L * intr + Bar0.INTR_MASK, 0);
        assertThat(guest.count(intr)).isEqualTo(3);
    }

    @Test
    void linkChangeUpdatesLifInfoThenPostsEvent() {
        start("compat");
        MemorySegment li = guest.at(drv.lifInfo, 4096);
        assertThat(Le.u16(li, 266)).isEqualTo(1);
        unmaskAdminq(); // delivers what the bring-up latched (and masks again)
        unmaskAdminq();
        long before = guest.count(0);
        dev.setLink(false);
        assertThat(Le.u16(li, 266)).isEqualTo(2);
        MemorySegment ev = guest.at(drv.notifyRing + 4096, 64);
        Ring.NotifyEvent e = new Ring.NotifyEvent().wrap(ev, 0);
        assertThat(e.eid()).isEqualTo(1);
        assertThat(e.ecode()).isEqualTo(Ring.NotifyEvent.LINK_CHANGE);
        assertThat(guest.count(0)).isEqualTo(before + 1);
        unmaskAdminq();
        dev.setLink(true);
        assertThat(Le.u16(li, 266)).isEqualTo(1);
        assertThat(Le.u32(li, 268)).isEqualTo(100000);
        assertThat(new Ring.NotifyEvent().wrap(guest.at(drv.notifyRing + 4096 + 64, 64), 0).eid()).isEqualTo(2);
        assertThat(Le.u16(guest.at(drv.portInfo, 4096), 265)).isEqualTo(1); // link_down_count
    }

    @Test
    void statisticsBlocksAgreeWithTraffic() {
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
        MemorySegment ls = guest.at(drv.lifInfo + 320, 1024);
        LifStats l = new LifStats().wrap(ls, 0);
        assertThat(l.get(LifStats.TX_UCAST_PACKETS)).isEqualTo(5);
        assertThat(l.get(LifStats.TX_UCAST_BYTES)).isEqualTo(5L * udpFrame(0, 100).length);
        assertThat(l.get(LifStats.RX_UCAST_PACKETS)).isEqualTo(1);
        assertThat(l.get(LifStats.RX_UCAST_BYTES)).isEqualTo(udpFrame(1, 60).length);
        assertThat(l.get(LifStats.RX_BCAST_PACKETS)).isEqualTo(1);
        PortStats p = new PortStats().wrap(guest.at(drv.portInfo + 576, 1024), 0);
        assertThat(p.get(PortStats.FRAMES_TX_OK)).isEqualTo(5);
        assertThat(p.get(PortStats.FRAMES_RX_OK)).isEqualTo(2);
        assertThat(p.get(PortStats.FRAMES_RX_BROADCAST)).isEqualTo(1);
        // RESET zeroes every counter.
        assertThat(drv.devcmd(drv.cmd(Opcode.RESET))).isZero();
        assertThat(dev.lif().stats().get(EthStats.Lif.TX_UCAST_PACKETS)).isZero();
    }

    @Test
    void queuedFramesWaitForBuffersAndBlockTheOnesBehind() {
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
    void rxLostFaultChangesExactlyTheNamedFrames() {
        start("compat", "rx-lost:every=3");
        open(1, true);
        List<Boolean> got = new ArrayList<>();
        for (int i = 1; i <= 9; i++) {
            got.add(dev.receive(seg(udpFrame(1, 10))));
        }
        assertThat(got).containsExactly(true, true, false, true, true, false, true, true, false);
        assertThat(dev.faults().injectedCount(FaultKind.RX_LOST)).isEqualTo(3);
        assertThat(dev.lif().stats().get(EthStats.Device.RX_DELIVERED)).isEqualTo(6);
        // Lost frames leave no guest-visible trace.
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_UCAST_DROP_PACKETS)).isZero();
    }

    @Test
    void rxNobufFaultDropsAsIfNoBuffer() {
        start("compat", "rx-nobuf:from=2,count=2");
        open(1, true);
        List<Boolean> got = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            got.add(dev.receive(seg(udpFrame(1, 10))));
        }
        assertThat(got).containsExactly(true, false, false, true, true);
        assertThat(dev.lif().stats().get(EthStats.Lif.RX_QUEUE_EMPTY)).isEqualTo(2);
        assertThat(dev.faults().injectedCount(FaultKind.RX_NOBUF)).isEqualTo(2);
        // Buffers were not consumed by the dropped frames: completions are 0, 1, 2.
        assertThat(nextRx(0).compIndex()).isEqualTo(0);
        assertThat(nextRx(0).compIndex()).isEqualTo(1);
        assertThat(nextRx(0).compIndex()).isEqualTo(2);
    }

    @Test
    void txDropFaultCompletesButNeverSends() {
        start("compat", "tx-drop:burst=2/5");
        open(1, true);
        for (int i = 1; i <= 10; i++) {
            int slot = postTx(0, udpFrame(i, 10));
            assertThat(nextTx(0).compIndex()).isEqualTo(slot);
            drv.write32(Bar0.INTR_CTRL + 32 + Bar0.INTR_CREDITS, Bar0.CRED_UNMASK);
        }
        // Frames 1, 2, 6, 7 dropped; 3, 4, 5, 8, 9, 10 sent.
        assertThat(sent).hasSize(6);
        assertThat(sent).extracting(b -> (int) b[35] & 0xff).containsExactly(3, 4, 5, 8, 9, 10);
        assertThat(dev.faults().injectedCount(FaultKind.TX_DROP)).isEqualTo(4);
    }

    @Test
    void resetAndDetachReturnToPowerOn() {
        start("compat", "rx-lost:seq=1");
        open(2, true);
        dev.queueForGuest(seg(udpFrame(1, 10)));
        dev.receive(seg(udpFrame(1, 10)));
        dev.reset();
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
        assertThat(drv.read32(Bar0.FW_HEARTBEAT)).isZero();
        assertThat(dev.configSpace().busMasterEnabled()).isFalse();
        // Doorbells to the old queues are refused, not served.
        drv.doorbell(0, 3, Ring.Doorbell.encode(0, 0, 1));
        assertThat(sent).isEmpty();
        // The whole bring-up works again; the fault sequence starts over.
        drv.aqHead = drv.aqTail = 0;
        drv.aqColor = true;
        drv.probeToAdminq();
        drv.probeAdminqCommands();
        rxBufBase = null;
        rxHead = null;
        open(1, true);
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse(); // rx-lost seq=1 again
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isTrue();
        dev.detach();
        assertThat(dev.lif().lifInfoPa()).isZero();
        assertThat(dev.receive(seg(udpFrame(1, 10)))).isFalse();
        dev.attach(guest);
    }

    @Test
    void maliciousDoorbellsAreRefusedNotThrown() {
        start("compat");
        open(1, true);
        drv.doorbell(0, 3, Ring.Doorbell.encode(0, 0, 0xffff)); // index past the ring
        drv.doorbell(0, 3, Ring.Doorbell.encode(500, 0, 1));     // queue past the count
        drv.doorbell(0, 9, Ring.Doorbell.encode(0, 0, 1));       // the RDMA EQ type has no doorbell
        drv.doorbell(0, 12, Ring.Doorbell.encode(0, 0, 1));      // a type nothing serves
        drv.doorbell(7, 1, Ring.Doorbell.encode(0, 0, 1));       // notify queue has no doorbell
        // A TX descriptor pointing outside guest memory completes with an error count, no frame.
        int slot = txHead[0];
        new TxDesc().wrap(guest.at(txRing[0] + slot * 16L, 16), 0)
                .cmd(TxDesc.encode(0, 0, 0, 0x7_0000_0000L)).len(100);
        txHead[0] = slot + 1;
        drv.doorbell(0, 3, Ring.Doorbell.encode(0, 0, txHead[0]));
        assertThat(nextTx(0).compIndex()).isEqualTo(slot);
        assertThat(sent).isEmpty();
        assertThat(dev.refusals().count("ionic-db-index")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-db-qid")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-db-qtype")).isEqualTo(1);
        assertThat(dev.refusals().count("rdma-db-eq")).isEqualTo(1);
        assertThat(dev.refusals().count("ionic-tx-dma")).isEqualTo(1);
        // Every page decodes the same: page 5 reaches TX queue 0 too.
        postTx(0, udpFrame(1, 10));
        assertThat(sent).hasSize(1);
    }

    @Test
    void doorbellAsTwoDwordsIsJoined() {
        start("compat");
        open(1, true);
        int slot = txHead[0];
        long head = guest.alloc(64);
        new TxDesc().wrap(guest.at(txRing[0] + slot * 16L, 16), 0).cmd(TxDesc.encode(0, 0, 0, head)).len(60);
        long v = Ring.Doorbell.encode(0, 0, slot + 1);
        MemorySegment lo = arena.allocate(4), hi = arena.allocate(4);
        Le.put32(lo, 0, (int) v);
        Le.put32(hi, 0, (int) (v >>> 32));
        drv.bar2.write(3 * 8, lo);
        assertThat(sent).isEmpty();
        drv.bar2.write(3 * 8 + 4, hi);
        assertThat(sent).hasSize(1);
    }
}
