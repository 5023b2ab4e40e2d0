package ernic.ionic.eth;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.common.Endian.BE;

/**
 * Told the source address of each frame the guest transmits, as a 128-bit GID in two big-endian halves (IPv4 as
 * {@code ::ffff:a.b.c.d}): the IPv4 or IPv6 source, or an ARP packet's sender address. The frame is read as the
 * guest gathered it, before any in-process endpoint or P4 program sees it; frames from the wire or from in-process
 * endpoints are never read. Whether an address may be learned is the listener's business (it filters multicast,
 * zero and the like). Called on the device thread, once per transmitted frame: it must not allocate.
 */
@FunctionalInterface
public interface SourceWatcher {
    int ETH_HLEN = 14, ETHERTYPE = 12;
    int VLAN_TPID = 0x8100, QINQ_TPID = 0x88a8, IPV4 = 0x0800, IPV6 = 0x86dd, ARP = 0x0806;
    /** The ::ffff:0:0/96 prefix of an IPv4-mapped GID's low half. */
    long V4_MAPPED = 0xffffL << 32;

    void source(long hi, long lo);

    /** Reads the source address of {@code frame} (its first {@code length} bytes), if it has one, into {@code w}. */
    static void report(MemorySegment frame, int length, SourceWatcher w) {
        if (length < ETH_HLEN) {
            return;
        }
        int off = ETHERTYPE;
        int type = frame.get(BE.u16(), off) & 0xffff;
        while ((type == VLAN_TPID || type == QINQ_TPID) && off + 6 <= length) {
            off += 4;
            type = frame.get(BE.u16(), off) & 0xffff;
        }
        off += 2;
        switch (type) {
            case IPV4 -> {
                if (off + 20 <= length && (frame.get(ValueLayout.JAVA_BYTE, off) & 0xf0) == 0x40) {
                    w.source(0, V4_MAPPED | BE.u32(frame, off + 12) & 0xffff_ffffL);
                }
            }
            case IPV6 -> {
                if (off + 40 <= length && (frame.get(ValueLayout.JAVA_BYTE, off) & 0xf0) == 0x60) {
                    w.source(BE.u64(frame, off + 8), BE.u64(frame, off + 16));
                }
            }
            case ARP -> {
                // Ethernet/IPv4 ARP: htype 1, ptype IPv4, hlen 6, plen 4; the sender's IPv4 address at 14.
                if (off + 28 <= length && frame.get(BE.u16(), off) == 1 && (frame.get(BE.u16(), off + 2) & 0xffff) == IPV4
                        && frame.get(ValueLayout.JAVA_BYTE, off + 4) == 6 && frame.get(ValueLayout.JAVA_BYTE, off + 5) == 4) {
                    w.source(0, V4_MAPPED | BE.u32(frame, off + 14) & 0xffff_ffffL);
                }
            }
            default -> {
            }
        }
    }
}
