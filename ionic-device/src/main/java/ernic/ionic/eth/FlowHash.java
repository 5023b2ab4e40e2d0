package ernic.ionic.eth;

import ernic.ionic.layout.Ring.RxComp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static ernic.common.Endian.BE;

/**
 * The fixed flow hash that steers received frames: IPv4/IPv6 addresses, protocol and, for TCP and
 * UDP (unfragmented), the ports; for other frames the MAC addresses and EtherType. No secret and no
 * seed, so one flow always lands on one queue. Also classifies the ionic packet type.
 */
public final class FlowHash {
    static final int ETH_HLEN = 14, ETHERTYPE = 12, VLAN_TPID = 0x8100, QINQ_TPID = 0x88a8;
    static final int IPV4 = 0x0800, IPV6 = 0x86dd, TCP = 6, UDP = 17;

    private FlowHash() {}

    /** Offset of the L3 header and its EtherType packed as (offset << 16 | type); -1 when too short. */
    private static int l3(MemorySegment f, long len) {
        if (len < ETH_HLEN) {
            return -1;
        }
        int off = ETHERTYPE;
        int type = f.get(BE.u16(), off) & 0xffff;
        while ((type == VLAN_TPID || type == QINQ_TPID) && off + 6 <= len) {
            off += 4;
            type = f.get(BE.u16(), off) & 0xffff;
        }
        return (off + 2) << 16 | type;
    }

    public static int hash(MemorySegment f) {
        long len = f.byteSize();
        int l3 = l3(f, len);
        if (l3 < 0) {
            return 0;
        }
        int off = l3 >>> 16, type = l3 & 0xffff;
        int h = 0x9747b28c;
        if (type == IPV4 && off + 20 <= len) {
            int ihl = (f.get(ValueLayout.JAVA_BYTE, off) & 0xf) * 4;
            int proto = f.get(ValueLayout.JAVA_BYTE, off + 9) & 0xff;
            h = mix(h, BE.u32(f, off + 12));
            h = mix(h, BE.u32(f, off + 16));
            h = mix(h, proto);
            boolean fragment = (f.get(BE.u16(), off + 6) & 0x3fff) != 0;
            if ((proto == TCP || proto == UDP) && !fragment && ihl >= 20 && off + ihl + 4 <= len) {
                h = mix(h, BE.u32(f, off + ihl));
            }
            return fin(h);
        }
        if (type == IPV6 && off + 40 <= len) {
            int next = f.get(ValueLayout.JAVA_BYTE, off + 6) & 0xff;
            for (int i = 8; i < 40; i += 4) {
                h = mix(h, BE.u32(f, off + i));
            }
            h = mix(h, next);
            if ((next == TCP || next == UDP) && off + 44 <= len) {
                h = mix(h, BE.u32(f, off + 40));
            }
            return fin(h);
        }
        h = mix(h, BE.u32(f, 0));
        h = mix(h, BE.u32(f, 4));
        h = mix(h, BE.u32(f, 8));
        h = mix(h, type);
        return fin(h);
    }

    /** enum ionic_pkt_type of the frame (no encapsulation). */
    public static int packetType(MemorySegment f) {
        long len = f.byteSize();
        int l3 = l3(f, len);
        if (l3 < 0) {
            return RxComp.PKT_TYPE_NON_IP;
        }
        int off = l3 >>> 16, type = l3 & 0xffff;
        if (type == IPV4 && off + 20 <= len) {
            int proto = f.get(ValueLayout.JAVA_BYTE, off + 9) & 0xff;
            return proto == TCP ? RxComp.PKT_TYPE_IPV4_TCP : proto == UDP ? RxComp.PKT_TYPE_IPV4_UDP : RxComp.PKT_TYPE_IPV4;
        }
        if (type == IPV6 && off + 40 <= len) {
            int next = f.get(ValueLayout.JAVA_BYTE, off + 6) & 0xff;
            return next == TCP ? RxComp.PKT_TYPE_IPV6_TCP : next == UDP ? RxComp.PKT_TYPE_IPV6_UDP : RxComp.PKT_TYPE_IPV6;
        }
        return RxComp.PKT_TYPE_NON_IP;
    }

    private static int mix(int h, int k) {
        k *= 0xcc9e2d51;
        k = Integer.rotateLeft(k, 15);
        k *= 0x1b873593;
        h ^= k;
        h = Integer.rotateLeft(h, 13);
        return h * 5 + 0xe6546b64;
    }

    private static int fin(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        return h ^ h >>> 16;
    }
}
