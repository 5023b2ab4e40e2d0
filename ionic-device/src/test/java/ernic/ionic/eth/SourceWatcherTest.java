package ernic.ionic.eth;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The source address read from a guest's frame: what is reported, and the malformed frames that report nothing. */
class SourceWatcherTest {
    final List<long[]> seen = new ArrayList<>();

    void report(byte[] frame) {
        SourceWatcher.report(MemorySegment.ofArray(frame), frame.length, (hi, lo) -> seen.add(new long[]{hi, lo}));
    }

    /** 12 bytes of MACs, then {@code body} (from the EtherType on). */
    static byte[] frame(int... body) {
        byte[] f = new byte[12 + body.length];
        for (int i = 0; i < body.length; i++) {
            f[12 + i] = (byte) body[i];
        }
        return f;
    }

    static byte[] ipv4(int version, int length) {
        ByteBuffer b = ByteBuffer.allocate(12 + 2 + length);
        b.putShort(12, (short) 0x0800);
        if (length > 0) {
            b.put(14, (byte) (version << 4 | 5));
        }
        if (length >= 16) {
            b.putInt(14 + 12, 0x0a4e_0001);
        }
        return b.array();
    }

    @Test
    void anIpv4SourceIsReportedAsItsMappedGid() {
        report(ipv4(4, 20));
        assertThat(seen).singleElement().satisfies(g -> {
            assertThat(g[0]).isZero();
            assertThat(g[1]).isEqualTo(0xffff_0a4e_0001L);
        });
    }

    @Test
    void malformedOrForeignFramesReportNothing() {
        report(new byte[13]);                          // shorter than an Ethernet header
        report(ipv4(4, 19));                           // an IPv4 header cut short
        report(ipv4(6, 20));                           // EtherType IPv4, version 6
        report(frame(0x86, 0xdd, 0x60));               // an IPv6 header cut short
        report(frame(0x81, 0x00, 0, 7));               // a VLAN tag and nothing behind it
        byte[] arp = frame(0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1);
        report(arp);                                   // ARP cut short
        byte[] arpIb = ByteBuffer.allocate(12 + 30).putShort(12, (short) 0x0806).putShort(14, (short) 32)
                .putShort(16, (short) 0x0800).put(18, (byte) 6).put(19, (byte) 4).array();
        report(arpIb);                                 // ARP of another hardware type
        report(frame(0x88, 0xcc, 1, 2, 3, 4));         // LLDP
        assertThat(seen).isEmpty();
    }

    @Test
    void tagsAreSkippedToTheAddress() {
        byte[] inner = ipv4(4, 20);
        byte[] tagged = new byte[inner.length + 8];
        System.arraycopy(inner, 0, tagged, 0, 12);
        ByteBuffer.wrap(tagged).putShort(12, (short) 0x88a8).putShort(14, (short) 5)
                .putShort(16, (short) 0x8100).putShort(18, (short) 7);
        System.arraycopy(inner, 12, tagged, 20, inner.length - 12);
        report(tagged);
        assertThat(seen).singleElement().satisfies(g -> assertThat(g[1]).isEqualTo(0xffff_0a4e_0001L));
    }
}
