package ernic.ionic.layout;

/**
 * Flyweights over the 16-byte completions (ionic_if.h {@code union ionic_dev_cmd_comp} and
 * {@code union ionic_adminq_comp}). Device commands get color 0; admin-queue completions carry the
 * ring's color in byte 15 bit 7.
 */
public final class Comp {
    /** Size of every completion (ionic_admin_comp). */
    public static final int SIZE = 16;
    /** IONIC_COMP_COLOR_MASK in byte 15. */
    public static final int COLOR_MASK = 0x80;

    private Comp() {}

    /** struct ionic_admin_comp: status, comp_index, color. */
    public static final class Admin extends Struct<Admin> {
        static final int STATUS = 0;      // u8 status (enum ionic_status_code)
        static final int COMP_INDEX = 2;  // __le16 comp_index
        public static final int COLOR = 15; // u8 color (bit 7)

        public int status() { return u8(STATUS); }
        public int compIndex() { return u16(COMP_INDEX); }
        public boolean color() { return (u8(COLOR) & COLOR_MASK) != 0; }
        public Admin status(int v) { put8(STATUS, v); return this; }
        public Admin compIndex(int v) { put16(COMP_INDEX, v); return this; }
        public Admin color(boolean c) { put8(COLOR, u8(COLOR) & ~COLOR_MASK | (c ? COLOR_MASK : 0)); return this; }
    }

    /** struct ionic_dev_identify_comp, ionic_lif_identify_comp, ionic_port_identify_comp: ver at 1. */
    public static final class Identify extends Struct<Identify> {
        static final int VER = 1;         // u8 ver: version of identify returned

        public int ver() { return u8(VER); }
        public Identify ver(int v) { put8(VER, v); return this; }
    }

    /** struct ionic_lif_init_comp. */
    public static final class LifInit extends Struct<LifInit> {
        static final int HW_INDEX = 2;    // __le16 hw_index

        public int hwIndex() { return u16(HW_INDEX); }
        public LifInit hwIndex(int v) { put16(HW_INDEX, v); return this; }
    }

    /** struct ionic_q_identify_comp. */
    public static final class QIdentify extends Struct<QIdentify> {
        static final int VER = 4;         // u8 ver

        public int ver() { return u8(VER); }
        public QIdentify ver(int v) { put8(VER, v); return this; }
    }

    /** struct ionic_q_init_comp. */
    public static final class QInit extends Struct<QInit> {
        static final int VER = 1;         // u8 ver (named rsvd in 7.2; kept 0)
        static final int HW_INDEX = 4;    // __le32 hw_index
        static final int HW_TYPE = 8;     // u8 hw_type

        public int hwIndex() { return u32(HW_INDEX); }
        public int hwType() { return u8(HW_TYPE); }
        public QInit hwIndex(int v) { put32(HW_INDEX, v); return this; }
        public QInit hwType(int v) { put8(HW_TYPE, v); return this; }
    }

    /** struct ionic_lif_setattr_comp / ionic_lif_getattr_comp: the value union at 4. */
    public static final class LifAttr extends Struct<LifAttr> {
        static final int VALUE = 4;       // union: state u8, mtu __le32, mac[6], features __le64

        public long features() { return u64(VALUE); }
        public long mac() { return Mac.read(seg, base + VALUE); }
        public int mtu() { return u32(VALUE); }
        public int state() { return u8(VALUE); }
        public LifAttr features(long v) { put64(VALUE, v); return this; }
        public LifAttr mac(long v) { Mac.write(seg, base + VALUE, v); return this; }
        public LifAttr mtu(int v) { put32(VALUE, v); return this; }
        public LifAttr state(int v) { put8(VALUE, v); return this; }
    }

    /** struct ionic_rx_filter_add_comp. */
    public static final class RxFilterAdd extends Struct<RxFilterAdd> {
        static final int FILTER_ID = 4;   // __le32 filter_id

        public int filterId() { return u32(FILTER_ID); }
        public RxFilterAdd filterId(int v) { put32(FILTER_ID, v); return this; }
    }
}
