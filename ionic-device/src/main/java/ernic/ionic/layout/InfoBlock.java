package ernic.ionic.layout;

/**
 * Flyweights over the status blocks the device keeps in guest memory: {@code struct ionic_lif_info}
 * at LIF_INIT's info_pa and {@code struct ionic_port_info} at PORT_INIT's info_pa, and the
 * statistics structures inside them.
 */
public final class InfoBlock {
    private InfoBlock() {}

    /** struct ionic_lif_info: config @0 (256), status @256 (64), stats @320 (1024); 1344 bytes. */
    public static final class LifInfo extends Struct<LifInfo> {
        public static final int SIZE = 1344;
        public static final int STATUS = 256;       // struct ionic_lif_status status
        public static final int STATS = 320;        // struct ionic_lif_stats stats
        public static final int STATUS_SIZE = 64;
        public static final int LINK_UP = 1, LINK_DOWN = 2; // enum ionic_port_oper_status
        static final int EID = STATUS;              // status.eid __le64
        static final int PORT_NUM = STATUS + 8;     // status.port_num u8
        static final int LINK_STATUS = STATUS + 10; // status.link_status __le16 (266)
        static final int LINK_SPEED = STATUS + 12;  // status.link_speed __le32 (268, Mbps)
        static final int LINK_DOWN_COUNT = STATUS + 16; // status.link_down_count __le16

        public long eid() { return u64(EID); }
        public int linkStatus() { return u16(LINK_STATUS); }
        public int linkSpeed() { return u32(LINK_SPEED); }
        public int linkDownCount() { return u16(LINK_DOWN_COUNT); }

        public LifInfo eid(long v) { put64(EID, v); return this; }
        public LifInfo portNum(int v) { put8(PORT_NUM, v); return this; }
        public LifInfo linkStatus(int v) { put16(LINK_STATUS, v); return this; }
        public LifInfo linkSpeed(int v) { put32(LINK_SPEED, v); return this; }
        public LifInfo linkDownCount(int v) { put16(LINK_DOWN_COUNT, v); return this; }
    }

    /**
     * struct ionic_port_info: config @0 (256), status @256 (struct ionic_port_status, 320 with the
     * transceiver), stats @576, extra_stats @2048 (the host fills it; the device leaves it alone).
     */
    public static final class PortInfo extends Struct<PortInfo> {
        public static final int SIZE = 2208;
        public static final int CONFIG = 0;         // union ionic_port_config config
        public static final int STATUS = 256;       // struct ionic_port_status status
        public static final int STATUS_SIZE = 320;
        public static final int STATS = 576;        // struct ionic_port_stats stats
        public static final int XCVR_STATE_SPROM_READ = 3;
        static final int ID = STATUS;               // status.id __le32
        static final int SPEED = STATUS + 4;        // status.speed __le32 (Mbps)
        static final int OPER_STATUS = STATUS + 8;  // status.status u8 (enum ionic_port_oper_status)
        static final int LINK_DOWN_COUNT = STATUS + 9; // status.link_down_count __le16 (packed)
        static final int FEC_TYPE = STATUS + 11;    // status.fec_type u8
        static final int XCVR_STATE = STATUS + 60;  // status.xcvr.state u8 (316)
        static final int XCVR_PHY = STATUS + 61;    // status.xcvr.phy u8 (317)
        static final int XCVR_PID = STATUS + 62;    // status.xcvr.pid __le16 (318)

        public int id() { return u32(ID); }
        public int speed() { return u32(SPEED); }
        public int operStatus() { return u8(OPER_STATUS); }
        public int linkDownCount() { return u16(LINK_DOWN_COUNT); }
        public int xcvrState() { return u8(XCVR_STATE); }
        public int xcvrPhy() { return u8(XCVR_PHY); }
        public int xcvrPid() { return u16(XCVR_PID); }

        public PortInfo id(int v) { put32(ID, v); return this; }
        public PortInfo speed(int v) { put32(SPEED, v); return this; }
        public PortInfo operStatus(int v) { put8(OPER_STATUS, v); return this; }
        public PortInfo linkDownCount(int v) { put16(LINK_DOWN_COUNT, v); return this; }
        public PortInfo fecType(int v) { put8(FEC_TYPE, v); return this; }
        public PortInfo xcvr(int state, int phy, int pid) {
            put8(XCVR_STATE, state); put8(XCVR_PHY, phy); put16(XCVR_PID, pid); return this;
        }
    }

    /** struct ionic_lif_stats (1024 bytes of __le64); only the part the device maintains is named. */
    public static final class LifStats extends Struct<LifStats> {
        /** Bytes from the start of the block through tx_queue_empty, the last counter written. */
        public static final int WRITTEN = 360;
        public static final int RX_UCAST_BYTES = 0, RX_UCAST_PACKETS = 8, RX_MCAST_BYTES = 16,
                RX_MCAST_PACKETS = 24, RX_BCAST_BYTES = 32, RX_BCAST_PACKETS = 40;
        public static final int RX_UCAST_DROP_BYTES = 64, RX_UCAST_DROP_PACKETS = 72, RX_MCAST_DROP_BYTES = 80,
                RX_MCAST_DROP_PACKETS = 88, RX_BCAST_DROP_BYTES = 96, RX_BCAST_DROP_PACKETS = 104,
                RX_DMA_ERROR = 112;
        public static final int TX_UCAST_BYTES = 128, TX_UCAST_PACKETS = 136, TX_MCAST_BYTES = 144,
                TX_MCAST_PACKETS = 152, TX_BCAST_BYTES = 160, TX_BCAST_PACKETS = 168;
        public static final int TX_UCAST_DROP_BYTES = 192, TX_UCAST_DROP_PACKETS = 200, TX_MCAST_DROP_BYTES = 208,
                TX_MCAST_DROP_PACKETS = 216, TX_BCAST_DROP_BYTES = 224, TX_BCAST_DROP_PACKETS = 232,
                TX_DMA_ERROR = 240;
        public static final int RX_QUEUE_DISABLED = 256, RX_QUEUE_EMPTY = 264, RX_QUEUE_ERROR = 272,
                RX_DESC_FETCH_ERROR = 280, RX_DESC_DATA_ERROR = 288;
        public static final int TX_QUEUE_DISABLED = 320, TX_QUEUE_ERROR = 328, TX_DESC_FETCH_ERROR = 336,
                TX_DESC_DATA_ERROR = 344, TX_QUEUE_EMPTY = 352;

        public long get(int field) { return u64(field); }
        public LifStats set(int field, long v) { put64(field, v); return this; }
    }

    /** struct ionic_port_stats (__le64 counters); only the part the device maintains is named. */
    public static final class PortStats extends Struct<PortStats> {
        /** Bytes from the start of the block through frames_tx_other, the last counter written. */
        public static final int WRITTEN = 440;
        public static final int FRAMES_RX_OK = 0, FRAMES_RX_ALL = 8, OCTETS_RX_OK = 32, OCTETS_RX_ALL = 40,
                FRAMES_RX_UNICAST = 48, FRAMES_RX_MULTICAST = 56, FRAMES_RX_BROADCAST = 64,
                FRAMES_RX_OVERSIZED = 96, FRAMES_RX_DROPPED = 152;
        /** frames_rx_less_than_64b .. frames_rx_other: 12 size buckets. */
        public static final int FRAMES_RX_SIZE_BUCKETS = 160;
        public static final int FRAMES_TX_OK = 256, FRAMES_TX_ALL = 264, FRAMES_TX_BAD = 272, OCTETS_TX_OK = 280,
                OCTETS_TX_TOTAL = 288, FRAMES_TX_UNICAST = 296, FRAMES_TX_MULTICAST = 304,
                FRAMES_TX_BROADCAST = 312;
        /** frames_tx_less_than_64b .. frames_tx_other: 12 size buckets. */
        public static final int FRAMES_TX_SIZE_BUCKETS = 344;
        public static final int SIZE_BUCKETS = 12;

        public long get(int field) { return u64(field); }
        public PortStats set(int field, long v) { put64(field, v); return this; }

        /** The size bucket of a frame: <64, 64, 65-127, 128-255, 256-511, 512-1023, 1024-1518,
         *  1519-2047, 2048-4095, 4096-8191, 8192-9215, other. */
        public static int bucket(int length) {
            if (length < 64) return 0;
            if (length == 64) return 1;
            if (length <= 127) return 2;
            if (length <= 255) return 3;
            if (length <= 511) return 4;
            if (length <= 1023) return 5;
            if (length <= 1518) return 6;
            if (length <= 2047) return 7;
            if (length <= 4095) return 8;
            if (length <= 8191) return 9;
            if (length <= 9215) return 10;
            return 11;
        }
    }
}
