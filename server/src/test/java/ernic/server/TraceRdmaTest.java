package ernic.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import ernic.ionic.trace.PcapTrace;
import ernic.roce.RoceFrame;
import ernic.roce.TransportHeader;
import ernic.ionic.trace.TraceCounter;
import ernic.mesh.Gid;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Ah;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Cq;
import ernic.model.rdma.Mr;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * {@code --trace-rdma}: a driver-model workload (RC SEND of one and of three packets, RDMA WRITE, READ of one and
 * of three response packets, an atomic, a UD SEND; then RC across a mesh of two servers) is traced, and scapy's
 * RoCE dissector ({@code scapy.contrib.roce}, Debian's python3-scapy) reads every frame as Ether/IP/UDP/BTH
 * with the opcodes, QPNs, PSNs, lengths and ICRCs the IBTA gives.
 */
class TraceRdmaTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path tmp;

    static final File PYTHON = new File("/usr/bin/python3");
    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final int QP_ALL = QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC;
    static final int HEADERS = 14 + 20 + 8 + 12;

    final List<AutoCloseable> open = new ArrayList<>();
    final Wc wc = new Wc();
    final SendWr wr = new SendWr();

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    static void assumeScapy() throws Exception {
        boolean there = PYTHON.canExecute() && new ProcessBuilder(PYTHON.getPath(), "-c", "import scapy.contrib.roce")
                .redirectErrorStream(true).start().waitFor() == 0;
        if (!there) {
            assertThat(System.getenv("CI")).as("CI installs python3-scapy (.ci/run)").isNull();
            assumeThat(there).as("scapy is not installed: apt-get install python3-scapy").isTrue();
        }
    }

    /** The frames of {@code pcap} as scapy reads them, one JSON object each. */
    static List<JsonNode> dissect(Path pcap) throws Exception {
        Path script = Files.createTempFile("trace_check", ".py");
        try (InputStream in = TraceRdmaTest.class.getResourceAsStream("/trace_check.py")) {
            Files.write(script, in.readAllBytes());
        }
        Process p = new ProcessBuilder(PYTHON.getPath(), script.toString(), pcap.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("trace_check.py: " + out).isZero();
        Files.delete(script);
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> frames = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                frames.add(json.readTree(line));
            }
        }
        for (JsonNode f : frames) {
            assertThat(f.path("stack").asBoolean()).as("scapy reads Ether/IP/UDP/BTH: " + f).isTrue();
            assertThat(f.path("dport").asInt()).isEqualTo(4791);
            if (f.path("caplen").asInt() == f.path("wirelen").asInt()) {
                assertThat(f.path("icrc_ok").asBoolean()).as("the ICRC scapy computes: " + f).isTrue();
                assertThat(f.path("ip_checksum_ok").asBoolean()).as("IPv4 checksum: " + f).isTrue();
            }
            assertThat(f.path("ip_len").asInt()).as("IPv4 length is the frame's real one").isEqualTo(f.path("wirelen").asInt() - 14);
        }
        return frames;
    }

    /** The payload length of a frame: IPv4 length less the headers, the pad and the ICRC. */
    static int payload(JsonNode f) {
        return f.path("ip_len").asInt() - 20 - 8 - 12 - RoceFrame.extensionLength(f.path("opcode").asInt())
                - f.path("pad").asInt() - 4;
    }

    /**
     * Makes {@link #wr} a WRITE, READ or atomic ({@code opcode}) of {@code length} bytes at {@code offset} in {@code local}, to
     * or from {@code remote} at {@code remoteOffset}.
     */
    void oneSided(int opcode, Mr local, long offset, int length, Mr remote, long remoteOffset) {
        wr.reset().sge(local.va() + offset, length, local.lkey());
        wr.opcode = opcode;
        wr.remoteVa = remote.va() + remoteOffset;
        wr.rkey = remote.rkey();
    }

    Wc next(RdmaVerbs v, Cq cq) {
        assertThat(v.pollWait(cq, wc, 10_000)).as("a completion on CQ " + cq.id).isTrue();
        assertThat(wc.status).as("completion status").isEqualTo(STS_OK);
        return wc;
    }

    /** Expects frame {@code i}: opcode, destination QP, PSN and payload length. */
    static JsonNode frame(List<JsonNode> frames, int i, int opcode, int dqpn, int psn, int payload) {
        JsonNode f = frames.get(i);
        assertThat(f.path("opcode").asInt()).as("opcode of frame " + i + ": " + f).isEqualTo(opcode);
        assertThat(f.path("dqpn").asInt()).as("destination QP of frame " + i).isEqualTo(dqpn);
        assertThat(f.path("psn").asInt()).as("PSN of frame " + i).isEqualTo(psn);
        assertThat(payload(f)).as("payload length of frame " + i).isEqualTo(payload);
        int kept = Math.min(payload, PcapTrace.SNAPLEN_PAYLOAD);
        int ext = RoceFrame.extensionLength(opcode);
        assertThat(f.path("caplen").asInt()).as("captured bytes of frame " + i)
                .isEqualTo(HEADERS + ext + kept + (kept == payload ? RoceFrame.pad(payload) + 4 : 0));
        return f;
    }

    @Test
    void aLoopbackWorkloadReadsAsRoceV2() throws Exception {
        assumeScapy();
        Path dir = Files.createTempDirectory(tmp, "ernic-trace");
        Path pcap = dir.resolve("rdma.pcap");
        ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("ernic.sock").toString()));
        open.add(server);
        PcapTrace trace = ServeCommand.openTrace(pcap);
        server.traceRdma(trace);
        IonicDriverModel drv = IonicDriverModel.connect(server.vfioUser().socketPath());
        open.add(drv);
        RdmaVerbs v = RdmaVerbs.open(drv);

        Cq cqA = v.createCq(6), cqB = v.createCq(6);
        Qp a = v.createQp(RC, cqA, cqA, 5, 5, 8, QP_ALL), b = v.createQp(RC, cqB, cqB, 5, 5, 8, QP_ALL);
        v.connect(a, ernic.model.rdma.Path.of("10.0.0.1", "10.0.0.2"), b, ernic.model.rdma.Path.of("10.0.0.2", "10.0.0.1"));
        Buffer bufA = v.buffer(5 * 4096, true), bufB = v.buffer(5 * 4096, true);
        Mr mrA = v.regMr(bufA, 0, bufA.length, ALL), mrB = v.regMr(bufB, 0, bufB.length, ALL);
        byte[] hello = "hello, RoCE".getBytes(StandardCharsets.US_ASCII);
        bufA.put(0, hello);

        v.postRecv(b, 1, mrB.va(), 16_000, mrB.lkey());
        wr.reset().sge(mrA.va(), hello.length, mrA.lkey());
        v.postSend(a, wr);                                              // SEND_ONLY + ACK
        next(v, cqA);
        next(v, cqB);
        v.postRecv(b, 2, mrB.va(), 16_000, mrB.lkey());
        wr.reset().sge(mrA.va(), 9000, mrA.lkey());
        v.postSend(a, wr);                                              // SEND FIRST, MIDDLE, LAST (MTU 4096) + ACK
        next(v, cqA);
        next(v, cqB);
        oneSided(WRITE, mrA, 0, 300, mrB, 100);
        v.postSend(a, wr);                                              // WRITE_ONLY (cut at 256) + ACK
        next(v, cqA);
        oneSided(READ, mrA, 8192, 64, mrB, 0);
        v.postSend(a, wr);                                              // READ_REQUEST + READ_RESPONSE_ONLY
        next(v, cqA);
        bufB.putLong(4096, 41);
        oneSided(ATOMIC_FA, mrA, 12288, 8, mrB, 4096);
        wr.swapAdd = 1;
        v.postSend(a, wr);                                              // FETCH_ADD + ATOMIC_ACKNOWLEDGE
        next(v, cqA);

        Cq cqU = v.createCq(5);
        Qp s = udQp(v, cqU), r = udQp(v, cqU);
        Ah ah = v.createAh(ernic.model.rdma.Path.of("192.168.7.1", "192.168.7.2"));
        v.postRecv(r, 3, mrB.va(), 1000, mrB.lkey());
        wr.reset().sge(mrA.va(), 300, mrA.lkey());
        wr.ah = ah;
        wr.destQpn = r.id;
        wr.qkey = 0x1111_0000;
        v.postSend(s, wr);                                              // UD SEND_ONLY with a DETH
        next(v, cqU);
        next(v, cqU);
        oneSided(READ, mrA, 0, 9000, mrB, 0);
        v.postSend(a, wr);                                              // READ_REQUEST + RESPONSE FIRST, MIDDLE, LAST
        next(v, cqA);
        v.postRecv(b, 4, mrB.va(), 16_000, mrB.lkey());
        wr.reset().sge(mrA.va(), hello.length, mrA.lkey());
        v.postSend(a, wr);                                              // SEND_ONLY after the READ's PSNs + ACK
        next(v, cqA);
        next(v, cqB);
        byte[] readBack = bufA.get(0, PcapTrace.SNAPLEN_PAYLOAD);

        java.util.Map<String, Long> totals = server.vfioUser().eventLoop()
                .submit(() -> server.counterRegistry().totals()).get(5, TimeUnit.SECONDS);
        assertThat(totals).as("the trace's counters are in the registry").containsKeys("rdma.trace.frames_written",
                "rdma.trace.frames_dropped", "rdma.trace.write_errors", "rdma.trace.flushes");
        drv.close();
        open.remove(drv);
        server.close();
        open.remove(server);
        assertThat(trace.counters().get(TraceCounter.FRAMES_DROPPED)).isZero();

        List<JsonNode> f = dissect(pcap);
        assertThat(f).hasSize(19);
        assertThat(trace.counters().get(TraceCounter.FRAMES_WRITTEN)).isEqualTo(19);
        JsonNode send = frame(f, 0, 0x04, b.id, 0, hello.length);
        assertThat(send.path("src").asText()).isEqualTo("10.0.0.1");
        assertThat(send.path("dst").asText()).isEqualTo("10.0.0.2");
        assertThat(send.path("ackreq").asInt()).isEqualTo(1);
        assertThat(send.path("after_bth").asText()).startsWith(java.util.HexFormat.of().formatHex(hello));
        JsonNode ack = frame(f, 1, 0x11, a.id, 0, 0);
        assertThat(ack.path("src").asText()).isEqualTo("10.0.0.2");
        assertThat(ack.path("syndrome").asInt()).isEqualTo(TransportHeader.AETH_ACK);
        assertThat(ack.path("msn").asInt()).isEqualTo(1);
        frame(f, 2, 0x00, b.id, 1, 4096);
        frame(f, 3, 0x01, b.id, 2, 4096);
        frame(f, 4, 0x02, b.id, 3, 9000 - 8192);
        assertThat(frame(f, 5, 0x11, a.id, 3, 0).path("msn").asInt()).isEqualTo(2);
        JsonNode write = frame(f, 6, 0x0a, b.id, 4, 300);
        assertThat(write.path("after_bth").asText()).as("RETH: VA, R_Key, DMA length").startsWith(
                String.format("%016x%08x%08x", mrB.va() + 100, mrB.rkey(), 300));
        frame(f, 7, 0x11, a.id, 4, 0);
        frame(f, 8, 0x0c, b.id, 5, 0);
        frame(f, 9, 0x10, a.id, 5, 64);
        JsonNode fa = frame(f, 10, 0x14, b.id, 6, 0);
        assertThat(fa.path("after_bth").asText()).as("AtomicETH: VA, R_Key, add, compare").startsWith(
                String.format("%016x%08x%016x", mrB.va() + 4096, mrB.rkey(), 1));
        JsonNode faAck = frame(f, 11, 0x12, a.id, 6, 0);
        assertThat(faAck.path("after_bth").asText()).as("AETH, then AtomicAckETH: the value before")
                .startsWith(String.format("1f%06x%016x", 5, 41));
        JsonNode ud = frame(f, 12, 0x64, r.id, 0, 300);
        assertThat(ud.path("src").asText()).isEqualTo("192.168.7.1");
        assertThat(ud.path("after_bth").asText()).as("DETH: Q_Key, source QP")
                .startsWith(String.format("%08x%08x", 0x1111_0000, s.id));
        frame(f, 13, 0x0c, b.id, 7, 0);
        JsonNode first = frame(f, 14, 0x0d, a.id, 7, 4096);
        assertThat(first.path("after_bth").asText()).as("AETH, then the first bytes read")
                .startsWith(String.format("1f%06x", 6) + java.util.HexFormat.of().formatHex(readBack, 0, 20));
        frame(f, 15, 0x0e, a.id, 8, 4096);
        frame(f, 16, 0x0f, a.id, 9, 9000 - 8192);
        frame(f, 17, 0x04, b.id, 10, hello.length);
        frame(f, 18, 0x11, a.id, 10, 0);
    }

    /**
     * Across a mesh: the requester's server traces its guest's requests and the peer's answers (READ data,
     * the atomic's old value); the responder's server traces what its own guest starts, here nothing.
     */
    @Test
    void aMeshWorkloadReadsAsRoceV2OnTheRequestersServer() throws Exception {
        assumeScapy();
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path dir = Files.createTempDirectory(tmp, "ernic-trace-mesh");
        ErnicServer manager = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("m.sock").toString())
                .withMesh("tcp:manager:listen:" + port, "10.1.0.1"));
        open.add(manager);
        ErnicServer worker = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("w.sock").toString())
                .withMesh("tcp:worker:localhost:" + port, "10.1.0.2"));
        open.add(worker);
        PcapTrace traceM = ServeCommand.openTrace(dir.resolve("m.pcap")), traceW = ServeCommand.openTrace(dir.resolve("w.pcap"));
        manager.traceRdma(traceM);
        worker.traceRdma(traceW);
        for (int i = 0; i < 200 && !(manager.mesh().gidTable().containsKey(Gid.parse("10.1.0.2"))
                && worker.mesh().gidTable().containsKey(Gid.parse("10.1.0.1"))); i++) {
            Thread.sleep(50);
        }
        assertThat(manager.mesh().gidTable()).containsKey(Gid.parse("10.1.0.2"));

        IonicDriverModel dm = IonicDriverModel.connect(manager.vfioUser().socketPath()),
                dw = IonicDriverModel.connect(worker.vfioUser().socketPath());
        open.add(dm);
        open.add(dw);
        RdmaVerbs vm = RdmaVerbs.open(dm), vw = RdmaVerbs.open(dw);
        Cq cqA = vm.createCq(6), cqB = vw.createCq(6);
        Qp a = vm.createQp(RC, cqA, cqA, 5, 5, 8, QP_ALL), b = vw.createQp(RC, cqB, cqB, 5, 5, 8, QP_ALL);
        vm.init(a, QP_ALL);
        vw.init(b, QP_ALL);
        vm.rtr(a, b.id, ernic.model.rdma.Path.of("10.1.0.1", "10.1.0.2"));
        vw.rtr(b, a.id, ernic.model.rdma.Path.of("10.1.0.2", "10.1.0.1"));
        vm.rts(a);
        vw.rts(b);
        Buffer bufA = vm.buffer(4 * 4096, true), bufB = vw.buffer(4 * 4096, true);
        Mr mrA = vm.regMr(bufA, 0, bufA.length, ALL), mrB = vw.regMr(bufB, 0, bufB.length, ALL);
        byte[] there = "data on the worker".getBytes(StandardCharsets.US_ASCII);
        bufB.put(0, there);
        bufB.putLong(4096, 7);

        vw.postRecv(b, 1, mrB.va() + 8192, 4096, mrB.lkey());
        wr.reset().sge(mrA.va(), 100, mrA.lkey());
        vm.postSend(a, wr);                                             // SEND_ONLY + ACK
        next(vm, cqA);
        next(vw, cqB);
        oneSided(WRITE, mrA, 0, 2000, mrB, 12288);
        vm.postSend(a, wr);                                             // WRITE_ONLY + ACK
        next(vm, cqA);
        oneSided(READ, mrA, 4096, there.length, mrB, 0);
        vm.postSend(a, wr);                                             // READ_REQUEST + READ_RESPONSE_ONLY
        next(vm, cqA);
        oneSided(ATOMIC_CS, mrA, 8192, 8, mrB, 4096);
        wr.compare = 7;
        wr.swapAdd = 9;
        vm.postSend(a, wr);                                             // COMPARE_SWAP + ATOMIC_ACKNOWLEDGE
        next(vm, cqA);
        assertThat(bufB.getLong(4096)).isEqualTo(9);

        for (AutoCloseable c : List.of(dm, dw, worker, manager)) {
            c.close();
            open.remove(c);
        }
        List<JsonNode> f = dissect(dir.resolve("m.pcap"));
        assertThat(f).hasSize(8);
        assertThat(traceM.counters().get(TraceCounter.FRAMES_WRITTEN)).isEqualTo(8);
        JsonNode send = frame(f, 0, 0x04, b.id, 0, 100);
        assertThat(send.path("src").asText()).isEqualTo("10.1.0.1");
        assertThat(send.path("dst").asText()).isEqualTo("10.1.0.2");
        JsonNode ack = frame(f, 1, 0x11, a.id, 0, 0);
        assertThat(ack.path("src").asText()).isEqualTo("10.1.0.2");
        frame(f, 2, 0x0a, b.id, 1, 2000);
        frame(f, 3, 0x11, a.id, 1, 0);
        frame(f, 4, 0x0c, b.id, 2, 0);
        JsonNode read = frame(f, 5, 0x10, a.id, 2, there.length);
        assertThat(read.path("after_bth").asText()).as("AETH, then the data read on the worker")
                .startsWith(String.format("1f%06x", 3) + java.util.HexFormat.of().formatHex(there));
        frame(f, 6, 0x13, b.id, 3, 0);
        assertThat(frame(f, 7, 0x12, a.id, 3, 0).path("after_bth").asText()).as("the value before the swap")
                .startsWith(String.format("1f%06x%016x", 4, 7));
        assertThat(dissect(dir.resolve("w.pcap"))).as("the worker's guest started nothing").isEmpty();
    }

    /** A UD QP with Q_Key 0x11110000 on {@code cq}, in RTS. */
    static Qp udQp(RdmaVerbs v, Cq cq) throws Exception {
        Qp qp = v.createQp(UD, cq, cq, 4, 4, 7, 0);
        v.init(qp, 0x1111_0000);
        v.rtr(qp, 0, null);
        v.rts(qp);
        return qp;
    }
}
