package ernic.it.model;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.AdminException;
import ernic.model.rdma.Ah;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.QpInfo;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import ernic.vfiouser.server.VfioCounter;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * RDMA through the real vfio-user socket as ionic_rdma and libionic drive it: the bootstrap, every send opcode
 * on connected RC QPs of one device, UD with IPv4 and IPv6 address handles, events, and the error completions
 * a user checks for. Memory is compared byte for byte; MRs go through page tables over pages that are out of
 * order in guest RAM.
 */
class RdmaVerbsTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    java.nio.file.Path tmp;

    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final int WAIT = 5000;

    ErnicServer server;
    IonicDriverModel drv;
    RdmaVerbs v;
    Cq cqA, cqB;
    Qp a, b;
    Buffer bufA, bufB;
    Mr mrA, mrB;
    final Wc wc = new Wc();
    final SendWr wr = new SendWr();

    @BeforeEach
    void start() throws Exception {
        server = ErnicServer.start(ErnicServer.Settings.ionic(tmp.resolve("ernic.sock").toString()));
        drv = IonicDriverModel.connect(server.vfioUser().socketPath());
        v = RdmaVerbs.open(drv);
    }

    @AfterEach
    void stop() {
        drv.close();
        server.close();
    }

    /** Two RC QPs connected to each other, each with its own CQ and a 5-page scattered buffer with an MR. */
    void rcPair() throws Exception {
        cqA = v.createCq(6);
        cqB = v.createCq(6);
        a = v.createQp(RC, cqA, cqA, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
        b = v.createQp(RC, cqB, cqB, 5, 5, 8, QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC);
        v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
        bufA = v.buffer(5 * 4096, true);
        bufB = v.buffer(5 * 4096, true);
        mrA = v.regMr(bufA, 0, bufA.length, ALL);
        mrB = v.regMr(bufB, 0, bufB.length, ALL);
    }

    static byte[] pattern(int n, int seed) {
        byte[] p = new byte[n];
        for (int i = 0; i < n; i++) {
            p[i] = (byte) (i * 31 + seed + (i >>> 8));
        }
        return p;
    }

    Wc next(Cq cq) {
        assertThat(v.pollWait(cq, wc, WAIT)).as("a completion on CQ " + cq.id).isTrue();
        return wc;
    }

    /**
     * After an error completion: the QP (and an RC responder that rejected the request) is in ERROR, as
     * on hardware; both go through ERROR and RESET back to RTS, and what the flush posted is drained.
     */
    void startOver() throws Exception {
        for (Qp q : new Qp[] {a, b}) {
            v.toState(q, ERR);
        }
        drv.sync();
        while (cqA.poll(wc) || cqB.poll(wc)) {
            assertThat(wc.status).as("only flush completions while starting over").isEqualTo(STS_WQE_FLUSHED_ERR);
        }
        for (Qp q : new Qp[] {a, b}) {
            v.toState(q, RESET);
        }
        v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
    }

    void noMore(Cq cq) throws Exception {
        drv.sync();
        assertThat(cq.poll(wc)).as("no further completion, got " + wc).isFalse();
    }

    @Test
    void bootstrapReadsTheRdmaIdentity() {
        assertThat(v.version).isBetween(1, 2);
        assertThat(v.qpOpcodes).isGreaterThan(10);
        assertThat(v.adminOpcodes).isGreaterThanOrEqualTo(17);
        assertThat(v.maxStride).isGreaterThanOrEqualTo(6);
        assertThat(v.qpCount).isGreaterThanOrEqualTo(1000);
        assertThat(v.nmrs).isGreaterThan(10_000);
        assertThat(server.vfioUser().count(VfioCounter.PROTOCOL_CLOSES)).isZero();
    }

    @Test
    void sendAndSendImmCrossPagesOfScatteredBuffers() throws Exception {
        rcPair();
        byte[] msg = pattern(9000, 7); // spans three pages, starting mid-page
        bufA.put(1000, msg);
        bufB.fill(0, bufB.length, (byte) 0xee);
        v.postRecv(b, 77, mrB.va() + 3000, 12_000, mrB.lkey());
        wr.reset().sge(mrA.va() + 1000, msg.length, mrA.lkey()).wrId = 11;
        v.postSend(a, wr);
        Wc s = next(cqA);
        assertThat(s.wrId).isEqualTo(11);
        assertThat(s.status).isEqualTo(STS_OK);
        assertThat(s.opcode).isEqualTo(WC_SEND);
        assertThat(s.qpNum).isEqualTo(a.id);
        Wc r = next(cqB);
        assertThat(r.status).isEqualTo(STS_OK);
        assertThat(r.wrId).isEqualTo(77);
        assertThat(r.opcode).isEqualTo(WC_RECV);
        assertThat(r.byteLen).isEqualTo(9000);
        assertThat(r.srcQp).isEqualTo(a.id);
        assertThat(r.withImm).isFalse();
        assertThat(bufB.get(3000, 9000)).isEqualTo(msg);
        assertThat(bufB.get(2999, 1)[0]).isEqualTo((byte) 0xee);
        assertThat(bufB.get(12_000, 1)[0]).isEqualTo((byte) 0xee);

        v.postRecv(b, 78, mrB.va(), 64, mrB.lkey());
        wr.reset().sge(mrA.va(), 16, mrA.lkey());
        wr.opcode = SEND_IMM;
        wr.imm = 0xcafe_f00d;
        wr.wrId = 12;
        v.postSend(a, wr);
        assertThat(next(cqA).wrId).isEqualTo(12);
        r = next(cqB);
        assertThat(r.wrId).isEqualTo(78);
        assertThat(r.withImm).isTrue();
        assertThat(r.imm).isEqualTo(0xcafe_f00d);
        assertThat(r.byteLen).isEqualTo(16);
        noMore(cqA);
        noMore(cqB);
    }

    @Test
    void sendWithInvalidateRevokesTheRespondersRkey() throws Exception {
        rcPair();
        Mr exposed = v.regMr(bufB, 8192, 4096, ALL);
        oneSided(WRITE, 0, 8, exposed.va(), exposed.rkey());
        v.postSend(a, wr);
        assertThat(next(cqA).status).as("usable before").isEqualTo(STS_OK);
        v.postRecv(b, 9, mrB.va(), 64, mrB.lkey());
        wr.reset().sge(mrA.va(), 8, mrA.lkey());
        wr.opcode = SEND_INV;
        wr.imm = exposed.rkey();
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        Wc r = next(cqB);
        assertThat(r.withInv).isTrue();
        assertThat(r.imm).isEqualTo(exposed.rkey());
        oneSided(WRITE, 0, 8, exposed.va(), exposed.rkey());
        v.postSend(a, wr);
        assertThat(next(cqA).status).as("invalidated").isEqualTo(STS_REMOTE_ACC_ERR);
    }

    @Test
    void sendWithSeveralSgesOnBothSides() throws Exception {
        rcPair();
        bufA.put(0, "Hello, ".getBytes(StandardCharsets.US_ASCII));
        bufA.put(4090, "RDMA ".getBytes(StandardCharsets.US_ASCII));
        bufA.put(8200, "world".getBytes(StandardCharsets.US_ASCII));
        SendWr rw = new SendWr().sge(mrB.va() + 100, 4, mrB.lkey()).sge(mrB.va() + 5000, 100, mrB.lkey());
        rw.wrId = 5;
        v.postRecv(b, rw);
        wr.reset().sge(mrA.va(), 7, mrA.lkey()).sge(mrA.va() + 4090, 5, mrA.lkey()).sge(mrA.va() + 8200, 5, mrA.lkey());
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(next(cqB).byteLen).isEqualTo(17);
        assertThat(new String(bufB.get(100, 4), StandardCharsets.US_ASCII)
                + new String(bufB.get(5000, 13), StandardCharsets.US_ASCII)).isEqualTo("Hello, RDMA world");
    }

    @Test
    void inlineSend() throws Exception {
        rcPair();
        v.postRecv(b, 1, mrB.va() + 10, 200, mrB.lkey());
        byte[] data = pattern(200, 3);
        wr.reset().inline = MemorySegment.ofArray(data);
        assertThat(a.maxInline()).isGreaterThanOrEqualTo(200);
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(next(cqB).byteLen).isEqualTo(200);
        assertThat(bufB.get(10, 200)).isEqualTo(data);
    }

    @Test
    void writeAndWriteImmAndRead() throws Exception {
        rcPair();
        byte[] data = pattern(12_345, 9);
        bufA.put(100, data);
        oneSided(WRITE, 100, data.length, mrB.va() + 4000, mrB.rkey());
        wr.wrId = 21;
        v.postSend(a, wr);
        Wc w = next(cqA);
        assertThat(w.status).isEqualTo(STS_OK);
        assertThat(w.opcode).isEqualTo(WC_RDMA_WRITE);
        assertThat(w.wrId).isEqualTo(21);
        assertThat(bufB.get(4000, data.length)).isEqualTo(data);
        noMore(cqB); // a plain WRITE consumes no receive and completes nothing on the responder

        v.postRecv(b, 90, mrB.va(), 0, mrB.lkey());
        wr.opcode = WRITE_IMM;
        wr.imm = 0x1234_5678;
        wr.wrId = 22;
        wr.numSge = 0;
        wr.sge(mrA.va() + 100, 64, mrA.lkey());
        wr.remoteVa = mrB.va() + 20_000;
        v.postSend(a, wr);
        assertThat(next(cqA).wrId).isEqualTo(22);
        Wc r = next(cqB);
        assertThat(r.opcode).isEqualTo(WC_RECV_RDMA_WITH_IMM);
        assertThat(r.wrId).isEqualTo(90);
        assertThat(r.imm).isEqualTo(0x1234_5678);
        assertThat(r.byteLen).isEqualTo(64);
        assertThat(bufB.get(20_000, 64)).isEqualTo(Arrays.copyOf(data, 64));

        byte[] remote = pattern(7000, 44);
        bufB.put(500, remote);
        oneSided(READ, 8000, 7000, mrB.va() + 500, mrB.rkey());
        wr.wrId = 23;
        v.postSend(a, wr);
        w = next(cqA);
        assertThat(w.opcode).isEqualTo(WC_RDMA_READ);
        assertThat(w.status).isEqualTo(STS_OK);
        assertThat(w.byteLen).isEqualTo(7000);
        assertThat(bufA.get(8000, 7000)).isEqualTo(remote);
    }

    @Test
    void atomics() throws Exception {
        rcPair();
        bufB.putLong(4096 - 8, 100); // the last word of a page
        bufA.putLong(64, -1);
        wr.reset().sge(mrA.va() + 64, 8, mrA.lkey());
        wr.opcode = ATOMIC_FA;
        wr.remoteVa = mrB.va() + 4096 - 8;
        wr.rkey = mrB.rkey();
        wr.swapAdd = 23;
        v.postSend(a, wr);
        Wc w = next(cqA);
        assertThat(w.status).isEqualTo(STS_OK);
        assertThat(w.opcode).isEqualTo(WC_FETCH_ADD);
        assertThat(bufA.getLong(64)).as("old value").isEqualTo(100);
        assertThat(bufB.getLong(4096 - 8)).isEqualTo(123);

        wr.opcode = ATOMIC_CS;
        wr.compare = 123;
        wr.swapAdd = 0x1111_2222_3333_4444L;
        v.postSend(a, wr);
        assertThat(next(cqA).opcode).isEqualTo(WC_COMP_SWAP);
        assertThat(bufA.getLong(64)).isEqualTo(123);
        assertThat(bufB.getLong(4096 - 8)).as("swapped").isEqualTo(0x1111_2222_3333_4444L);

        wr.compare = 5; // does not match: no swap, the old value comes back
        wr.swapAdd = 9;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(bufA.getLong(64)).isEqualTo(0x1111_2222_3333_4444L);
        assertThat(bufB.getLong(4096 - 8)).isEqualTo(0x1111_2222_3333_4444L);
    }

    @Test
    void unsignaledWorkIsCoveredByTheNextSignaledCompletion() throws Exception {
        rcPair();
        bufA.put(0, pattern(256, 1));
        for (int i = 0; i < 3; i++) {
            oneSided(WRITE, 64L * i, 64, mrB.va() + 64L * i, mrB.rkey());
            wr.signaled = false;
            wr.wrId = 100 + i;
            v.postSend(a, wr, false);
        }
        wr.signaled = true;
        wr.wrId = 103;
        wr.numSge = 0;
        wr.sge(mrA.va() + 192, 64, mrA.lkey());
        wr.remoteVa = mrB.va() + 192;
        v.postSend(a, wr, false);
        v.ringSq(a);
        assertThat(next(cqA).wrId).isEqualTo(103);
        noMore(cqA);
        assertThat(a.sqOutstanding()).isZero();
        assertThat(bufB.get(0, 256)).isEqualTo(pattern(256, 1));
    }

    @Test
    void colorFlipsAcrossManyWrapsOfASmallCq() throws Exception {
        Cq small = v.createCq(2);
        Cq other = v.createCq(6);
        a = v.createQp(RC, small, small, 3, 3, 6, 0);
        b = v.createQp(RC, other, other, 3, 3, 6, QP_REMOTE_WRITE);
        v.connect(a, Path.of("10.0.0.1", "10.0.0.2"), b, Path.of("10.0.0.2", "10.0.0.1"));
        bufA = v.buffer(4096, false);
        bufB = v.buffer(4096, false);
        mrA = v.regMr(bufA, 0, 4096, ALL);
        mrB = v.regMr(bufB, 0, 4096, ALL);
        for (int i = 0; i < 50; i++) {
            bufA.putLong(0, i);
            oneSided(WRITE, 0, 8, mrB.va() + 8L * (i % 100), mrB.rkey());
            wr.wrId = i;
            v.postSend(a, wr);
            Wc w = next(small);
            assertThat(w.wrId).isEqualTo(i);
            assertThat(bufB.getLong(8L * (i % 100))).isEqualTo(i);
        }
    }

    @Test
    void udWithIpv4AndIpv6AddressHandles() throws Exception {
        udPair();
        byte[] payload = pattern(300, 5);
        buf.put(0, payload);

        Ah v4 = v.createAh(Path.of("192.168.7.1", "192.168.7.2"));
        v.postRecv(r, 1, mr.va() + 4000, 1000, mr.lkey());
        udSend(s, mr, 300, v4, r, 61);
        Wc w = next(sendCq);
        assertThat(w.qpNum).isEqualTo(s.id);
        assertThat(w.wrId).isEqualTo(61);
        assertThat(w.status).isEqualTo(STS_OK);
        assertThat(w.opcode).isEqualTo(WC_SEND);
        w = next(cq);
        assertThat(w.qpNum).isEqualTo(r.id);
        assertThat(w.byteLen).isEqualTo(GRH + 300);
        assertThat(w.srcQp).isEqualTo(s.id);
        assertThat(w.ipv4).isTrue();
        byte[] grh = buf.get(4000, GRH);
        assertThat(grh[20]).as("IPv4 header at offset 20 of the GRH").isEqualTo((byte) 0x45);
        assertThat(Arrays.copyOfRange(grh, 32, 36)).isEqualTo(new byte[] {(byte) 192, (byte) 168, 7, 1});
        assertThat(Arrays.copyOfRange(grh, 36, 40)).isEqualTo(new byte[] {(byte) 192, (byte) 168, 7, 2});
        assertThat(buf.get(4000 + GRH, 300)).isEqualTo(payload);

        Ah v6 = v.createAh(Path.of("fd00::1", "fd00::2"));
        v.postRecv(r, 2, mr.va() + 5000, 1000, mr.lkey());
        wr.ah = v6;
        wr.opcode = SEND_IMM;
        wr.imm = 42;
        v.postSend(s, wr);
        assertThat(next(sendCq).qpNum).isEqualTo(s.id);
        w = next(cq);
        assertThat(w.wrId).isEqualTo(2);
        assertThat(w.ipv4).isFalse();
        assertThat(w.withImm).isTrue();
        assertThat(w.imm).isEqualTo(42);
        grh = buf.get(5000, GRH);
        assertThat(grh[0] >>> 4 & 0xf).as("IPv6 version").isEqualTo(6);
        assertThat(Arrays.copyOfRange(grh, 8, 24)).isEqualTo(Path.gid("fd00::1"));
        assertThat(Arrays.copyOfRange(grh, 24, 40)).isEqualTo(Path.gid("fd00::2"));

        // A wrong qkey: the datagram is dropped, the sender still completes.
        wr.qkey = 0x2222;
        wr.opcode = SEND;
        v.postSend(s, wr);
        assertThat(next(sendCq).qpNum).isEqualTo(s.id);
        noMore(cq);
        assertThat(r.rqOutstanding()).isZero();
        v.destroyAh(v4);
        v.destroyAh(v6);
    }

    /**
     * Makes {@link #wr} a WRITE or READ ({@code opcode}) of {@code length} bytes at {@code offset} in {@link #mrA}, to or
     * from {@code remoteVa} under {@code rkey}; the rest as {@link SendWr#reset} leaves it.
     */
    private void oneSided(int opcode, long offset, int length, long remoteVa, int rkey) {
        wr.reset().sge(mrA.va() + offset, length, mrA.lkey());
        wr.opcode = opcode;
        wr.remoteVa = remoteVa;
        wr.rkey = rkey;
    }

    /**
     * Posts on {@code s} a UD SEND of the first {@code length} bytes of {@code mr} to {@code dest} through {@code ah},
     * under {@link #udQp}'s Q_Key; {@link #wr} keeps it for the variants that follow.
     */
    private void udSend(Qp s, Mr mr, int length, Ah ah, Qp dest, long wrId) {
        wr.reset().sge(mr.va(), length, mr.lkey());
        wr.ah = ah;
        wr.destQpn = dest.id;
        wr.qkey = 0x1111_0000;
        wr.wrId = wrId;
        v.postSend(s, wr);
    }

    /** A UD QP with Q_Key 0x11110000 on {@code cq}, in RTS. */
    /** The UD tests' QPs: {@code s} completes on {@code sendCq}, {@code r} on {@code cq}; {@code buf} with MR {@code mr}. */
    Cq sendCq, cq;
    Qp s, r;
    Buffer buf;
    Mr mr;

    /** Two UD QPs (Q_Key 0x11110000) in RTS, each on a CQ of its own, and an 8 KiB buffer with an MR. */
    void udPair() throws Exception {
        sendCq = v.createCq(5);
        cq = v.createCq(5);
        s = udQp(sendCq);
        r = udQp(cq);
        buf = v.buffer(8192, true);
        mr = v.regMr(buf, 0, 8192, ALL);
    }

    private Qp udQp(Cq cq) throws Exception {
        Qp qp = v.createQp(UD, cq, cq, 4, 4, 7, 0);
        v.init(qp, 0x1111_0000);
        v.rtr(qp, 0, null);
        v.rts(qp);
        return qp;
    }

    /**
     * An AH opens a path only for QPs of its protection domain: a UD send with an AH of another PD completes
     * with a local QP operation error and delivers nothing (rxe_get_av: "PDs don't match for AH and QP"); the
     * UD QP goes on with an AH of its own PD.
     */
    @Test
    void udSendWithAnAddressHandleOfAnotherPdFails() throws Exception {
        udPair();
        Path path = Path.of("192.168.7.1", "192.168.7.2");
        Ah foreign = v.createAh(2, path), own = v.createAh(path);
        v.postRecv(r, 1, mr.va() + 4000, 1000, mr.lkey());
        udSend(s, mr, 64, foreign, r, 71);
        Wc w = next(sendCq);
        assertThat(w.wrId).isEqualTo(71);
        assertThat(w.status).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        noMore(cq);
        wr.ah = own;
        wr.wrId = 72;
        v.postSend(s, wr);
        assertThat(next(sendCq).status).isEqualTo(STS_OK);
        assertThat(next(cq).wrId).isEqualTo(1);
        v.destroyAh(foreign);
        v.destroyAh(own);
    }

    @Test
    void rtrWritesTheDestinationIntoTheHeaderTemplate() throws Exception {
        Cq cq = v.createCq(4);
        Qp q4 = v.createQp(RC, cq, cq, 3, 3, 6, 0);
        Qp q6 = v.createQp(RC, cq, cq, 3, 3, 6, 0);
        v.init(q4, QP_REMOTE_WRITE);
        v.init(q6, QP_REMOTE_READ);
        v.rtr(q4, 0x123, Path.of("10.1.2.3", "10.4.5.6"));
        v.rtr(q6, 0x456, Path.of("2001:db8::10", "2001:db8::20"));
        QpInfo i4 = v.query(q4);
        assertThat(i4.state()).isEqualTo(RTR);
        assertThat(i4.destQpnOrQkey()).isEqualTo(0x123);
        assertThat(i4.pmtu()).isEqualTo(12);
        assertThat(i4.accessFlags()).isEqualTo(QP_REMOTE_WRITE);
        byte[] h = i4.header();
        assertThat(h[12] << 8 | h[13] & 0xff).as("IPv4 ethertype").isEqualTo(0x0800);
        assertThat(Arrays.copyOfRange(h, 14 + 16, 14 + 20)).isEqualTo(new byte[] {10, 4, 5, 6});
        assertThat((h[14 + 20 + 2] & 0xff) << 8 | h[14 + 20 + 3] & 0xff).as("UDP to 4791").isEqualTo(4791);
        QpInfo i6 = v.query(q6);
        assertThat(i6.destQpnOrQkey()).isEqualTo(0x456);
        h = i6.header();
        assertThat((h[12] & 0xff) << 8 | h[13] & 0xff).as("IPv6 ethertype").isEqualTo(0x86dd);
        assertThat(Arrays.copyOfRange(h, 14 + 24, 14 + 40)).isEqualTo(Path.gid("2001:db8::20"));
        v.rts(q4);
        assertThat(v.query(q4).state()).isEqualTo(RTS);
        // Out of order transitions are refused.
        assertThatThrownBy(() -> v.toState(q6, INIT)).isInstanceOf(AdminException.class);
    }

    @Test
    void badLkeyIsALocalProtectionError() throws Exception {
        rcPair();
        wr.reset().sge(mrA.va(), 64, mrA.lkey() ^ 0x01); // right index, wrong key
        wr.opcode = WRITE;
        wr.remoteVa = mrB.va();
        wr.rkey = mrB.rkey();
        wr.wrId = 1;
        v.postSend(a, wr);
        Wc w = next(cqA);
        assertThat(w.wrId).isEqualTo(1);
        assertThat(w.status).isEqualTo(STS_LOCAL_PROT_ERR);
        startOver();
        wr.sgeLkey[0] = 0; // the reserved DMA lkey, on a QP that is not privileged
        wr.wrId = 2;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_LOCAL_PROT_ERR);
    }

    @Test
    void sgePastTheEndOfItsMrIsALocalProtectionError() throws Exception {
        rcPair();
        Mr small = v.regMr(bufA, 0, 4096, ALL);
        wr.reset().sge(small.va() + 4000, 200, small.lkey());
        wr.opcode = WRITE;
        wr.remoteVa = mrB.va();
        wr.rkey = mrB.rkey();
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_LOCAL_PROT_ERR);
        v.deregMr(small);
    }

    @Test
    void badRkeyAndMissingRemoteAccessAreRemoteAccessErrors() throws Exception {
        rcPair();
        oneSided(WRITE, 0, 64, mrB.va(), mrB.rkey() + (1 << 8) * 50); // no such MR
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();

        wr.rkey = mrB.rkey();
        wr.remoteVa = mrB.va() + mrB.length() - 32; // runs past the remote MR
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();

        Mr readOnly = v.regMr(bufB, 0, 4096, ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ);
        wr.rkey = readOnly.rkey();
        wr.remoteVa = readOnly.va();
        v.postSend(a, wr);
        assertThat(next(cqA).status).as("WRITE into an MR without REMOTE_WRITE").isEqualTo(STS_REMOTE_ACC_ERR);
        startOver();
        wr.opcode = READ;
        v.postSend(a, wr);
        assertThat(next(cqA).status).as("READ of it is fine").isEqualTo(STS_OK);
        wr.opcode = ATOMIC_FA;
        v.postSend(a, wr);
        assertThat(next(cqA).status).as("atomic without REMOTE_ATOMIC").isEqualTo(STS_REMOTE_ACC_ERR);
    }

    @Test
    void misalignedAtomicIsRefused() throws Exception {
        rcPair();
        bufB.putLong(16, 7);
        wr.reset().sge(mrA.va(), 8, mrA.lkey());
        wr.opcode = ATOMIC_FA;
        wr.remoteVa = mrB.va() + 12;
        wr.rkey = mrB.rkey();
        wr.swapAdd = 1;
        v.postSend(a, wr);
        assertThat(next(cqA).status).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        assertThat(bufB.getLong(16)).isEqualTo(7);
    }

    @Test
    void receiveTooShortFailsBothSides() throws Exception {
        rcPair();
        v.postRecv(b, 31, mrB.va(), 100, mrB.lkey());
        wr.reset().sge(mrA.va(), 101, mrA.lkey());
        wr.wrId = 30;
        v.postSend(a, wr);
        Wc s = next(cqA);
        assertThat(s.wrId).isEqualTo(30);
        assertThat(s.status).isEqualTo(STS_REMOTE_INV_REQ_ERR);
        Wc r = next(cqB);
        assertThat(r.wrId).isEqualTo(31);
        assertThat(r.status).isEqualTo(STS_LOCAL_LEN_ERR);
    }

    @Test
    void modifyToErrorFlushesOutstandingReceives() throws Exception {
        rcPair();
        for (int i = 0; i < 5; i++) {
            v.postRecv(b, 500 + i, mrB.va() + 64L * i, 64, mrB.lkey());
        }
        drv.sync();
        noMore(cqB);
        v.toState(b, ERR);
        for (int i = 0; i < 5; i++) {
            Wc w = next(cqB);
            assertThat(w.status).isEqualTo(STS_WQE_FLUSHED_ERR);
            assertThat(w.wrId).isEqualTo(500 + i);
            assertThat(w.opcode).isEqualTo(WC_RECV);
        }
        noMore(cqB);
        assertThat(b.rqOutstanding()).isZero();
        // Back through RESET, the QP works again.
        v.toState(b, RESET);
        v.init(b, QP_REMOTE_WRITE);
        v.rtr(b, a.id, Path.of("10.0.0.2", "10.0.0.1"));
        v.rts(b);
        v.postRecv(b, 600, mrB.va(), 64, mrB.lkey());
        v.postSend(a, wr.reset().sge(mrA.va(), 8, mrA.lkey()));
        assertThat(next(cqA).status).isEqualTo(STS_OK);
        assertThat(next(cqB).wrId).isEqualTo(600);
    }

    @Test
    void armedCqRaisesOneEventThroughItsEqAndMsix() throws Exception {
        rcPair();
        assertThat(cqB.awaitEvent(50)).as("nothing armed, nothing happened").isFalse();
        cqB.arm(false);
        v.postRecv(b, 1, mrB.va(), 64, mrB.lkey());
        v.postSend(a, wr.reset().sge(mrA.va(), 8, mrA.lkey()));
        assertThat(cqB.awaitEvent(WAIT)).isTrue();
        assertThat(next(cqB).wrId).isEqualTo(1);
        // Disarmed by that event: the next completion raises none until armed again.
        v.postRecv(b, 2, mrB.va(), 64, mrB.lkey());
        v.postSend(a, wr);
        assertThat(next(cqB).wrId).isEqualTo(2);
        assertThat(cqB.awaitEvent(100)).isFalse();
        // Solicited-only: an unsolicited SEND does not fire, a solicited one does.
        cqB.arm(true);
        v.postRecv(b, 3, mrB.va(), 64, mrB.lkey());
        v.postSend(a, wr);
        assertThat(next(cqB).wrId).isEqualTo(3);
        assertThat(cqB.awaitEvent(100)).isFalse();
        v.postRecv(b, 4, mrB.va(), 64, mrB.lkey());
        wr.solicited = true;
        v.postSend(a, wr);
        assertThat(cqB.awaitEvent(WAIT)).isTrue();
        assertThat(next(cqB).wrId).isEqualTo(4);
    }

    @Test
    void destroyAndTheRefusalsOfWhatIsGone() throws Exception {
        rcPair();
        v.destroyQp(a);
        v.destroyQp(b);
        v.deregMr(mrA);
        assertThatThrownBy(() -> v.deregMr(mrA)).isInstanceOfSatisfying(AdminException.class,
                e -> assertThat(e.status).isEqualTo(ASTS_BAD_INDEX));
        assertThatThrownBy(() -> v.destroyQp(a)).isInstanceOf(AdminException.class);
        v.destroyCq(cqA);
        v.destroyCq(cqB);
        assertThatThrownBy(() -> v.destroyCq(cqA)).isInstanceOf(AdminException.class);
        // The freed MR index is reused and works.
        Mr again = v.regMr(bufA, 0, 4096, ALL);
        assertThat(again.lkey() >>> 8).isEqualTo(mrA.lkey() >>> 8);
        assertThat(server.vfioUser().count(VfioCounter.PROTOCOL_CLOSES)).isZero();
    }

    /**
     * The data path allocates nothing per operation: the device thread's allocation counter while WQEs go through it
     * (posted doorbells as QEMU sends them, a WRITE over a scattered MR, its CQE), the least of five windows, so a
     * timer that happens to run in one (the RDMA tick, the stats) does not count. Once C2 has compiled the path it
     * reads 0; but after the other tests of this JVM the JIT sometimes keeps the JDK's own slice of the FFM
     * capture-state segment per system call (a recvmsg per read, a sendmsg per reply: 5-30 bytes per WQE in such
     * runs), so the bound is 64 bytes: far below one object per access or per message (218-300 bytes per WQE before
     * 2026-12-03). {@code ./ernic bench} section 2 reports the figure of its own run.
     */
    @Test
    void theDoorbellPathAllocatesNothingPerWqe() throws Exception {
        rcPair();
        oneSided(WRITE, 0, 3 * 4096, mrB.va(), mrB.rkey());
        long device = server.vfioUser().eventLoop().submit(() -> Thread.currentThread().threadId()).get();
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        writes(60_000); // until the JIT has compiled the path
        long least = Long.MAX_VALUE;
        for (int window = 0; window < 5; window++) {
            long before = threads.getThreadAllocatedBytes(device);
            writes(10_000);
            least = Math.min(least, threads.getThreadAllocatedBytes(device) - before);
        }
        assertThat(least / 10_000.0).as("bytes the device thread allocated per WQE").isLessThan(64.0);
    }

    /** {@code n} WRITEs of {@link #wr}, 16 in flight. */
    private void writes(int n) {
        int inFlight = 0;
        for (int posted = 0; posted < n || inFlight > 0; ) {
            while (inFlight < 16 && posted < n) {
                v.postSend(a, wr);
                inFlight++;
                posted++;
            }
            assertThat(next(cqA).status).isEqualTo(STS_OK);
            inFlight--;
        }
    }
}
