package ernic.ionic.layout;

import ernic.common.Endian;

/**
 * Flyweights over the 64-byte commands (ionic_if.h {@code union ionic_dev_cmd} and
 * {@code union ionic_adminq_cmd}); the same bytes arrive through BAR 0 dev_cmd_regs.cmd or an
 * admin-queue slot. Offsets are from the packed structs of the Linux 7.2 ionic_if.h.
 */
public final class Cmd {
    /** Size of every command (ionic_admin_cmd). */
    public static final int SIZE = 64;

    private Cmd() {}

    /** struct ionic_admin_cmd: the fields every command shares. */
    public static final class Admin extends Struct<Admin> {
        static final int OPCODE = 0;      // u8 opcode
        static final int LIF_INDEX = 2;   // __le16 lif_index (where the command has one)

        public int opcode() { return u8(OPCODE); }
        public int lifIndex() { return u16(LIF_INDEX); }
        public Admin opcode(int v) { put8(OPCODE, v); return this; }
        public Admin lifIndex(int v) { put16(LIF_INDEX, v); return this; }
    }

    /** struct ionic_dev_identify_cmd. */
    public static final class Identify extends Struct<Identify> {
        static final int VER = 1;         // u8 ver: highest identify version the driver supports

        public int ver() { return u8(VER); }
        public Identify ver(int v) { put8(VER, v); return this; }
    }

    /** struct ionic_dev_init_cmd. */
    public static final class DevInit extends Struct<DevInit> {
        static final int TYPE = 1;        // u8 type

        public int type() { return u8(TYPE); }
    }

    /** struct ionic_lif_identify_cmd. */
    public static final class LifIdentify extends Struct<LifIdentify> {
        static final int TYPE = 1;        // u8 type (enum ionic_lif_type)
        static final int VER = 2;         // u8 ver

        public int type() { return u8(TYPE); }
        public int ver() { return u8(VER); }
        public LifIdentify type(int v) { put8(TYPE, v); return this; }
        public LifIdentify ver(int v) { put8(VER, v); return this; }
    }

    /** struct ionic_lif_init_cmd. */
    public static final class LifInit extends Struct<LifInit> {
        static final int TYPE = 1;        // u8 type
        static final int INDEX = 2;       // __le16 index
        static final int INFO_PA = 8;     // __le64 info_pa (struct ionic_lif_info)

        public int type() { return u8(TYPE); }
        public int index() { return u16(INDEX); }
        public long infoPa() { return u64(INFO_PA); }
        public LifInit index(int v) { put16(INDEX, v); return this; }
        public LifInit infoPa(long v) { put64(INFO_PA, v); return this; }
    }

    /** struct ionic_lif_reset_cmd. */
    public static final class LifReset extends Struct<LifReset> {
        static final int INDEX = 2;       // __le16 index

        public int index() { return u16(INDEX); }
    }

    /** struct ionic_port_identify_cmd, ionic_port_reset_cmd (index only). */
    public static final class PortIdentify extends Struct<PortIdentify> {
        static final int INDEX = 1;       // u8 index
        static final int VER = 2;         // u8 ver

        public int index() { return u8(INDEX); }
        public int ver() { return u8(VER); }
    }

    /** struct ionic_port_init_cmd. */
    public static final class PortInit extends Struct<PortInit> {
        static final int INDEX = 1;       // u8 index
        static final int INFO_PA = 8;     // __le64 info_pa (struct ionic_port_info)

        public int index() { return u8(INDEX); }
        public long infoPa() { return u64(INFO_PA); }
        public PortInit infoPa(long v) { put64(INFO_PA, v); return this; }
    }

    /** struct ionic_port_setattr_cmd / ionic_port_getattr_cmd. */
    public static final class PortAttr extends Struct<PortAttr> {
        static final int INDEX = 1;       // u8 index
        static final int ATTR = 2;        // u8 attr (enum ionic_port_attr)
        static final int STATE = 4;       // u8 state (union at 4)

        public int index() { return u8(INDEX); }
        public int attr() { return u8(ATTR); }
        public int state() { return u8(STATE); }
    }

    /** struct ionic_q_identify_cmd. */
    public static final class QIdentify extends Struct<QIdentify> {
        static final int LIF_TYPE = 2;    // __le16 lif_type
        static final int TYPE = 4;        // u8 type (logical queue type)
        static final int VER = 5;         // u8 ver: highest version the driver supports

        public int lifType() { return u16(LIF_TYPE); }
        public int type() { return u8(TYPE); }
        public int ver() { return u8(VER); }
        public QIdentify type(int v) { put8(TYPE, v); return this; }
        public QIdentify ver(int v) { put8(VER, v); return this; }
    }

    /** struct ionic_q_init_cmd (packed). */
    public static final class QInit extends Struct<QInit> {
        public static final int F_IRQ = 0x01, F_ENA = 0x02, F_SG = 0x04, F_EQ = 0x08, F_CMB = 0x10;
        static final int LIF_INDEX = 2;   // __le16 lif_index
        static final int TYPE = 4;        // u8 type (logical)
        static final int VER = 5;         // u8 ver
        static final int INDEX = 8;       // __le32 index
        static final int PID = 12;        // __le16 pid
        static final int INTR_INDEX = 14; // __le16 intr_index
        static final int FLAGS = 16;      // __le16 flags
        static final int COS = 18;        // u8 cos
        static final int RING_SIZE = 19;  // u8 ring_size (log2 of the depth)
        static final int RING_BASE = 20;  // __le64 ring_base
        static final int CQ_RING_BASE = 28; // __le64 cq_ring_base
        static final int SG_RING_BASE = 36; // __le64 sg_ring_base
        static final int FEATURES = 56;   // __le64 features

        public int lifIndex() { return u16(LIF_INDEX); }
        public int type() { return u8(TYPE); }
        public int ver() { return u8(VER); }
        public long index() { return Integer.toUnsignedLong(u32(INDEX)); }
        public int pid() { return u16(PID); }
        public int intrIndex() { return u16(INTR_INDEX); }
        public int flags() { return u16(FLAGS); }
        public int ringSize() { return u8(RING_SIZE); }
        public long ringBase() { return u64(RING_BASE); }
        public long cqRingBase() { return u64(CQ_RING_BASE); }
        public long sgRingBase() { return u64(SG_RING_BASE); }
        public long features() { return u64(FEATURES); }

        public QInit lifIndex(int v) { put16(LIF_INDEX, v); return this; }
        public QInit type(int v) { put8(TYPE, v); return this; }
        public QInit ver(int v) { put8(VER, v); return this; }
        public QInit index(int v) { put32(INDEX, v); return this; }
        public QInit intrIndex(int v) { put16(INTR_INDEX, v); return this; }
        public QInit flags(int v) { put16(FLAGS, v); return this; }
        public QInit ringSize(int v) { put8(RING_SIZE, v); return this; }
        public QInit ringBase(long v) { put64(RING_BASE, v); return this; }
        public QInit cqRingBase(long v) { put64(CQ_RING_BASE, v); return this; }
        public QInit sgRingBase(long v) { put64(SG_RING_BASE, v); return this; }
    }

    /** struct ionic_q_control_cmd. */
    public static final class QControl extends Struct<QControl> {
        public static final int DISABLE = 0, ENABLE = 1, HANG_RESET = 2;
        static final int TYPE = 1;        // u8 type (logical)
        static final int LIF_INDEX = 2;   // __le16 lif_index
        static final int INDEX = 4;       // __le32 index (logical)
        static final int OPER = 8;        // u8 oper (enum ionic_q_control_oper)

        public int type() { return u8(TYPE); }
        public int lifIndex() { return u16(LIF_INDEX); }
        public long index() { return Integer.toUnsignedLong(u32(INDEX)); }
        public int oper() { return u8(OPER); }
        public QControl type(int v) { put8(TYPE, v); return this; }
        public QControl index(int v) { put32(INDEX, v); return this; }
        public QControl oper(int v) { put8(OPER, v); return this; }
    }

    /** struct ionic_lif_setattr_cmd and ionic_lif_getattr_cmd (attr and index are shared). */
    public static final class LifAttr extends Struct<LifAttr> {
        public static final int STATE = 0, NAME = 1, MTU = 2, MAC = 3, FEATURES = 4, RSS = 5, STATS_CTRL = 6,
                TXSTAMP = 7;
        static final int ATTR = 1;        // u8 attr (enum ionic_lif_attr)
        static final int INDEX = 2;       // __le16 index
        static final int VALUE = 4;       // union: state u8, name[16], mtu __le32, mac[6], features __le64, rss, stats_ctl u8
        public static final int NAME_SIZE = 16; // IONIC_IFNAMSIZ

        public int attr() { return u8(ATTR); }
        public int index() { return u16(INDEX); }
        public int state() { return u8(VALUE); }
        public int mtu() { return u32(VALUE); }
        public long features() { return u64(VALUE); }
        public int statsCtl() { return u8(VALUE); }
        /** The MAC as 48 bits, first byte on the wire in bits 47..40. */
        public long mac() { return Mac.read(seg, base + VALUE); }
        public String name() { return Endian.string(seg, base + VALUE, NAME_SIZE); }

        public LifAttr attr(int v) { put8(ATTR, v); return this; }
        public LifAttr mtu(int v) { put32(VALUE, v); return this; }
        public LifAttr features(long v) { put64(VALUE, v); return this; }
        public LifAttr mac(long v) { Mac.write(seg, base + VALUE, v); return this; }
    }

    /** struct ionic_rx_mode_set_cmd. */
    public static final class RxModeSet extends Struct<RxModeSet> {
        public static final int UNICAST = 1, MULTICAST = 2, BROADCAST = 4, PROMISC = 8, ALLMULTI = 0x10;
        static final int RX_MODE = 4;     // __le16 rx_mode

        public int rxMode() { return u16(RX_MODE); }
        public RxModeSet rxMode(int v) { put16(RX_MODE, v); return this; }
    }

    /** struct ionic_rx_filter_add_cmd. */
    public static final class RxFilterAdd extends Struct<RxFilterAdd> {
        public static final int MATCH_VLAN = 0, MATCH_MAC = 1, MATCH_MAC_VLAN = 2, STEER_PKTCLASS = 0x10;
        static final int QTYPE = 1;       // u8 qtype
        static final int QID = 4;         // __le32 qid
        static final int MATCH = 8;       // __le16 match
        static final int VLAN = 10;       // vlan.vlan / mac_vlan.vlan __le16
        static final int MAC = 10;        // mac.addr[6]
        static final int MAC_VLAN_MAC = 12; // mac_vlan.addr[6]
        static final int PKT_CLASS = 10;  // __le64 pkt_class

        public int match() { return u16(MATCH); }
        public int vlan() { return u16(VLAN); }
        public long mac() { return Mac.read(seg, base + MAC); }
        public long macVlanMac() { return Mac.read(seg, base + MAC_VLAN_MAC); }
        public long pktClass() { return u64(PKT_CLASS); }

        public RxFilterAdd match(int v) { put16(MATCH, v); return this; }
        public RxFilterAdd mac(long v) { Mac.write(seg, base + MAC, v); return this; }
    }

    /** struct ionic_rx_filter_del_cmd. */
    public static final class RxFilterDel extends Struct<RxFilterDel> {
        static final int FILTER_ID = 4;   // __le32 filter_id

        public int filterId() { return u32(FILTER_ID); }
        public RxFilterDel filterId(int v) { put32(FILTER_ID, v); return this; }
    }
}
