package ernic.roce;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static ernic.roce.IbOpcode.Header.*;
import static org.assertj.core.api.Assertions.assertThat;

/** The opcode table against IBTA vol. 1, table 38, written out here a second time as the spec lists it. */
class IbOpcodeTest {
    /** One line of table 38: opcode byte, name, the headers after the BTH ("-" none), "payload" or not. */
    private static final String[] SPEC = {
            "0x00 RC SEND First                         - payload",
            "0x01 RC SEND Middle                        - payload",
            "0x02 RC SEND Last                          - payload",
            "0x03 RC SEND Last with Immediate           ImmDt payload",
            "0x04 RC SEND Only                          - payload",
            "0x05 RC SEND Only with Immediate           ImmDt payload",
            "0x06 RC RDMA WRITE First                   RETH payload",
            "0x07 RC RDMA WRITE Middle                  - payload",
            "0x08 RC RDMA WRITE Last                    - payload",
            "0x09 RC RDMA WRITE Last with Immediate     ImmDt payload",
            "0x0a RC RDMA WRITE Only                    RETH payload",
            "0x0b RC RDMA WRITE Only with Immediate     RETH,ImmDt payload",
            "0x0c RC RDMA READ Request                  RETH -",
            "0x0d RC RDMA READ response First           AETH payload",
            "0x0e RC RDMA READ response Middle          - payload",
            "0x0f RC RDMA READ response Last            AETH payload",
            "0x10 RC RDMA READ response Only            AETH payload",
            "0x11 RC Acknowledge                        AETH -",
            "0x12 RC ATOMIC Acknowledge                 AETH,AtomicAckETH -",
            "0x13 RC CmpSwap                            AtomicETH -",
            "0x14 RC FetchAdd                           AtomicETH -",
            "0x16 RC SEND Last with Invalidate          IETH payload",
            "0x17 RC SEND Only with Invalidate          IETH payload",
            "0x20 UC SEND First                         - payload",
            "0x21 UC SEND Middle                        - payload",
            "0x22 UC SEND Last                          - payload",
            "0x23 UC SEND Last with Immediate           ImmDt payload",
            "0x24 UC SEND Only                          - payload",
            "0x25 UC SEND Only with Immediate           ImmDt payload",
            "0x26 UC RDMA WRITE First                   RETH payload",
            "0x27 UC RDMA WRITE Middle                  - payload",
            "0x28 UC RDMA WRITE Last                    - payload",
            "0x29 UC RDMA WRITE Last with Immediate     ImmDt payload",
            "0x2a UC RDMA WRITE Only                    RETH payload",
            "0x2b UC RDMA WRITE Only with Immediate     RETH,ImmDt payload",
            "0x64 UD SEND Only                          DETH payload",
            "0x65 UD SEND Only with Immediate           DETH,ImmDt payload",
    };

    private static IbOpcode.Header header(String spec) {
        return switch (spec) {
            case "DETH" -> DETH;
            case "RETH" -> RETH;
            case "AtomicETH" -> ATOMIC_ETH;
            case "AETH" -> AETH;
            case "AtomicAckETH" -> ATOMIC_ACK_ETH;
            case "ImmDt" -> IMM_DT;
            case "IETH" -> IETH;
            default -> throw new IllegalArgumentException(spec);
        };
    }

    @Test
    void everyOpcodeHasTheSpecsHeadersLengthAndPayload() {
        List<IbOpcode> seen = new ArrayList<>();
        for (String line : SPEC) {
            String[] w = line.trim().split("\\s+");
            int code = Integer.decode(w[0]);
            String headers = w[w.length - 2];
            boolean payload = w[w.length - 1].equals("payload");
            IbOpcode o = IbOpcode.of(code);
            assertThat(o).as(line).isNotNull();
            Set<IbOpcode.Header> want = headers.equals("-") ? EnumSet.noneOf(IbOpcode.Header.class)
                    : java.util.Arrays.stream(headers.split(",")).map(IbOpcodeTest::header)
                    .collect(Collectors.toCollection(() -> EnumSet.noneOf(IbOpcode.Header.class)));
            Set<IbOpcode.Header> got = EnumSet.noneOf(IbOpcode.Header.class);
            for (IbOpcode.Header h : IbOpcode.Header.values()) {
                if (o.has(h)) {
                    got.add(h);
                }
            }
            assertThat(got).as(line).isEqualTo(want);
            assertThat(o.headerLength).as(line).isEqualTo(want.stream().mapToInt(h -> h.length).sum());
            assertThat(IbOpcode.headerLength(code)).isEqualTo(o.headerLength);
            assertThat(o.payload).as(line).isEqualTo(payload);
            assertThat(o.transport).as(line).isEqualTo(switch (w[1]) {
                case "RC" -> IbOpcode.RC;
                case "UC" -> IbOpcode.UC;
                default -> IbOpcode.UD;
            });
            assertThat(o.operation).isEqualTo(code & IbOpcode.OPERATION_MASK);
            String name = line.substring(5, 45).trim();
            assertThat(o.position).as(line).isEqualTo(name.contains("First") ? IbOpcode.Position.FIRST
                    : name.contains("Middle") ? IbOpcode.Position.MIDDLE : name.contains("Last") ? IbOpcode.Position.LAST
                    : IbOpcode.Position.ONLY);
            assertThat(o.request).as(line).isEqualTo(!name.contains("response") && !name.contains("Acknowledge"));
            assertThat(o.immediate()).isEqualTo(name.contains("Immediate"));
            assertThat(o.invalidate()).isEqualTo(name.contains("Invalidate"));
            seen.add(o);
        }
        assertThat(seen).containsExactlyInAnyOrder(IbOpcode.values()); // and the table has no row the spec lacks
    }

    @Test
    void theHeaderLengthsAreTheSpecs() {
        assertThat(DETH.length).isEqualTo(8);
        assertThat(RETH.length).isEqualTo(16);
        assertThat(ATOMIC_ETH.length).isEqualTo(28);
        assertThat(AETH.length).isEqualTo(4);
        assertThat(ATOMIC_ACK_ETH.length).isEqualTo(8);
        assertThat(IMM_DT.length).isEqualTo(4);
        assertThat(IETH.length).isEqualTo(4);
    }

    @Test
    void aMessageIsCutFromItsOnlyOpcode() {
        assertThat(IbOpcode.RC_SEND_ONLY.packet(0, 1)).isEqualTo(IbOpcode.RC_SEND_ONLY);
        assertThat(IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE.packet(0, 3)).isEqualTo(IbOpcode.RC_SEND_FIRST);
        assertThat(IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE.packet(1, 3)).isEqualTo(IbOpcode.RC_SEND_MIDDLE);
        assertThat(IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE.packet(2, 3)).isEqualTo(IbOpcode.RC_SEND_LAST_WITH_IMMEDIATE);
        assertThat(IbOpcode.RC_SEND_ONLY_WITH_INVALIDATE.packet(1, 2)).isEqualTo(IbOpcode.RC_SEND_LAST_WITH_INVALIDATE);
        assertThat(IbOpcode.UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.packet(0, 2)).isEqualTo(IbOpcode.UC_RDMA_WRITE_FIRST);
        assertThat(IbOpcode.UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE.packet(1, 2))
                .isEqualTo(IbOpcode.UC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
        assertThat(IbOpcode.RC_RDMA_READ_RESPONSE_ONLY.packet(5, 9)).isEqualTo(IbOpcode.RC_RDMA_READ_RESPONSE_MIDDLE);
        assertThat(IbOpcode.RC_RDMA_READ_REQUEST.packet(0, 4)).isEqualTo(IbOpcode.RC_RDMA_READ_REQUEST);
        for (IbOpcode o : IbOpcode.values()) {
            if (o.position != IbOpcode.Position.ONLY) {
                continue;
            }
            for (int n = 1; n <= 3; n++) {
                for (int i = 0; i < n; i++) {
                    IbOpcode p = o.packet(i, n);
                    // same transport and kind; the first packet carries what the ONLY carries before the payload
                    // but its ImmDt / IETH, the last what goes with completion
                    assertThat(p.transport).isEqualTo(o.transport);
                    assertThat(p.request).isEqualTo(o.request);
                    assertThat(p.payload).isEqualTo(o.payload);
                    assertThat(p.first()).isEqualTo(i == 0 || p == o);
                    assertThat(p.last()).isEqualTo(i == n - 1 || p == o);
                    if (p.last()) {
                        assertThat(p.immediate()).isEqualTo(o.immediate());
                        assertThat(p.invalidate()).isEqualTo(o.invalidate());
                    }
                    assertThat(p.has(RETH)).isEqualTo(o.has(RETH) && p.first());
                }
            }
        }
    }

    @Test
    void anOperationOnAnotherTransport() {
        assertThat(IbOpcode.RC_SEND_ONLY.on(IbOpcode.UD)).isEqualTo(IbOpcode.UD_SEND_ONLY);
        assertThat(IbOpcode.RC_RDMA_WRITE_ONLY.on(IbOpcode.UC)).isEqualTo(IbOpcode.UC_RDMA_WRITE_ONLY);
        assertThat(IbOpcode.RC_RDMA_READ_REQUEST.on(IbOpcode.UC)).isNull();
        assertThat(IbOpcode.of(0x15)).isNull();
        assertThat(IbOpcode.of(-1)).isNull();
        assertThat(IbOpcode.of(256)).isNull();
        assertThat(IbOpcode.headerLength(0x15)).isZero();
    }
}
