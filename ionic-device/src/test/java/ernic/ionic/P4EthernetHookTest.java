package ernic.ionic;

import ernic.common.InternetChecksum;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.p4hook.P4Scope;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.EthQueue;
import ernic.model.IonicDriverModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static ernic.model.IonicDriverModel.RX_MODE_SET;
import static ernic.model.IonicDriverModel.command;
import static ernic.model.IonicDriverModel.expectOk;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The P4 engine's Ethernet hook, driven by the driver model: every frame between the guest and the TAP goes
 * through the program (port 0 the TAP, 1 the guest, 511 drop), and a frame an in-process endpoint claims
 * never reaches it. Expected frames are built here by hand from what each program is written to do.
 */
class P4EthernetHookTest {
    static final int DEPTH_LOG2 = 6, BUF = 2048;
    static final long GUEST_MAC = 0x02_00_00_ee_00_01L;

    IonicDevice dev;
    ModelGuest guest;
    IonicDriverModel drv;
    EthQueue tx, rx;
    long rxBufs;
    final List<byte[]> wire = new ArrayList<>();
    final Arena arena = Arena.ofAuto();

    /** The P4 engine's test programs (module p4-engine). */
    static final Path PROGRAMS = Path.of("..", "p4-engine", "src", "test", "resources", "p4");

    static String resource(String name) {
        try {
            return Files.readString(PROGRAMS.resolve(name));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    void start(P4Hooks hooks) throws IOException {
        dev = new IonicDevice(ProfileLoader.load("compat"), FaultPlan.parse(List.of()));
        if (hooks != null) {
            dev.p4(hooks);
        }
        guest = new ModelGuest(dev, 32 << 20);
        drv = guest.drv;
        drv.bringUp();
        drv.probeLif();
        dev.lif().sink(f -> wire.add(f.toArray(ValueLayout.JAVA_BYTE)));
        tx = EthQueue.tx(drv, 1, 0, 1, DEPTH_LOG2);
        rx = EthQueue.rx(drv, 0, 0, 1, DEPTH_LOG2);
        ByteBuffer mode = command(RX_MODE_SET);
        mode.putShort(4, (short) 0x7);
        expectOk(drv.adminq(mode), "RX_MODE_SET");
        rxBufs = drv.alloc((long) (1 << DEPTH_LOG2) * BUF);
        rx.postRx(rxBufs, BUF, 8);
        assertThat(rx.control(true)).isZero();
        assertThat(tx.control(true)).isZero();
    }

    @AfterEach
    void tearDown() {
        if (guest != null) {
            guest.close();
        }
    }

    void send(byte[] frame) throws IOException {
        tx.transmit(frame);
        assertThat(tx.next()).isNotNull(); // the guest's TX completes whatever the program does with the frame
    }

    boolean fromTap(byte[] frame) {
        MemorySegment s = arena.allocate(frame.length);
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, s, 0, frame.length);
        return dev.receive(s);
    }

    /** The next frame the guest received, or null. */
    byte[] received() {
        EthQueue.Comp c = rx.next();
        if (c == null) {
            return null;
        }
        assertThat(c.status()).isZero();
        return guest.at(rxBufs + (long) c.compIndex() * BUF, c.len()).toArray(ValueLayout.JAVA_BYTE);
    }

    static byte[] frame(long dst, long src, int etherType, int payload) {
        byte[] f = new byte[14 + payload];
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (dst >>> 40 - 8 * i);
            f[6 + i] = (byte) (src >>> 40 - 8 * i);
        }
        f[12] = (byte) (etherType >> 8);
        f[13] = (byte) etherType;
        for (int i = 0; i < payload; i++) {
            f[14 + i] = (byte) (i * 13 + 1);
        }
        return f;
    }

    long counter(String name) {
        return dev.counters().getOrDefault(name, -1L);
    }

    @Test
    void thePassThroughProgramCarriesEveryFrameToTheOtherSideUnchanged() throws IOException {
        start(P4Hooks.load(null, null, null, null, P4Scope.NONE));
        byte[] out = frame(0x02_42_00_00_00_09L, GUEST_MAC, 0x0800, 100);
        send(out);
        assertThat(wire).hasSize(1);
        assertThat(wire.get(0)).isEqualTo(out);
        byte[] in = frame(GUEST_MAC, 0x02_42_00_00_00_09L, 0x86dd, 60);
        assertThat(fromTap(in)).isTrue();
        assertThat(received()).isEqualTo(in);
        assertThat(counter("p4.eth.tx_to_tap")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_to_guest")).isEqualTo(1);
        assertThat(counter("p4.frames_in")).isEqualTo(2);
    }

    /**
     * l2_switch.json: table dmac on the destination MAC; entries 00:..:02 -> port 1 (the guest), 00:..:01 ->
     * port 0 (the TAP); anything else misses and the default action drops it.
     */
    @Test
    void anL2ProgramForwardsBouncesAndDropsByDestinationMac() throws IOException {
        start(P4Hooks.load(resource("l2_switch.json"), "l2_switch.json", resource("l2_switch.entries"),
                "l2_switch.entries", P4Scope.NONE));
        byte[] toTap = frame(0x01L, GUEST_MAC, 0x0800, 50);
        byte[] toGuest = frame(0x02L, GUEST_MAC, 0x0800, 50);
        byte[] unknown = frame(0x03L, GUEST_MAC, 0x0800, 50);
        send(toTap);
        send(toGuest);
        send(unknown);
        assertThat(wire).hasSize(1);
        assertThat(wire.get(0)).isEqualTo(toTap);
        assertThat(received()).isEqualTo(toGuest); // egress port 1: back to the guest that sent it
        assertThat(received()).isNull();
        // From the TAP: 00:..:02 reaches the guest, 00:..:01 goes back out, anything else is dropped.
        assertThat(fromTap(frame(0x02L, 0x0aL, 0x0800, 40))).isTrue();
        assertThat(received()).isEqualTo(frame(0x02L, 0x0aL, 0x0800, 40));
        assertThat(fromTap(frame(0x01L, 0x0aL, 0x0800, 40))).isTrue();
        assertThat(wire).hasSize(2);
        assertThat(wire.get(1)).isEqualTo(frame(0x01L, 0x0aL, 0x0800, 40));
        assertThat(fromTap(frame(GUEST_MAC, 0x0aL, 0x0800, 40))).isFalse();
        assertThat(received()).isNull();
        assertThat(counter("p4.eth.tx_to_tap")).isEqualTo(1);
        assertThat(counter("p4.eth.tx_to_guest")).isEqualTo(1);
        assertThat(counter("p4.eth.tx_dropped")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_to_guest")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_to_tap")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_dropped")).isEqualTo(1);
        assertThat(counter("p4.drops")).isEqualTo(2);
        long[] hits = dev.p4().engine().tableHits(), misses = dev.p4().engine().tableMisses();
        int dmac = dev.p4().engine().tableNames().indexOf("MyIngress.dmac");
        assertThat(hits[dmac]).isEqualTo(4);
        assertThat(misses[dmac]).isEqualTo(2);
    }

    /**
     * ipv4_router.json routes 10.1.0.0/16 to port 0 with dmac 00:00:00:00:0a:02, smac = the old dmac, TTL - 1
     * and the header checksum recomputed (RFC 1071, computed here by hand).
     */
    @Test
    void aRouterProgramRewritesTheFrameTheTapSees() throws IOException {
        start(P4Hooks.load(resource("ipv4_router.json"), "ipv4_router.json", resource("ipv4_router.entries"),
                "ipv4_router.entries", P4Scope.NONE));
        byte[] in = ipv4Frame(0x00_00_00_00_0a_ffL, GUEST_MAC, new byte[] {10, 1, 9, 9}, 64);
        send(in);
        byte[] expected = ipv4Frame(0x00_00_00_00_0a_02L, 0x00_00_00_00_0a_ffL, new byte[] {10, 1, 9, 9}, 63);
        assertThat(wire).hasSize(1);
        assertThat(wire.get(0)).isEqualTo(expected);
        // 10.1.2.0/24 is dropped by its entry.
        send(ipv4Frame(0x00_00_00_00_0a_ffL, GUEST_MAC, new byte[] {10, 1, 2, 3}, 64));
        assertThat(wire).hasSize(1);
        assertThat(counter("p4.eth.tx_dropped")).isEqualTo(1);
    }

    /**
     * v1model_features.json: a frame to 00:..:0e goes to the guest and is cloned to mirror session 5 (port 0), the
     * clone's source rewritten to 02:00:00:00:c1:0e by egress (make_fixtures.py): the hook sends both, the frame's own
     * output first; an unknown source MAC makes a digest, counted by the engine.
     */
    @Test
    void clonesGoOutOfTheirSessionsPortAndDigestsAreCounted() throws IOException {
        start(P4Hooks.load(resource("v1model_features.json"), "v1model_features.json",
                resource("v1model_features.entries"), "v1model_features.entries", P4Scope.NONE));
        byte[] mirrored = frame(0x0eL, 0x0aL, 0x88b8, 40);
        assertThat(fromTap(mirrored)).isTrue();
        assertThat(received()).isEqualTo(mirrored);
        assertThat(wire).containsExactly(frame(0x0eL, 0x02_00_00_00_c1_0eL, 0x88b8, 40));
        assertThat(counter("p4.clones")).isEqualTo(1);
        assertThat(counter("p4.eth.copies_sent")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_to_guest")).isEqualTo(1);
        assertThat(counter("p4.eth.rx_to_tap")).isEqualTo(1);
        assertThat(fromTap(frame(0x0bL, 0x0cL, 0x88b8, 40))).isTrue();
        assertThat(counter("p4.digests")).isEqualTo(1);
    }

    /**
     * multicast.json and its entries (p4-engine's worked example, make_programs.py): a broadcast goes to group 1, rid
     * 1 on ports 0 and 1 and rid 2 on ports 1 and 2; egress stamps trace = (egress_rid, instance_type) and drops the
     * copy to the port the frame came in on; port 2 does not exist. A frame to 00:..:0e from the TAP goes to port 1 and its
     * ingress clone, through session 3, to group 2 (rid 9, port 1).
     */
    @Test
    void multicastCopiesLeaveByEveryPortOfTheGroupInOrder() throws IOException {
        start(P4Hooks.load(resource("multicast.json"), "multicast.json", resource("multicast.entries"),
                "multicast.entries", P4Scope.NONE));
        long bc = 0xff_ff_ff_ff_ff_ffL;
        assertThat(fromTap(traced(bc, 0, 0))).isTrue();
        assertThat(received()).isEqualTo(traced(bc, 1, 5)); // port 1, rid 1
        assertThat(received()).isEqualTo(traced(bc, 2, 5)); // port 1, rid 2
        assertThat(received()).isNull();
        assertThat(wire).as("the copy to port 0 is pruned: the frame came from there").isEmpty();
        send(traced(bc, 0, 0));
        assertThat(wire).containsExactly(traced(bc, 1, 5));
        assertThat(received()).as("the copies to port 1 are pruned: the frame came from the guest").isNull();
        assertThat(fromTap(traced(0x0eL, 0, 0))).isTrue();
        assertThat(received()).isEqualTo(traced(0x0eL, 0, 0)); // its own output first
        assertThat(received()).isEqualTo(traced(0x0eL, 9, 1)); // then the clone
        assertThat(counter("p4.eth.rx_to_guest")).isEqualTo(4);
        assertThat(counter("p4.eth.tx_to_tap")).isEqualTo(1);
        assertThat(counter("p4.eth.copies_sent")).isEqualTo(4);
        assertThat(counter("p4.eth.rx_dropped") + counter("p4.eth.tx_dropped")).isZero();
        assertThat(counter("p4.multicast_copies")).isEqualTo(9);
        assertThat(counter("p4.drops_no_such_port")).isEqualTo(2);
    }

    /** Ethernet (etherType 0x88b5) from 00:..:0c, the trace header (rid, itype) and 20 bytes. */
    static byte[] traced(long dst, int rid, int itype) {
        byte[] f = frame(dst, 0x0cL, 0x88b5, 22);
        f[14] = (byte) rid;
        f[15] = (byte) itype;
        return f;
    }

    /**
     * meters.json and its entries: flow 00:..:0a's direct meter of packets is 1 packet/s burst 1 (committed), 2
     * packets/s burst 2 (peak); the colour goes into the frame's first byte after Ethernet. The meters read the
     * device's clock: with a mock ticker, frames at 0, 0.1 and 0.2 s are GREEN, YELLOW and RED, and 1.25 s later
     * GREEN again (the same times and colours as make_fixtures.py works out for p4 run).
     */
    @Test
    void metersReadTheDevicesClock() throws IOException {
        start(P4Hooks.load(resource("meters.json"), "meters.json", resource("meters.entries"), "meters.entries",
                P4Scope.NONE));
        io.netty.util.concurrent.MockTicker clock = io.netty.util.concurrent.Ticker.newMockTicker();
        dev.clock(clock);
        int[] colours = new int[4];
        long[] at = {0, 100, 200, 1250};
        long now = 0;
        for (int i = 0; i < 4; i++) {
            clock.advance(at[i] - now, java.util.concurrent.TimeUnit.MILLISECONDS);
            now = at[i];
            assertThat(fromTap(frame(0x0bL, 0x0aL, 0x88b5, 50))).isTrue();
            colours[i] = received()[14];
        }
        assertThat(colours).containsExactly(0, 1, 2, 0);
    }

    /** Ethernet + IPv4 (UDP, 8 bytes of payload) from 192.0.2.1 with a correct header checksum. */
    static byte[] ipv4Frame(long dst, long src, byte[] dstIp, int ttl) {
        byte[] f = frame(dst, src, 0x0800, 20 + 8);
        byte[] h = {0x45, 0, 0, 28, 0x12, 0x34, 0x40, 0, (byte) ttl, 17, 0, 0, (byte) 192, 0, 2, 1,
                dstIp[0], dstIp[1], dstIp[2], dstIp[3]};
        int sum = InternetChecksum.of(h, 0, 20, 0);
        h[10] = (byte) (sum >> 8);
        h[11] = (byte) sum;
        System.arraycopy(h, 0, f, 14, 20);
        return f;
    }

    @Test
    void aFrameAnInProcessEndpointClaimsNeverReachesTheProgram() throws IOException {
        start(P4Hooks.load(resource("l2_switch.json"), "l2_switch.json", null, null, P4Scope.NONE));
        List<byte[]> claimed = new ArrayList<>();
        dev.lif().addTxClaimer(f -> {
            claimed.add(f.toArray(ValueLayout.JAVA_BYTE));
            return true;
        });
        dev.lif().addRxClaimer(f -> true);
        byte[] f = frame(0x01L, GUEST_MAC, 0x0800, 30);
        send(f);
        assertThat(fromTap(frame(GUEST_MAC, 0x0aL, 0x0800, 30))).isTrue();
        assertThat(claimed).hasSize(1);
        assertThat(claimed.get(0)).isEqualTo(f);
        assertThat(wire).isEmpty();
        assertThat(counter("p4.frames_in")).isZero();
        assertThat(counter("p4.eth.tx_frames")).isZero();
        assertThat(counter("p4.eth.rx_frames")).isZero();
    }

    /** Power-on zeroes the counters and the tables' hits and misses; the entries stay (docs/p4.md). */
    @Test
    void powerOnZeroesTheCountsButKeepsTheEntries() throws IOException {
        start(P4Hooks.load(resource("l2_switch.json"), "l2_switch.json", resource("l2_switch.entries"),
                "l2_switch.entries", P4Scope.NONE));
        send(frame(0x01L, GUEST_MAC, 0x0800, 50));
        assertThat(counter("p4.eth.tx_to_tap")).isEqualTo(1);
        dev.reset();
        assertThat(counter("p4.eth.tx_to_tap")).isZero();
        assertThat(counter("p4.frames_in")).isZero();
        assertThat(dev.p4().engine().tableHits()).containsOnly(0L);
        assertThat(fromTap(frame(0x01L, 0x0aL, 0x0800, 40))).isTrue(); // the entry 00:..:01 -> port 0 is still there
        assertThat(wire).hasSize(2);
    }

    @Test
    void withoutTheEngineNoP4CountersExist() throws IOException {
        start(null);
        send(frame(0x01L, GUEST_MAC, 0x0800, 30));
        assertThat(wire).hasSize(1);
        assertThat(dev.counters().keySet()).noneMatch(k -> k.startsWith("p4."));
        assertThat(Arrays.asList(dev.p4())).containsOnlyNulls();
    }
}
