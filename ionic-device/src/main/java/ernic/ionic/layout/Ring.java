package ernic.ionic.layout;

/**
 * Flyweights over the Ethernet ring entries (ionic_if.h): TX/RX descriptors, scatter-gather
 * elements, TX/RX completions and notify-queue events.
 */
public final class Ring {
    public static final int TX_DESC_SIZE = 16, RX_DESC_SIZE = 16, SG_ELEM_SIZE = 16, CQ_DESC_SIZE = 16;
    public static final int ADMIN_DESC_SIZE = 64, NOTIFY_EVENT_SIZE = 64;
    /** struct ionic_txq_sg_desc (v0, 8 elements) and ionic_txq_sg_desc_v1 (16 elements). */
    public static final int TX_SG_DESC_SIZE_V0 = 128, TX_SG_DESC_SIZE_V1 = 256;
    /** struct ionic_rxq_sg_desc: 8 elements. */
    public static final int RX_SG_DESC_SIZE = 128, RX_MAX_SG_ELEMS = 8;

    private Ring() {}

    /** struct ionic_txq_desc. */
    public static final class TxDesc extends Struct<TxDesc> {
        public static final int OPCODE_CSUM_NONE = 0, OPCODE_CSUM_PARTIAL = 1, OPCODE_CSUM_HW = 2, OPCODE_TSO = 3;
        public static final long ADDR_MASK = (1L << 52) - 1; // IONIC_TXQ_DESC_ADDR_MASK
        static final int CMD = 0;         // __le64 cmd: flags 3..0, opcode 7..4, nsge 11..8, addr 63..12
        static final int LEN = 8;         // __le16 len
        static final int VLAN_TCI = 10;   // __le16 vlan_tci
        static final int HDR_LEN = 12;    // __le16 csum_start / hdr_len
        static final int MSS = 14;        // __le16 csum_offset / mss

        public long cmd() { return u64(CMD); }
        public int len() { return u16(LEN); }
        public int vlanTci() { return u16(VLAN_TCI); }

        public static int flags(long cmd) { return (int) (cmd & 0xf); }
        public static int opcode(long cmd) { return (int) (cmd >>> 4 & 0xf); }
        public static int nsge(long cmd) { return (int) (cmd >>> 8 & 0xf); }
        public static long addr(long cmd) { return cmd >>> 12 & ADDR_MASK; }
        public static long encode(int opcode, int flags, int nsge, long addr) {
            return (opcode & 0xfL) << 4 | (flags & 0xfL) | (nsge & 0xfL) << 8 | (addr & ADDR_MASK) << 12;
        }

        public TxDesc cmd(long v) { put64(CMD, v); return this; }
        public TxDesc len(int v) { put16(LEN, v); return this; }
    }

    /** struct ionic_txq_sg_elem and ionic_rxq_sg_elem (same layout). */
    public static final class SgElem extends Struct<SgElem> {
        static final int ADDR = 0;        // __le64 addr
        static final int LEN = 8;         // __le16 len

        public long addr() { return u64(ADDR); }
        public int len() { return u16(LEN); }
        public SgElem addr(long v) { put64(ADDR, v); return this; }
        public SgElem len(int v) { put16(LEN, v); return this; }
    }

    /** struct ionic_txq_comp. */
    public static final class TxComp extends Struct<TxComp> {
        static final int STATUS = 0;      // u8 status
        static final int COMP_INDEX = 2;  // __le16 comp_index
        static final int COLOR = 15;      // u8 color (bit 7)

        public int status() { return u8(STATUS); }
        public int compIndex() { return u16(COMP_INDEX); }
        public boolean color() { return (u8(COLOR) & Comp.COLOR_MASK) != 0; }
        public TxComp compIndex(int v) { put16(COMP_INDEX, v); return this; }
        public TxComp color(boolean c) { put8(COLOR, c ? Comp.COLOR_MASK : 0); return this; }
    }

    /** struct ionic_rxq_desc. */
    public static final class RxDesc extends Struct<RxDesc> {
        public static final int OPCODE_SIMPLE = 0, OPCODE_SG = 1;
        static final int OPCODE = 0;      // u8 opcode
        static final int LEN = 6;         // __le16 len
        static final int ADDR = 8;        // __le64 addr

        public int opcode() { return u8(OPCODE); }
        public int len() { return u16(LEN); }
        public long addr() { return u64(ADDR); }
        public RxDesc opcode(int v) { put8(OPCODE, v); return this; }
        public RxDesc len(int v) { put16(LEN, v); return this; }
        public RxDesc addr(long v) { put64(ADDR, v); return this; }
    }

    /** struct ionic_rxq_comp. */
    public static final class RxComp extends Struct<RxComp> {
        public static final int PKT_TYPE_NON_IP = 0x00, PKT_TYPE_IPV4 = 0x01, PKT_TYPE_IPV4_TCP = 0x03,
                PKT_TYPE_IPV4_UDP = 0x05, PKT_TYPE_IPV6 = 0x08, PKT_TYPE_IPV6_TCP = 0x18, PKT_TYPE_IPV6_UDP = 0x28;
        static final int STATUS = 0;      // u8 status
        static final int NUM_SG_ELEMS = 1; // u8 num_sg_elems
        static final int COMP_INDEX = 2;  // __le16 comp_index
        static final int RSS_HASH = 4;    // __le32 rss_hash
        static final int CSUM = 8;        // __le16 csum
        static final int VLAN_TCI = 10;   // __le16 vlan_tci
        static final int LEN = 12;        // __le16 len
        static final int CSUM_FLAGS = 14; // u8 csum_flags
        static final int PKT_TYPE_COLOR = 15; // u8 pkt_type_color: type 6..0, color 7

        public int status() { return u8(STATUS); }
        public int numSgElems() { return u8(NUM_SG_ELEMS); }
        public int compIndex() { return u16(COMP_INDEX); }
        public int rssHash() { return u32(RSS_HASH); }
        public int len() { return u16(LEN); }
        public int csumFlags() { return u8(CSUM_FLAGS); }
        public int pktType() { return u8(PKT_TYPE_COLOR) & 0x7f; }
        public boolean color() { return (u8(PKT_TYPE_COLOR) & Comp.COLOR_MASK) != 0; }

        public RxComp status(int v) { put8(STATUS, v); return this; }
        public RxComp numSgElems(int v) { put8(NUM_SG_ELEMS, v); return this; }
        public RxComp compIndex(int v) { put16(COMP_INDEX, v); return this; }
        public RxComp rssHash(int v) { put32(RSS_HASH, v); return this; }
        public RxComp len(int v) { put16(LEN, v); return this; }
        public RxComp pktTypeColor(int type, boolean color) {
            put8(PKT_TYPE_COLOR, type & 0x7f | (color ? Comp.COLOR_MASK : 0)); return this;
        }
    }

    /** struct ionic_notifyq_event / ionic_link_change_event. */
    public static final class NotifyEvent extends Struct<NotifyEvent> {
        public static final int LINK_CHANGE = 1, RESET = 2, HEARTBEAT = 3, LOG = 4, XCVR = 5;
        static final int EID = 0;         // __le64 eid
        static final int ECODE = 8;       // __le16 ecode
        static final int LINK_STATUS = 10; // link_change.link_status __le16
        static final int LINK_SPEED = 12; // link_change.link_speed __le32

        public long eid() { return u64(EID); }
        public int ecode() { return u16(ECODE); }
        public int linkStatus() { return u16(LINK_STATUS); }
        public int linkSpeed() { return u32(LINK_SPEED); }

        public NotifyEvent eid(long v) { put64(EID, v); return this; }
        public NotifyEvent ecode(int v) { put16(ECODE, v); return this; }
        public NotifyEvent linkStatus(int v) { put16(LINK_STATUS, v); return this; }
        public NotifyEvent linkSpeed(int v) { put32(LINK_SPEED, v); return this; }
    }

    /** The 64-bit doorbell value (struct ionic_doorbell): p_index 15..0, ring 23..16, qid 47..24. */
    public static final class Doorbell {
        private Doorbell() {}

        public static int pIndex(long v) { return (int) (v & 0xffff); }
        public static int ring(long v) { return (int) (v >>> 16 & 0xff); }
        public static int qid(long v) { return (int) (v >>> 24 & 0xff_ffff); }
        public static long encode(int qid, int ring, int pIndex) {
            return (qid & 0xff_ffffL) << 24 | (ring & 0xffL) << 16 | pIndex & 0xffffL;
        }
    }
}
