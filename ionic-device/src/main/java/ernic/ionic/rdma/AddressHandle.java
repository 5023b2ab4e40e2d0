package ernic.ionic.rdma;

import java.util.Arrays;

/**
 * An address handle, or the address vector of a connected QP: what the Ethernet/[802.1Q]/IPv4|IPv6/UDP
 * header template the driver prebuilt says about the destination.
 */
final class AddressHandle {
    static final int ETH_HLEN = 14, VLAN_HLEN = 4, IPV4_HLEN = 20, IPV6_HLEN = 40, UDP_HLEN = 8;
    static final int ETH_P_8021Q = 0x8100, ETH_P_IP = 0x0800, ETH_P_IPV6 = 0x86dd;

    final long dmac, smac;
    final int vlan; // -1 without a tag; else PCP<<13 | VID
    final boolean ipv4;
    final byte[] sgid, dgid;
    final int hopLimit, trafficClass;
    /** The mesh node that owns {@link #dgid}, or -1: local (also when no node owns it). */
    int node = -1;
    /** Its protection domain (CREATE_AH pd_id): only QPs of the same PD may send with it. */
    int pd;

    private AddressHandle(long dmac, long smac, int vlan, boolean ipv4, byte[] sgid, byte[] dgid, int hop, int tc) {
        this.dmac = dmac;
        this.smac = smac;
        this.vlan = vlan;
        this.ipv4 = ipv4;
        this.sgid = sgid;
        this.dgid = dgid;
        this.hopLimit = hop;
        this.trafficClass = tc;
    }

    /** Parses a header template; null when it is not Ethernet/[VLAN]/IPv4|IPv6/UDP. */
    static AddressHandle parse(byte[] h) {
        int n = h.length;
        if (n < ETH_HLEN) {
            return null;
        }
        long dmac = mac(h, 0), smac = mac(h, 6);
        int off = 12;
        int type = u16(h, off);
        int vlan = -1;
        off += 2;
        if (type == ETH_P_8021Q) {
            if (n < off + VLAN_HLEN) {
                return null;
            }
            vlan = u16(h, off);
            type = u16(h, off + 2);
            off += VLAN_HLEN;
        }
        byte[] sgid = new byte[16], dgid = new byte[16];
        if (type == ETH_P_IP) {
            if (n < off + IPV4_HLEN + UDP_HLEN || (h[off] & 0xf0) != 0x40) {
                return null;
            }
            v4mapped(h, off + 12, sgid);
            v4mapped(h, off + 16, dgid);
            return new AddressHandle(dmac, smac, vlan, true, sgid, dgid, h[off + 8] & 0xff, h[off + 1] & 0xff);
        }
        if (type == ETH_P_IPV6) {
            if (n < off + IPV6_HLEN + UDP_HLEN || (h[off] & 0xf0) != 0x60) {
                return null;
            }
            System.arraycopy(h, off + 8, sgid, 0, 16);
            System.arraycopy(h, off + 24, dgid, 0, 16);
            int tc = (u16(h, off) >>> 4) & 0xff;
            return new AddressHandle(dmac, smac, vlan, false, sgid, dgid, h[off + 7] & 0xff, tc);
        }
        return null;
    }

    private static void v4mapped(byte[] h, int at, byte[] gid) {
        Arrays.fill(gid, (byte) 0);
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        System.arraycopy(h, at, gid, 12, 4);
    }

    private static int u16(byte[] h, int at) {
        return (h[at] & 0xff) << 8 | h[at + 1] & 0xff;
    }

    private static long mac(byte[] h, int at) {
        long m = 0;
        for (int i = 0; i < 6; i++) {
            m = m << 8 | h[at + i] & 0xff;
        }
        return m;
    }
}
