package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.p4hook.P4Scope;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.rdma.Buffer;
import ernic.model.rdma.Mr;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;

import static ernic.model.rdma.RdmaVerbs.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The P4 engine's WQE hook, driven by the driver model: the programs a real-guest test uses
 * (integration-tests/src/test/resources/p4) drop WRITEs to a chosen rkey, and turn a WRITE into an fp8
 * accumulate or a format conversion. Expected bytes are worked by hand from the OCP FP8 spec (E4M3: bias 7,
 * 1.0 = 0x38, 2.0 = 0x40, 448 = 0x7e the largest normal, NaN = 0x7f; E5M2: 1.0 = 0x3c).
 */
class P4WqeHookTest extends RcPairTest {
    static final int ALL = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;
    static final java.nio.file.Path PROGRAMS = java.nio.file.Path.of("..", "integration-tests", "src", "test",
            "resources", "p4");

    Buffer bufA, bufB, bufC;
    Mr mrA, mrB, mrC;

    void start(String program, String entries) throws IOException {
        String json = Files.readString(PROGRAMS.resolve(program));
        IonicDevice device = new IonicDevice(ProfileLoader.compat(), FaultPlan.none());
        device.p4(P4Hooks.load(json, program, null, null, P4Scope.NONE));
        startRcPair(device);
        bufA = v.buffer(8192, true);
        bufB = v.buffer(8192, true);
        bufC = v.buffer(4096, true);
        mrA = v.regMr(bufA, 0, bufA.length, ALL);
        mrB = v.regMr(bufB, 0, bufB.length, ALL);
        mrC = v.regMr(bufC, 0, 8, ALL); // 8 bytes only: a conversion longer than that must not land
        // The entries name the MRs' rkeys, known once they are registered (as a guest's devcmd 71 would add them).
        dev.p4().engine().applyEntries(entries.formatted(mrB.rkey(), mrC.rkey()), "test");
    }

    /** RDMA {@code opcode} by a from bufA at 0, {@code n} bytes, to {@code remoteVa} under {@code rkey}. */
    int post(int opcode, int n, long remoteVa, int rkey) {
        wr.reset().sge(mrA.va(), n, mrA.lkey());
        wr.opcode = opcode;
        wr.remoteVa = remoteVa;
        wr.rkey = rkey;
        v.postSend(a, wr);
        assertThat(v.pollWait(cqA, wc, 2000)).isTrue();
        return wc.status;
    }

    long counter(String name) {
        return dev.counters().getOrDefault(name, -1L);
    }

    static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = (byte) v[i];
        }
        return b;
    }

    static final String DENY_B = "table_add wqe_acl deny 1 4&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 1\n# %08x\n";

    @Test
    void aWriteToTheChosenRkeyIsDroppedWithALocalProtectionError() throws IOException {
        start("rdma_drop_write.json", DENY_B);
        bufA.put(0, bytes(1, 2, 3, 4));
        bufB.put(0, bytes(9, 9, 9, 9));
        assertThat(post(WRITE, 4, mrB.va(), mrB.rkey())).isEqualTo(STS_LOCAL_PROT_ERR);
        assertThat(bufB.get(0, 4)).containsExactly(9, 9, 9, 9);
        startOver();
        // Another rkey, and a READ of the chosen one, are not WRITEs to it: they go on.
        assertThat(post(WRITE, 4, mrC.va(), mrC.rkey())).isEqualTo(STS_OK);
        assertThat(bufC.get(0, 4)).containsExactly(1, 2, 3, 4);
        assertThat(post(READ, 4, mrB.va(), mrB.rkey())).isEqualTo(STS_OK);
        assertThat(bufA.get(0, 4)).containsExactly(9, 9, 9, 9);
        assertThat(counter("p4.wqe.dropped")).isEqualTo(1);
        assertThat(counter("p4.wqe.wqes")).isEqualTo(3);
    }

    /** Accumulate E4M3 += E4M3 into mrB (saturating), fp32 -> E4M3 into mrC. */
    static final String FP8 = """
            table_add wqe_extern fp8_accumulate 1 4&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 1 1 0 1
            table_add wqe_extern format_convert 1 4&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 5 1 0 2
            """;

    @Test
    void aWriteBecomesAnFp8AccumulateWithTheSpecsRoundingSaturationAndNan() throws IOException {
        start("rdma_fp8.json", FP8);
        // dst:  1.0   1.0   448   1.0   2.0   NaN   1.0   1.0     -0.5
        // src:  1.0   0.5   448  -1.0   1.0   1.0   0.125 0.0625  0.25
        // sum:  2.0   1.5   896->448 0  3.0   NaN   1.125 1.0625->1.0 (tie to even) -0.25
        bufB.put(0, bytes(0x38, 0x38, 0x7e, 0x38, 0x40, 0x7f, 0x38, 0x38, 0xb0, 0x55));
        bufA.put(0, bytes(0x38, 0x30, 0x7e, 0xb8, 0x38, 0x38, 0x20, 0x18, 0x28));
        assertThat(post(WRITE, 9, mrB.va(), mrB.rkey())).isEqualTo(STS_OK);
        assertThat(bufB.get(0, 10)).containsExactly(bytes(0x40, 0x3c, 0x7e, 0x00, 0x44, 0x7f, 0x39, 0x38, 0xa8, 0x55));
        assertThat(counter("p4.wqe.fp8_accumulate.ops")).isEqualTo(1);
        assertThat(counter("p4.wqe.fp8_accumulate.values")).isEqualTo(9);
    }

    @Test
    void aWriteBecomesAConversionFromFp32ToE4m3() throws IOException {
        start("rdma_fp8.json", FP8);
        ByteBuffer f = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        f.putFloat(1.0f).putFloat(-2.0f).putFloat(1000f).putFloat(0.3f);
        bufA.put(0, f.array());
        bufC.put(0, bytes(0, 0, 0, 0, 0x55, 0x55, 0x55, 0x55));
        // 1.0 -> 0x38; -2.0 -> 0xc0; 1000 saturates to 448 = 0x7e; 0.3 = 0.25 * 1.2 rounds to 0.25 * 1.25 = 0x2a.
        assertThat(post(WRITE, 16, mrC.va(), mrC.rkey())).isEqualTo(STS_OK);
        assertThat(bufC.get(0, 8)).containsExactly(bytes(0x38, 0xc0, 0x7e, 0x2a, 0x55, 0x55, 0x55, 0x55));
        assertThat(counter("p4.wqe.format_convert.ops")).isEqualTo(1);
        // 48 bytes of fp32 are 12 E4M3 values: more than mrC's 8 bytes, refused before anything lands.
        bufA.put(0, new byte[48]);
        assertThat(post(WRITE, 48, mrC.va(), mrC.rkey())).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(bufC.get(0, 8)).containsExactly(bytes(0x38, 0xc0, 0x7e, 0x2a, 0x55, 0x55, 0x55, 0x55));
        assertThat(counter("p4.wqe.extern.bad_operand")).isEqualTo(1);
        startOver();
        // 6 bytes are not a whole number of fp32 values.
        assertThat(post(WRITE, 6, mrC.va(), mrC.rkey())).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        assertThat(counter("p4.wqe.extern.bad_request")).isEqualTo(1);
    }

    @Test
    void mixedFormatsNonSaturatingModeAndWidening() throws IOException {
        start("rdma_fp8.json", """
                table_add wqe_extern fp8_accumulate 1 4&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 2 1 1 1
                table_add wqe_extern format_convert 1 4&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 1 4 0 2
                """);
        // E5M2 source into an E4M3 destination, non-saturating: 1.0 (E5M2 0x3c) + 1.0 = 2.0; 448 + 448 overflows:
        // E4M3 has no infinity, so NaN (0x7f); E5M2 infinity (0x7c) + 1.0 is NaN in E4M3 without saturation.
        bufB.put(0, bytes(0x38, 0x7e, 0x38));
        bufA.put(0, bytes(0x3c, 0x5f, 0x7c)); // E5M2 0x5f = 2^(23-15) * 1.75 = 448
        assertThat(post(WRITE, 3, mrB.va(), mrB.rkey())).isEqualTo(STS_OK);
        assertThat(bufB.get(0, 3)).containsExactly(bytes(0x40, 0x7f, 0x7f));
        // E4M3 -> bf16 is exact: 1.0 -> 0x3f80, -2.0 -> 0xc000, 448 -> 0x43e0 (little-endian in memory).
        bufA.put(0, bytes(0x38, 0xc0, 0x7e));
        assertThat(post(WRITE, 3, mrC.va(), mrC.rkey())).isEqualTo(STS_OK);
        assertThat(bufC.get(0, 6)).containsExactly(bytes(0x80, 0x3f, 0x00, 0xc0, 0xe0, 0x43));
    }

    @Test
    void anExternOnSomethingElseThanAPlainWriteIsRefused() throws IOException {
        start("rdma_fp8.json", """
                table_add wqe_extern fp8_accumulate 1 5&&&0xff 0x%08x&&&0xffffffff 0&&&0 => 1 1 0 1
                table_add wqe_extern fp8_accumulate 1 4&&&0xff 0&&&0xffffffff 0&&&0 => 1 1 0 2
                # %08x
                """);
        bufB.put(0, bytes(0x38));
        wr.reset().sge(mrA.va(), 1, mrA.lkey());
        wr.opcode = WRITE_IMM;
        wr.remoteVa = mrB.va();
        wr.rkey = mrB.rkey();
        v.postSend(a, wr);
        assertThat(v.pollWait(cqA, wc, 2000)).isTrue();
        assertThat(wc.status).isEqualTo(STS_LOCAL_QP_OPER_ERR);
        assertThat(bufB.get(0, 1)).containsExactly(0x38);
        startOver();
        // Key 0 with a length is no extern operand.
        assertThat(post(WRITE, 1, 0x1000, 0)).isEqualTo(STS_REMOTE_ACC_ERR);
        assertThat(counter("p4.wqe.extern.bad_request")).isEqualTo(1);
        assertThat(counter("p4.wqe.extern.bad_operand")).isEqualTo(1);
        assertThat(dev.refusals().snapshot()).containsKeys("p4-extern-opcode", "p4-extern-key0");
    }

    @Test
    void framesStillPassUnderAWqeProgram() throws IOException {
        start("rdma_fp8.json", "# %08x %08x");
        java.util.List<byte[]> wire = new java.util.ArrayList<>();
        dev.lif().sink(f -> wire.add(f.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
        assertThat(dev.p4().forWqes()).isTrue();
        // No RX queue is open: a frame from the TAP goes through the program (to the guest side) and finds no queue.
        byte[] f = P4EthernetHookTest.frame(0x02_00_00_ee_00_01L, 0x0aL, 0x0800, 20);
        var seg = java.lang.foreign.Arena.ofAuto().allocate(f.length);
        java.lang.foreign.MemorySegment.copy(java.lang.foreign.MemorySegment.ofArray(f), 0, seg, 0, f.length);
        dev.receive(seg);
        assertThat(counter("p4.eth.rx_to_guest")).isEqualTo(1);
        assertThat(counter("p4.wqe.wqes")).isZero();
    }
}
