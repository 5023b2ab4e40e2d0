package ernic.ionic;

import ernic.mesh.Gid;
import ernic.model.EthQueue;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminCqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static ernic.ionic.ModelGuest.HDR_LEN;
import static ernic.ionic.RemoteDataPathTest.IP_A;
import static ernic.ionic.RemoteDataPathTest.IP_B;
import static ernic.ionic.RemoteDataPathTest.LOG2;
import static ernic.ionic.RemoteDataPathTest.MR;
import static ernic.ionic.RemoteDataPathTest.VA;
import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The device's part of the mesh's GID rules, on {@link RemoteDataPathTest}'s two devices joined by a
 * {@link Loopback} (mock clock): what the device tells the mesh its guest uses as its own source (the frames the
 * guest transmits, its header templates; never frames from the wire nor destinations), which GIDs live QPs and
 * AHs hold (they do not age), and the MODIFY_QP to RTR that waits for a GID's owner: completed when the mesh
 * names one, refused with BAD_ATTR after 1 s.
 */
class MeshGidTest {
    static final int DEPTH_LOG2 = 6;
    static final long GUEST_MAC = 0x02_00_00_ee_00_01L;
    static final int UNOWNED_IP = 0x0a00_0009; // 10.0.0.9

    final RemoteDataPathTest mesh = new RemoteDataPathTest();
    RemoteDataPathTest.Side a, b;
    Loopback net;
    final Arena arena = Arena.ofAuto();

    @BeforeEach
    void setUp() throws IOException {
        mesh.setUp();
        a = mesh.a;
        b = mesh.b;
        net = mesh.net;
    }

    @AfterEach
    void tearDown() {
        mesh.tearDown();
    }

    static Gid v4(int ip) {
        return Gid.of(0, 0xffff_0000_0000L | ip & 0xffff_ffffL);
    }

    // ---------------------------------------------------------------------------------------------
    // What the device reports as the guest's own

    /** A frame: destination MAC, the guest's MAC, then {@code body} from the EtherType on. */
    static byte[] frame(byte[] body) {
        ByteBuffer f = ByteBuffer.allocate(12 + body.length);
        f.putLong(0, 0x02_00_00_ee_00_02L << 16);
        f.putShort(6, (short) (GUEST_MAC >>> 32)).putInt(8, (int) GUEST_MAC);
        f.put(12, body);
        return f.array();
    }

    /** EtherType IPv4 and a UDP header from {@code src} to {@code dst}. */
    static byte[] ipv4(int src, int dst) {
        ByteBuffer b = ByteBuffer.allocate(2 + 20 + 8);
        b.putShort(0, (short) 0x0800).put(2, (byte) 0x45).put(2 + 8, (byte) 64).put(2 + 9, (byte) 17)
                .putInt(2 + 12, src).putInt(2 + 16, dst);
        return b.array();
    }

    static byte[] ipv6(Gid src, Gid dst) {
        ByteBuffer b = ByteBuffer.allocate(2 + 40 + 8);
        b.putShort(0, (short) 0x86dd).put(2, (byte) 0x60).put(2 + 6, (byte) 17).put(2 + 7, (byte) 64)
                .put(2 + 8, src.toBytes()).put(2 + 24, dst.toBytes());
        return b.array();
    }

    /** An ARP request from {@code spa} for {@code tpa}. */
    static byte[] arp(int spa, int tpa) {
        ByteBuffer b = ByteBuffer.allocate(2 + 28);
        b.putShort(0, (short) 0x0806).putShort(2, (short) 1).putShort(4, (short) 0x0800).put(6, (byte) 6)
                .put(7, (byte) 4).putShort(8, (short) 1).putInt(2 + 14, spa).putInt(2 + 24, tpa);
        return b.array();
    }

    static byte[] vlan(int vid, byte[] inner) {
        ByteBuffer b = ByteBuffer.allocate(4 + inner.length);
        b.putShort(0, (short) 0x8100).putShort(2, (short) vid).put(4, inner);
        return b.array();
    }

    /** Guest A's Ethernet TX queue; each frame is sent through it as the ionic driver posts one. */
    final class Transmitter {
        final IonicDriverModel drv = a.guest.drv;
        final EthQueue tx;

        Transmitter() throws IOException {
            tx = EthQueue.tx(drv, 1, 0, 1, DEPTH_LOG2);
            assertThat(tx.control(true)).isZero();
            a.dev.lif().sink(f -> { });
        }

        void send(byte[] frame) throws IOException {
            tx.transmit(frame);
            assertThat(tx.next()).isNotNull();
        }
    }

    @Test
    void theSourceOfEachFrameTheGuestTransmitsIsReportedAndNothingFromTheWire() throws IOException {
        Transmitter t = mesh.on(Transmitter::new);
        Gid v6src = Gid.parse("2001:db8::5"), v6dst = Gid.parse("2001:db8::6");
        mesh.run(() -> {
            t.send(frame(ipv4(0x0a4e_0005, 0x0a4e_0006)));
            t.send(frame(vlan(7, ipv4(0x0a4e_000b, 0x0a4e_0006))));
            t.send(frame(arp(0x0a4e_0007, 0x0a4e_0008)));
            t.send(frame(ipv6(v6src, v6dst)));
            t.send(frame(new byte[]{(byte) 0x88, (byte) 0xcc, 1, 2, 3, 4})); // LLDP: no address
        });
        assertThat(net.a.learned).as("sources only, in order: never a destination").containsExactly(
                v4(0x0a4e_0005), v4(0x0a4e_000b), v4(0x0a4e_0007), v6src);
        // A frame from the wire (another guest's, or forged to look like one of ours) teaches nothing.
        net.a.learned.clear();
        byte[] fromWire = frame(ipv4(0x0a4e_0042, 0x0a4e_0005));
        MemorySegment s = arena.allocate(fromWire.length);
        MemorySegment.copy(MemorySegment.ofArray(fromWire), 0, s, 0, fromWire.length);
        mesh.run(() -> a.dev.receive(s));
        assertThat(net.a.learned).isEmpty();
    }

    @Test
    void aHeaderTemplateTeachesItsSourceAndItsAhOrQpHoldsTheGid() {
        int src = 0x0a4e_0014, dst = 0x0a4e_0015;
        assertThat(mesh.on(() -> a.rdma.createAh(1, a.guest.ipv4Header(src, dst), HDR_LEN).status())).isZero();
        assertThat(net.a.learned).containsExactly(v4(src));
        assertThat(net.a.inUse.test(v4(src))).as("a live AH's source").isTrue();
        assertThat(net.a.inUse.test(v4(dst))).isFalse();
        assertThat(mesh.on(() -> a.rdma.destroy(OP_DESTROY_AH, 1).status())).isZero();
        assertThat(net.a.inUse.test(v4(src))).as("the AH is gone").isFalse();

        // A connected QP's template at RTR: its source is the guest's, and the QP holds it until destroyed.
        int qpSrc = 0x0a4e_001e;
        net.a.learned.clear();
        mesh.run(() -> a.rcInit(2, LOG2));
        assertThat(mesh.on(() -> a.rdma.modifyQpAv(2, RTR, 0, 3, a.guest.ipv4Header(qpSrc, IP_B), HDR_LEN).status()))
                .isZero();
        assertThat(net.a.learned).containsExactly(v4(qpSrc));
        assertThat(net.a.inUse.test(v4(qpSrc))).isTrue();
        assertThat(mesh.on(() -> a.rdma.destroy(OP_DESTROY_QP, 2).status())).isZero();
        assertThat(net.a.inUse.test(v4(qpSrc))).isFalse();
    }

    // ---------------------------------------------------------------------------------------------
    // The RTR wait

    AdminCqe completion(RemoteDataPathTest.Side s) {
        return mesh.on(s.rdma::adminCompletion);
    }

    @Test
    void anRtrToAGidNoNodeOwnsWaitsOneSecondThenIsRefusedAndAnAhToItIsLocal() {
        mesh.run(() -> a.rcInit(2, LOG2));
        mesh.run(() -> a.rdma.postModifyQpAv(2, RTR, 0, 3, a.guest.ipv4Header(IP_A, UNOWNED_IP), HDR_LEN));
        assertThat(completion(a)).as("waiting for the mesh").isNull();
        mesh.elapse(999);
        assertThat(completion(a)).as("999 ms").isNull();
        mesh.elapse(1);
        AdminCqe refused = completion(a);
        assertThat(refused).isNotNull();
        assertThat(refused.error()).isTrue();
        assertThat(refused.status()).isEqualTo(ASTS_BAD_ATTR);
        assertThat(mesh.on(() -> a.dev.refusals().snapshot())).containsKey("rdma-qp-unowned-gid");
        assertThat(mesh.on(() -> a.dev.counters())).containsEntry("rdma.remote.rtrWaits", 1L);
        // The admin queue goes on; an AH to the GID is created (local: nobody owns it).
        assertThat(mesh.on(() -> a.rdma.createAh(1, a.guest.ipv4Header(IP_A, UNOWNED_IP), HDR_LEN).status())).isZero();
        // The QP is still in INIT, and a later RTR to an owned GID works at once.
        assertThat(mesh.on(() -> a.rdma.modifyQpAv(2, RTR, 0, 3, a.guest.ipv4Header(IP_A, IP_B), HDR_LEN).status()))
                .isZero();
        assertThat(mesh.on(() -> a.dev.counters())).containsEntry("rdma.remote.rtrWaits", 1L);
    }

    @Test
    void anRtrWaitingForAnOwnerCompletesWhenTheMeshNamesOneAndItsQpGoesThere() {
        assertThat(mesh.on(() -> b.rc(3, 2, IP_A))).isZero();
        mesh.run(() -> a.rcInit(2, LOG2));
        mesh.run(() -> a.rdma.postModifyQpAv(2, RTR, 0, 3, a.guest.ipv4Header(IP_A, UNOWNED_IP), HDR_LEN));
        mesh.elapse(500);
        assertThat(completion(a)).isNull();
        // Half a second later node 1's server has learned its guest's address: the manager's update arrives.
        mesh.run(() -> net.own(v4(UNOWNED_IP), 1));
        AdminCqe done = completion(a);
        assertThat(done).isNotNull();
        assertThat(done.error()).isFalse();
        assertThat(mesh.on(() -> a.rdma.modifyQp(2, IB_QP_STATE, RTS, 0, 0).status())).isZero();
        // The QP's peer is node 1: a WRITE lands in guest B's memory.
        mesh.run(() -> {
            u8(a.mem(VA, 1), 0, 0x77);
            a.postSend(2, w -> w.op(WRITE).numSgeKey(1).rdma(VA + 512, MR).length(1).sge(WQE_PLD, 0, VA, 1, MR));
        });
        assertThat(mesh.next(a).error()).isFalse();
        assertThat(mesh.on(() -> u8(b.mem(VA + 512, 1), 0))).isEqualTo(0x77);
        assertThat(mesh.on(() -> a.dev.refusals().snapshot())).doesNotContainKey("rdma-qp-unowned-gid");
    }
}
