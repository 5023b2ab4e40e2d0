package ernic.ionic;

import ernic.counters.Counters;
import ernic.nvmeof.NvmeofAttachment;
import ernic.nvmeof.PathCounter;

import ernic.nvmeof.Namespace;
import ernic.nvmeof.NvmeofCounters;
import ernic.nvmeof.NvmeofOptions;
import ernic.nvmeof.NvmeofTarget;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.RawCqe;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static ernic.ionic.ModelGuest.HDR_LEN;
import static ernic.model.rdma.Fw.*;
import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The NVMe-oF target on the data path, driven by the driver model as the guest's kernel drives it: CM MADs
 * on the GSI QP (QP 1) to the target's address go to its connection manager and the replies come back as UD
 * receives with a synthesised GRH; the QP the CM connected sends command capsules and gets the response
 * capsules in its receives (SEND_INV when the keyed SGL asks), held while no receive is posted; DREQ and
 * DESTROY_QP unbind it. MADs and capsules are built here from the IBTA CM layouts and the NVMe specs.
 */
class NvmeofDataPathTest extends RawVerbsTest {
    static final int GSI = 1, HOST_QP = 2, AH = 1, GSI_QKEY = 0x8001_0000;
    static final int HOST_IP = 0xc0a8_c802, TARGET_IP = 0xc0a8_c801;
    static final int HOST_COMM_ID = 0x1234_5678;
    static final int MR = 1 << 8 | 0x11;
    IonicDriverModel drv;
    final MockTicker clock = Ticker.newMockTicker();
    final NvmeofCounters counters = new NvmeofCounters();
    /** The target's side of the RDMA traffic ({@code rdma.target.*}). */
    final Counters<PathCounter> targetPath = new Counters<>(PathCounter.class);
    long buf, bufVa = 0x7f00_0000_0000L, mads, recvs;

    @BeforeEach
    void setUp() throws IOException {
        startGuest(16 << 20);
        dev.rdma().clock(clock);
        NvmeofOptions options = NvmeofOptions.parse("nvmeof:size=1M,bs=512", 1 << 16, 1 << 12);
        NvmeofTarget target = new NvmeofTarget(options, Namespace.ram(1 << 20, 512), Runnable::run, Runnable::run,
                clock, counters);
        dev.rdma().addAttachment(qps -> new NvmeofAttachment(qps, target, targetPath));
        drv = guest.drv;
        openRings();
        buf = drv.alloc(4 * 4096);
        assertThat(rdma.createMr(MR, bufVa, 4 * 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ,
                4, guest.pageTable(buf, 4), 12).status()).isZero();
        mads = drv.alloc(8 * 512);
        recvs = drv.alloc(DEPTH * 64);
        // The GSI QP as ib_mad makes it: UD, QP 1, Q_Key IB_QP1_QKEY; an AH to the target's address.
        queue(GSI, UD);
        assertThat(rdma.modifyQp(GSI, IB_QP_STATE | IB_QP_QKEY, INIT, 0, GSI_QKEY).status()).isZero();
        assertThat(rdma.modifyQp(GSI, IB_QP_STATE, RTR, 0, 0).status()).isZero();
        assertThat(rdma.modifyQp(GSI, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        assertThat(rdma.createAh(AH, header(HOST_IP, TARGET_IP), HDR_LEN).status()).isZero();
    }

    void queue(int id, int type) throws IOException {
        createQp(id, type, QP_PRIVILEGED);
    }

    /** An Ethernet/IPv4/UDP header template from {@code src} to {@code dst}, as ionic_rdma builds it. */
    long header(int src, int dst) {
        long at = guest.ipv4Header(src, dst);
        MemorySegment h = guest.at(at, 12);
        for (int i = 0; i < 6; i++) {
            u8(h, i, 0x20 + i);          // the target's MAC, as the guest's neighbour table has it
            u8(h, 6 + i, 0x30 + i);
        }
        return at;
    }

    /** A receive of {@code len} bytes at bus address {@code at} (the QPs are privileged: lkey 0). */
    void postRecv(int qp, long at, int len) throws IOException {
        postRecv(qp, w -> w.numSgeKey(1).immDataKey(len).sge(WQE_PLD, 0, at, len, 0));
    }

    /** The guest's CM sends {@code mad} to the target's GSI QP. */
    void sendMad(byte[] mad) throws IOException {
        long at = mads + 7 * 512;
        guest.at(at, 256).copyFrom(MemorySegment.ofArray(mad));
        postSend(GSI, w -> w.op(SEND).numSgeKey(1).ud(AH, GSI, GSI_QKEY).length(256).sge(WQE_PLD, 0, at, 256, 0));
    }

    /** A REQ as rdma_cm sends it for nvme-rdma (IBTA vol. 1 12.6.5; cma_hdr; nvme_rdma_cm_req). */
    static byte[] req(int hostQpn, int qid, int hsqsize) {
        ByteBuffer m = ByteBuffer.allocate(256).order(ByteOrder.BIG_ENDIAN);
        m.put(0, (byte) 1).put(1, (byte) 0x07).put(2, (byte) 2).put(3, (byte) 0x03);  // base 1, CM, v2, Send
        m.putLong(8, 0x42).putShort(16, (short) 0x0010);
        m.putInt(24, HOST_COMM_ID);
        m.putLong(32, 0x0000_0000_0106_0000L | 4420);   // RDMA_PS_TCP, port 4420
        m.putInt(56, hostQpn << 8 | 16);
        m.putInt(60, 8);
        m.putInt(64, 20 << 3 | 1);                      // RC, flow control
        m.putInt(68, 0x123456 << 8 | 20 << 3 | 7);
        m.putShort(72, (short) 0xffff);
        m.put(80 + 10, (byte) 0xff).put(80 + 11, (byte) 0xff).putInt(80 + 12, HOST_IP);
        m.put(96 + 10, (byte) 0xff).put(96 + 11, (byte) 0xff).putInt(96 + 12, TARGET_IP);
        int p = 164;
        m.put(p, (byte) 0).put(p + 1, (byte) 0x40).putShort(p + 2, (short) 51000);
        m.putInt(p + 4 + 12, HOST_IP).putInt(p + 20 + 12, TARGET_IP);
        m.order(ByteOrder.LITTLE_ENDIAN).putShort(p + 38, (short) qid).putShort(p + 40, (short) (hsqsize + 1))
                .putShort(p + 42, (short) hsqsize);
        return m.array();
    }

    /** A CM message with the two communication ids (RTU 0x14, DREQ 0x15). */
    static byte[] msg(int attr, int local, int remote) {
        ByteBuffer m = ByteBuffer.allocate(256);
        m.put(0, (byte) 1).put(1, (byte) 0x07).put(2, (byte) 2).put(3, (byte) 0x03).putLong(8, 77);
        m.putShort(16, (short) attr).putInt(24, local).putInt(28, remote);
        return m.array();
    }

    /** The next CQE of {@code type}, skipping none: asserts it is the next one. */
    RawCqe next(int type) {
        RawCqe c = cq.poll();
        assertThat(c).as("a CQE of type " + type).isNotNull();
        assertThat(c.type()).isEqualTo(type);
        return c;
    }

    /** The receive buffer of GSI receive {@code n} (each 512 bytes at {@code mads}). */
    MemorySegment gsiBuffer(int n) {
        return guest.at(mads + 512L * n, 512);
    }

    /** REQ, REP (checked), RTU: the host's RC QP bound to the target. Returns the target's QPN. */
    int connect(int qid, int hsqsize) throws IOException {
        postRecv(GSI, mads, 512);
        sendMad(req(HOST_QP, qid, hsqsize));
        assertThat(next(CQE_TYPE_SEND_NPG).error()).isFalse();
        RawCqe recv = next(CQE_TYPE_RECV);
        assertThat(recv.statusLength()).as("GRH + MAD").isEqualTo(40 + 256);
        assertThat(recv.srcQpnOp() & 0xff_ffff).isEqualTo(GSI);
        assertThat(recv.srcQpnOp() & CQE_RECV_IS_IPV4).isNotZero();
        ByteBuffer r = ByteBuffer.wrap(gsiBuffer(0).toArray(ValueLayout.JAVA_BYTE)).order(ByteOrder.BIG_ENDIAN);
        // The GRH area: for IPv4 the IPv4 header at 20, from the target to the host, UDP.
        assertThat(r.get(20) & 0xff).isEqualTo(0x45);
        assertThat(r.get(20 + 9) & 0xff).isEqualTo(17);
        assertThat(r.getInt(20 + 12)).isEqualTo(TARGET_IP);
        assertThat(r.getInt(20 + 16)).isEqualTo(HOST_IP);
        assertThat(r.getShort(40 + 16)).as("REP").isEqualTo((short) 0x0013);
        assertThat(r.getInt(40 + 28)).isEqualTo(HOST_COMM_ID);
        int targetComm = r.getInt(40 + 24), targetQpn = r.getInt(40 + 36) >>> 8;
        assertThat(targetQpn & 0xff_0000).isEqualTo(0xc0_0000);
        // The host's QP: RTR with an address vector to the target's GID and the REP's QPN, then RTS.
        queue(HOST_QP, RC);
        assertThat(rdma.modifyQp(HOST_QP, IB_QP_STATE, INIT, 0, 0).status()).isZero();
        assertThat(rdma.modifyQpAv(HOST_QP, RTR, 0, targetQpn, header(HOST_IP, TARGET_IP), HDR_LEN).status())
                .isZero();
        assertThat(rdma.modifyQp(HOST_QP, IB_QP_STATE, RTS, 0, 0).status()).isZero();
        this.targetComm = targetComm;
        sendMad(msg(0x14, HOST_COMM_ID, targetComm));
        assertThat(next(CQE_TYPE_SEND_NPG).error()).isFalse();
        assertThat(cq.poll()).as("an RTU needs no answer").isNull();
        return targetQpn;
    }

    int targetComm;

    /** Sends a capsule (SQE + data) on the host's QP from the MR's last page. */
    void sendCapsule(byte[] capsule) throws IOException {
        long at = bufVa + 3 * 4096;
        guest.at(buf + 3 * 4096, capsule.length).copyFrom(MemorySegment.ofArray(capsule));
        postSend(HOST_QP, w -> w.op(SEND).numSgeKey(1).length(capsule.length).sge(WQE_PLD, 0, at, capsule.length, MR));
    }

    static byte[] sqe(int opcode, int cid) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) opcode).put(1, (byte) 0x40).putShort(2, (short) cid).put(39, (byte) 0x40);
        return b.array();
    }

    /** Fabrics Connect of the admin queue with its 1024-byte data in the capsule (offset-based SGL). */
    static byte[] connectCapsule(int cid) {
        ByteBuffer b = ByteBuffer.wrap(new byte[64 + 1024]).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) 0x7f).put(1, (byte) 0x40).putShort(2, (short) cid).put(4, (byte) 0x01);
        b.putInt(32, 1024).put(39, (byte) 0x01);        // data block, offset 0, 1024 bytes
        b.putShort(42, (short) 0).putShort(44, (short) 31);
        b.putShort(64 + 16, (short) 0xffff);
        b.put(64 + 256, "nvmet-test".getBytes(StandardCharsets.US_ASCII));
        b.put(64 + 512, "nqn.2014-08.org.nvmexpress:uuid:test".getBytes(StandardCharsets.US_ASCII));
        return b.array();
    }

    /** The response capsule in host receive {@code n}: CID @12, status field @14 (phase bit 0). */
    ByteBuffer response(int n) {
        return ByteBuffer.wrap(guest.at(recvs + 64L * n, 16).toArray(ValueLayout.JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void reqGetsRepAsAUdReceiveWithAGrhFromTheTarget() throws IOException {
        connect(0, 31);
        assertThat(targetPath.get(PathCounter.MADS)).isEqualTo(2);
        assertThat(targetPath.get(PathCounter.MADS_SENT)).isEqualTo(1);
        assertThat(counters.get(NvmeofCounters.Traffic.CM_RTU)).isEqualTo(1);
    }

    @Test
    void aMadOfAnotherClassOrSizeIsDroppedAndTheSenderCompletes() throws IOException {
        postRecv(GSI, mads, 512);
        byte[] sa = req(HOST_QP, 0, 31);
        sa[1] = 0x03; // subnet administration: nobody at the target's address answers it
        sendMad(sa);
        assertThat(next(CQE_TYPE_SEND_NPG).error()).isFalse();
        postSend(GSI, w -> w.op(SEND).numSgeKey(1).ud(AH, GSI, GSI_QKEY).length(64).sge(WQE_PLD, 0, mads + 7 * 512, 64, 0));
        assertThat(next(CQE_TYPE_SEND_NPG).error()).isFalse();
        assertThat(cq.poll()).isNull();
        assertThat(targetPath.get(PathCounter.MADS_DROPPED)).isEqualTo(2);
    }

    @Test
    void aReplyWaitsForTheGsiReceive() throws IOException {
        sendMad(req(HOST_QP, 0, 31));
        assertThat(next(CQE_TYPE_SEND_NPG).error()).isFalse();
        assertThat(cq.poll()).as("no receive posted yet").isNull();
        postRecv(GSI, mads, 512);
        assertThat(next(CQE_TYPE_RECV).statusLength()).isEqualTo(40 + 256);
        assertThat(gsiBuffer(0).get(ValueLayout.JAVA_BYTE, 40 + 17)).as("REP").isEqualTo((byte) 0x13);
    }

    @Test
    void aCapsuleGetsItsResponseInTheNextReceiveAsASendFromTheTargetQp() throws IOException {
        int targetQpn = connect(0, 31);
        for (int i = 0; i < 4; i++) {
            postRecv(HOST_QP, recvs + 64L * i, 64);
        }
        // Identify before Connect: Invalid Command Opcode, as a controller answers.
        sendCapsule(sqe(0x06, 0x1234));
        RawCqe recv = next(CQE_TYPE_RECV);
        assertThat(recv.statusLength()).isEqualTo(16);
        assertThat(recv.srcQpnOp() & 0xff_ffff).isEqualTo(targetQpn);
        assertThat(recv.srcQpnOp() >>> CQE_RECV_OP_SHIFT & 0xf).isEqualTo(CQE_RECV_OP_SEND);
        assertThat(next(CQE_TYPE_SEND_MSN).error()).isFalse();
        assertThat(response(0).getShort(12)).isEqualTo((short) 0x1234);
        assertThat(response(0).getShort(14) >>> 1 & 0xff).isEqualTo(0x01);
        // Fabrics Connect with in-capsule data: success and a controller id.
        sendCapsule(connectCapsule(7));
        next(CQE_TYPE_RECV);
        next(CQE_TYPE_SEND_MSN);
        assertThat(response(1).getShort(12)).isEqualTo((short) 7);
        assertThat(response(1).getShort(14) >>> 1).isZero();
        assertThat(response(1).getShort(0)).as("cntlid").isPositive();
        // Property Set CC.EN, then Identify controller into the MR with invalidation (keyed SGL 0x4F).
        ByteBuffer cc = ByteBuffer.wrap(sqe(0x7f, 8)).order(ByteOrder.LITTLE_ENDIAN);
        cc.put(4, (byte) 0x00).putInt(44, 0x14).putLong(48, 1 | 6 << 16 | 4 << 20);
        sendCapsule(cc.array());
        next(CQE_TYPE_RECV);
        next(CQE_TYPE_SEND_MSN);
        assertThat(response(2).getShort(14) >>> 1).isZero();
        ByteBuffer id = ByteBuffer.wrap(sqe(0x06, 9)).order(ByteOrder.LITTLE_ENDIAN);
        id.putInt(40, 1).putLong(24, bufVa).put(32, (byte) 0).put(33, (byte) 0x10).putInt(35, MR).put(39, (byte) 0x4f);
        sendCapsule(id.array());
        recv = next(CQE_TYPE_RECV);
        assertThat(recv.srcQpnOp() >>> CQE_RECV_OP_SHIFT & 0xf).as("SEND_INV").isEqualTo(CQE_RECV_OP_SEND_INV);
        assertThat(recv.immDataRkey()).isEqualTo(MR);
        next(CQE_TYPE_SEND_MSN);
        assertThat(response(3).getShort(14) >>> 1).isZero();
        assertThat(new String(guest.at(buf + 4, 20).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII))
                .as("Identify SN").isEqualTo("ERNIC0000000000001  ");
        assertThat(targetPath.get(PathCounter.CAPSULES)).isEqualTo(4);
        assertThat(targetPath.get(PathCounter.RESPONSES)).isEqualTo(4);
        assertThat(counters.get(NvmeofCounters.Traffic.SEND_INV)).isEqualTo(1);
    }

    @Test
    void aResponseWithNoReceiveIsHeldUntilTheRqDoorbell() throws IOException {
        connect(0, 31);
        sendCapsule(sqe(0x06, 0x55));
        assertThat(next(CQE_TYPE_SEND_MSN).error()).as("the SEND itself completes").isFalse();
        assertThat(cq.poll()).isNull();
        assertThat(targetPath.get(PathCounter.RESPONSES_HELD)).isEqualTo(1);
        postRecv(HOST_QP, recvs, 64);
        assertThat(next(CQE_TYPE_RECV).statusLength()).isEqualTo(16);
        assertThat(response(0).getShort(12)).isEqualTo((short) 0x55);
    }

    @Test
    void dreqGetsDrepAndUnbindsTheQp() throws IOException {
        connect(0, 31);
        postRecv(GSI, mads + 512, 512);
        sendMad(msg(0x15, HOST_COMM_ID, targetComm));
        next(CQE_TYPE_SEND_NPG);
        next(CQE_TYPE_RECV);
        assertThat(gsiBuffer(1).get(ValueLayout.JAVA_BYTE, 40 + 17)).as("DREP").isEqualTo((byte) 0x16);
        assertThat(counters.get(NvmeofCounters.Traffic.QUEUES_CLOSED)).isEqualTo(1);
        // Unbound: a SEND on the QP reaches no one any more (its destination is no QP of this guest).
        sendCapsule(sqe(0x06, 1));
        RawCqe c = next(CQE_TYPE_SEND_MSN);
        assertThat(c.error()).isTrue();
        assertThat(c.statusLength()).isEqualTo(STS_RETRY_EXCEEDED);
        assertThat(targetPath.get(PathCounter.CAPSULES)).isEqualTo(0);
    }

    @Test
    void destroyingTheQpEndsItsConnection() throws IOException {
        int targetQpn = connect(0, 31);
        assertThat(rdma.destroy(OP_DESTROY_QP, HOST_QP).status()).isZero();
        assertThat(counters.get(NvmeofCounters.Traffic.QUEUES_CLOSED)).isEqualTo(1);
        // A DREQ for it now is for a connection the target no longer knows: still answered with a DREP.
        postRecv(GSI, mads + 512, 512);
        sendMad(msg(0x15, HOST_COMM_ID, targetComm));
        next(CQE_TYPE_SEND_NPG);
        next(CQE_TYPE_RECV);
        assertThat(targetQpn).isPositive();
    }
}
