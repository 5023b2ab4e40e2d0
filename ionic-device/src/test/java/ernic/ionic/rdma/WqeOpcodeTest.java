package ernic.ionic.rdma;

import ernic.ionic.base.RdmaIdentity;
import ernic.roce.IbOpcode;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** The WQE opcode table: its codes are ionic_fw.h's, and each maps to the IBTA opcodes and properties it should. */
class WqeOpcodeTest {
    @Test
    void theCodesAreIonicFwHs() {
        // enum ionic_v1_op, in order
        String[] fw = {"SEND", "SEND_INV", "SEND_IMM", "RDMA_READ", "RDMA_WRITE", "RDMA_WRITE_IMM", "ATOMIC_CS",
                "ATOMIC_FA", "REG_MR", "LOCAL_INV", "BIND_MW"};
        for (int i = 0; i < fw.length; i++) {
            assertThat(WqeOpcode.of(i)).isEqualTo(WqeOpcode.valueOf(fw[i]));
            assertThat(WqeOpcode.of(i).traceName()).isEqualTo(fw[i]);
        }
        assertThat(WqeOpcode.values()).hasSize(RdmaIdentity.QP_OPCODES); // what the LIF identity advertises
        assertThat(WqeOpcode.of(fw.length)).isNull();
        assertThat(WqeOpcode.of(-1)).isNull();
        assertThat(WqeOpcode.of(255)).isNull();
        assertThat(WqeOpcode.nameOf(200)).isEqualTo("200");
    }

    @Test
    void eachMapsToItsIbtaOpcodes() {
        assertThat(WqeOpcode.SEND.request).isEqualTo(IbOpcode.RC_SEND_ONLY);
        assertThat(WqeOpcode.SEND_IMM.request).isEqualTo(IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE);
        assertThat(WqeOpcode.SEND_INV.request).isEqualTo(IbOpcode.RC_SEND_ONLY_WITH_INVALIDATE);
        assertThat(WqeOpcode.RDMA_WRITE.request).isEqualTo(IbOpcode.RC_RDMA_WRITE_ONLY);
        assertThat(WqeOpcode.RDMA_WRITE_IMM.request).isEqualTo(IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
        assertThat(WqeOpcode.RDMA_READ.request).isEqualTo(IbOpcode.RC_RDMA_READ_REQUEST);
        assertThat(WqeOpcode.RDMA_READ.response).isEqualTo(IbOpcode.RC_RDMA_READ_RESPONSE_ONLY);
        assertThat(WqeOpcode.ATOMIC_CS.request).isEqualTo(IbOpcode.RC_CMP_SWAP);
        assertThat(WqeOpcode.ATOMIC_FA.request).isEqualTo(IbOpcode.RC_FETCH_ADD);
        assertThat(WqeOpcode.ATOMIC_CS.response).isEqualTo(IbOpcode.RC_ATOMIC_ACKNOWLEDGE);
        for (WqeOpcode o : WqeOpcode.values()) {
            if (o.local) {
                assertThat(o.request).as(o.name()).isNull();
                assertThat(o.response).as(o.name()).isNull();
                continue;
            }
            assertThat(o.request.transport).isEqualTo(IbOpcode.RC);
            assertThat(o.request.request).as(o.name()).isTrue();
            assertThat(o.request.position).isEqualTo(IbOpcode.Position.ONLY);
            assertThat(o.response.request).as(o.name()).isFalse();
            assertThat(o.response.has(IbOpcode.Header.AETH)).isTrue();
            // the request carries an rkey (RETH or AtomicETH) exactly when the WQE is keyed
            assertThat(o.request.has(IbOpcode.Header.RETH) || o.request.has(IbOpcode.Header.ATOMIC_ETH))
                    .as(o.name()).isEqualTo(o.keyed);
        }
        // the SENDs exist on UD (but SEND with invalidate), the SENDs and WRITEs on UC
        assertThat(WqeOpcode.SEND.request.on(IbOpcode.UD)).isEqualTo(IbOpcode.UD_SEND_ONLY);
        assertThat(WqeOpcode.SEND_IMM.request.on(IbOpcode.UD)).isEqualTo(IbOpcode.UD_SEND_ONLY_WITH_IMMEDIATE);
        assertThat(WqeOpcode.SEND_INV.request.on(IbOpcode.UD)).isNull();
        assertThat(WqeOpcode.RDMA_WRITE_IMM.request.on(IbOpcode.UC)).isEqualTo(IbOpcode.UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
        assertThat(WqeOpcode.RDMA_READ.request.on(IbOpcode.UC)).isNull();
    }

    @Test
    void theProperties() {
        assertThat(names(o -> o.takesReceive)).containsExactly("SEND", "SEND_INV", "SEND_IMM", "RDMA_WRITE_IMM");
        assertThat(names(o -> o.keyed)).containsExactly("RDMA_READ", "RDMA_WRITE", "RDMA_WRITE_IMM", "ATOMIC_CS",
                "ATOMIC_FA");
        assertThat(names(o -> o.payload)).containsExactly("SEND", "SEND_INV", "SEND_IMM", "RDMA_WRITE",
                "RDMA_WRITE_IMM");
        assertThat(names(o -> o.landsLocally)).containsExactly("RDMA_READ", "ATOMIC_CS", "ATOMIC_FA");
        assertThat(names(o -> o.local)).containsExactly("REG_MR", "LOCAL_INV", "BIND_MW");
        assertThat(names(o -> o.completesByMsn)).containsExactly("SEND", "SEND_INV", "SEND_IMM", "RDMA_READ",
                "RDMA_WRITE", "RDMA_WRITE_IMM", "ATOMIC_CS", "ATOMIC_FA");
        assertThat(names(o -> o.immediate)).containsExactly("SEND_IMM", "RDMA_WRITE_IMM");
        assertThat(names(o -> o.invalidate)).containsExactly("SEND_INV");
        assertThat(WqeOpcode.SEND.recvOp).isEqualTo(V1.Cqe.RECV_OP_SEND);
        assertThat(WqeOpcode.SEND_INV.recvOp).isEqualTo(V1.Cqe.RECV_OP_SEND_INV);
        assertThat(WqeOpcode.SEND_IMM.recvOp).isEqualTo(V1.Cqe.RECV_OP_SEND_IMM);
        assertThat(WqeOpcode.RDMA_WRITE_IMM.recvOp).isEqualTo(V1.Cqe.RECV_OP_RDMA_IMM);
    }

    @Test
    void theCountersAndTheMeshOpcodes() {
        assertThat(WqeOpcode.SEND_INV.requests(false)).isEqualTo(RdmaCounters.Device.TX_SEND_REQS);
        assertThat(WqeOpcode.SEND_IMM.requests(true)).isEqualTo(RdmaCounters.Device.TX_UD_REQS);
        assertThat(WqeOpcode.SEND.bytes(true)).isEqualTo(RdmaCounters.Device.TX_UD_BYTES);
        assertThat(WqeOpcode.RDMA_WRITE_IMM.bytes(false)).isEqualTo(RdmaCounters.Device.TX_WRITE_BYTES);
        assertThat(WqeOpcode.RDMA_READ.requests(false)).isEqualTo(RdmaCounters.Device.TX_READ_REQS);
        assertThat(WqeOpcode.ATOMIC_FA.requests(false)).isEqualTo(RdmaCounters.Device.TX_ATOMIC_REQS);
        assertThat(WqeOpcode.ATOMIC_FA.bytes(false)).isNull();
        assertThat(WqeOpcode.BIND_MW.requests(false)).isEqualTo(RdmaCounters.Device.LOCAL_REQS);
        for (WqeOpcode o : WqeOpcode.values()) {
            assertThat(o.local ? o.mesh == 0 : WqeOpcode.ofMesh(o.mesh) == o).as(o.name()).isTrue();
        }
        assertThat(WqeOpcode.ofMesh(WireHeader.UD_SEND)).isNull();
        assertThat(WqeOpcode.ofMesh(WireHeader.ACK)).isNull();
    }

    private static String[] names(java.util.function.Predicate<WqeOpcode> p) {
        return Arrays.stream(WqeOpcode.values()).filter(p).map(Enum::name).toArray(String[]::new);
    }
}
