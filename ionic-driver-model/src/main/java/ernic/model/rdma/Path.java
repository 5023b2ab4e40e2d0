package ernic.model.rdma;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import static ernic.model.rdma.Fw.be16;
import static ernic.model.rdma.Fw.be32;
import static ernic.model.rdma.Fw.u8;

/** Where a QP or AH sends: its MACs and GIDs (IPv4-mapped GIDs give an IPv4 template). */
public record Path(long smac, long dmac, byte[] sgid, byte[] dgid, int hopLimit, int trafficClass, int udpSport) {
    static final int ROCE_UDP_PORT = 4791;
    /** The template area the driver hands the device. */
    public static final int TEMPLATE_BYTES = 128;

    public static Path of(String sip, String dip) {
        return new Path(0x02_00_00_00_00_01L, 0x02_00_00_00_00_02L, gid(sip), gid(dip), 64, 0, 0xc000);
    }

    public boolean ipv4() {
        return ipv4Mapped(dgid);
    }

    /** A GID from an IP address literal: IPv4 becomes the IPv4-mapped GID ::ffff:a.b.c.d. */
    public static byte[] gid(String ip) {
        try {
            InetAddress a = InetAddress.getByName(ip); // a literal: no lookup
            byte[] g = new byte[16];
            if (a instanceof Inet4Address) {
                g[10] = (byte) 0xff;
                g[11] = (byte) 0xff;
                System.arraycopy(a.getAddress(), 0, g, 12, 4);
            } else if (a instanceof Inet6Address) {
                System.arraycopy(a.getAddress(), 0, g, 0, 16);
            }
            return g;
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ip, e);
        }
    }

    static boolean ipv4Mapped(byte[] g) {
        for (int i = 0; i < 10; i++) {
            if (g[i] != 0) {
                return false;
            }
        }
        return (g[10] & 0xff) == 0xff && (g[11] & 0xff) == 0xff;
    }

    /**
     * Writes the RoCEv2 header template at {@code o} of {@code mem} (Ethernet, IPv4 with DF and tot_len 0xffff, or
     * IPv6, then UDP to 4791) as ionic_build_hdr does; returns its length. {@link #TEMPLATE_BYTES} from {@code o}
     * are written (zeros after the headers).
     */
    public int template(MemorySegment mem, long o, boolean ecn) {
        mem.asSlice(o, TEMPLATE_BYTES).fill((byte) 0);
        for (int i = 0; i < 6; i++) {
            u8(mem, o + i, (int) (dmac >>> 8 * (5 - i)));
            u8(mem, o + 6 + i, (int) (smac >>> 8 * (5 - i)));
        }
        boolean v4 = ipv4();
        be16(mem, o + 12, v4 ? 0x0800 : 0x86dd);
        long ip = o + 14, udp;
        int tc = trafficClass | (ecn ? 2 : 0);
        if (v4) {
            u8(mem, ip, 0x45);
            u8(mem, ip + 1, tc);
            be16(mem, ip + 2, 0xffff);
            be16(mem, ip + 6, 0x4000);
            u8(mem, ip + 8, hopLimit);
            u8(mem, ip + 9, 17);
            MemorySegment.copy(sgid, 12, mem, ValueLayout.JAVA_BYTE, ip + 12, 4);
            MemorySegment.copy(dgid, 12, mem, ValueLayout.JAVA_BYTE, ip + 16, 4);
            udp = ip + 20;
        } else {
            be32(mem, ip, 6 << 28 | (tc & 0xff) << 20);
            u8(mem, ip + 6, 17);
            u8(mem, ip + 7, hopLimit);
            MemorySegment.copy(sgid, 0, mem, ValueLayout.JAVA_BYTE, ip + 8, 16);
            MemorySegment.copy(dgid, 0, mem, ValueLayout.JAVA_BYTE, ip + 24, 16);
            udp = ip + 40;
        }
        be16(mem, udp, udpSport);
        be16(mem, udp + 2, ROCE_UDP_PORT);
        return (int) (udp + 8 - o);
    }
}
