package ernic.model.rdma;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the model writes, checked byte by byte against the C headers over plain memory: the doorbell value
 * (ionic_regs.h), byte order of the WQE/CQE helpers (ionic_fw.h is big-endian, the admin structs little-endian),
 * the RoCEv2 header template (ionic_build_hdr) and GIDs, and how a scattered buffer lays its pages out.
 */
class LayoutTest {
    static final HexFormat HEX = HexFormat.of();

    @Test
    void doorbellPacksQidRingAndIndex() {
        assertThat(Fw.doorbell(0xabcdef, 2, 0x1234)).isEqualTo(0xabcdef_02_1234L);
        assertThat(Fw.doorbell(1, 9, 0x1_0005)).as("ring and index are masked").isEqualTo(0x1_01_0005L);
    }

    @Test
    void byteOrderOfTheHelpers() {
        byte[] b = new byte[16];
        MemorySegment s = MemorySegment.ofArray(b);
        Fw.be32(s, 0, 0x01020304);
        Fw.le32(s, 4, 0x01020304);
        Fw.be16(s, 8, 0xa1b2);
        Fw.le16(s, 10, 0xa1b2);
        assertThat(HEX.formatHex(b, 0, 12)).isEqualTo("0102030404030201a1b2b2a1");
        assertThat(Fw.be16(s, 8)).isEqualTo(0xa1b2);
        Fw.be64(s, 0, 0x0102030405060708L);
        assertThat(HEX.formatHex(b, 0, 8)).isEqualTo("0102030405060708");
        assertThat(Fw.le64(s, 0)).isEqualTo(0x0807060504030201L);
    }

    @Test
    void gidsFromAddresses() {
        assertThat(HEX.formatHex(Path.gid("10.0.0.2"))).isEqualTo("00000000000000000000ffff0a000002");
        assertThat(HEX.formatHex(Path.gid("fd00::1"))).isEqualTo("fd000000000000000000000000000001");
        assertThat(Path.of("10.0.0.1", "10.0.0.2").ipv4()).isTrue();
        assertThat(Path.of("fd00::1", "fd00::2").ipv4()).isFalse();
    }

    @Test
    void ipv4TemplateIsEthernetIpv4UdpTo4791() {
        byte[] b = new byte[256];
        int len = Path.of("10.0.0.1", "10.0.0.2").template(MemorySegment.ofArray(b), 64, true);
        assertThat(len).isEqualTo(14 + 20 + 8);
        String h = HEX.formatHex(b, 64, 64 + len);
        assertThat(h.substring(0, 28)).as("dmac, smac, ethertype").isEqualTo("020000000002" + "020000000001" + "0800");
        // version/ihl, tos (ECN ECT(0)), tot_len 0xffff, id 0, DF, ttl 64, UDP, csum 0, saddr, daddr
        assertThat(h.substring(28, 68)).isEqualTo("4502ffff00004000401100000a0000010a000002");
        assertThat(h.substring(68)).as("sport, dport 4791, len 0, csum 0").isEqualTo("c00012b700000000");
        assertThat(b[63]).isZero();
    }

    @Test
    void ipv6TemplateCarriesBothGids() {
        byte[] b = new byte[128];
        int len = Path.of("fd00::1", "fd00::2").template(MemorySegment.ofArray(b), 0, false);
        assertThat(len).isEqualTo(14 + 40 + 8);
        String h = HEX.formatHex(b, 0, len);
        assertThat(h.substring(24, 28)).isEqualTo("86dd");
        assertThat(h.substring(28, 44)).as("version 6, tc 0, payload 0, next UDP, hop 64").isEqualTo("6000000000001140");
        assertThat(h.substring(44, 108)).isEqualTo("fd000000000000000000000000000001fd000000000000000000000000000002");
        assertThat(h.substring(108, 116)).isEqualTo("c00012b7");
    }

    @Test
    void aScatteredBufferSwapsNeighbouringPages() {
        try (Arena arena = Arena.ofConfined()) {
            long iova = 0x1000_0000L;
            MemorySegment ram = arena.allocate(5 * 4096L, 4096);
            Buffer buf = new Buffer(ram, iova, 0x7f00_0000_0000L, iova, 5, 5 * 4096L, true);
            assertThat(buf.page(0)).isEqualTo(iova + 4096);
            assertThat(buf.page(1)).isEqualTo(iova);
            assertThat(buf.page(4)).as("the odd last page stays").isEqualTo(iova + 4 * 4096);
            buf.put(4094, new byte[] {1, 2, 3, 4});
            assertThat(ram.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4096 + 4094)).isEqualTo((byte) 1);
            assertThat(ram.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).as("page 1 lives at 0").isEqualTo((byte) 3);
            assertThat(buf.get(4094, 4)).containsExactly(1, 2, 3, 4);
            buf.putLong(8, 0x1122334455667788L);
            assertThat(buf.getLong(8)).isEqualTo(0x1122334455667788L);
        }
    }

    /** struct ionic_v1_wqe: wqe_id u64 @0, op @8, num_sge_key @9, flags BE16 @10, imm BE32 @12, rdma @16..31, pld @32. */
    @Test
    void aRawWqeLandsAtTheHeaderOffsets() {
        byte[] b = new byte[64];
        new RawWqe().wrap(MemorySegment.ofArray(b)).wqeId(0x0102).op(RdmaVerbs.WRITE).numSgeKey(1)
                .flags(Fw.WQE_FLAG_SIG | Fw.WQE_FLAG_INL).immDataKey(0x0a0b0c0d).rdma(0x1122334455667788L, 0x2233)
                .length(0x99).sge(Fw.WQE_PLD, 1, 0x0102030405060708L, 0x40, 0x5566);
        assertThat(HEX.formatHex(b, 0, 32)).isEqualTo("0201000000000000" + "0401" + "000c" + "0a0b0c0d"
                + "11223344" + "55667788" + "00002233" + "00000099");
        assertThat(HEX.formatHex(b, 48, 64)).isEqualTo("0102030405060708" + "00000040" + "00005566");
    }

    /** struct ionic_v1_cqe: recv wqe_id u64 @0, src_qpn_op BE32 @8, status_length BE32 @24, qid_type_flags BE32 @28. */
    @Test
    void aRawCqeReadsTheHeaderOffsets() {
        byte[] b = new byte[32];
        MemorySegment s = MemorySegment.ofArray(b);
        Fw.le64(s, 0, 100);
        Fw.be32(s, 8, Fw.CQE_RECV_OP_SEND_IMM << Fw.CQE_RECV_OP_SHIFT | 7);
        Fw.be32(s, 20, 0xabcdef);
        Fw.be32(s, 24, 64);
        Fw.be32(s, 28, 3 << Fw.CQE_QID_SHIFT | Fw.CQE_TYPE_RECV << Fw.CQE_TYPE_SHIFT | Fw.CQE_ERROR | Fw.CQE_COLOR);
        RawCqe c = new RawCqe(b);
        assertThat(c.wqeId()).isEqualTo(100);
        assertThat(c.srcQpnOp() & 0xffffff).isEqualTo(7);
        assertThat(c.srcQpnOp() >>> Fw.CQE_RECV_OP_SHIFT & 0x1f).isEqualTo(Fw.CQE_RECV_OP_SEND_IMM);
        assertThat(c.immDataRkey()).isEqualTo(0xabcdef);
        assertThat(c.statusLength()).isEqualTo(64);
        assertThat(c.qid()).isEqualTo(3);
        assertThat(c.type()).isEqualTo(Fw.CQE_TYPE_RECV);
        assertThat(c.error()).isTrue();
        assertThat(c.color()).isTrue();
    }
}
