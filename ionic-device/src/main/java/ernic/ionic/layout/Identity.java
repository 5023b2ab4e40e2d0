package ernic.ionic.layout;

import ernic.common.Endian;

/**
 * Flyweights over the identity blocks the device writes into dev_cmd_regs.data (BAR 0 + 0x888):
 * {@code union ionic_dev_identity}, {@code ionic_lif_identity}, {@code ionic_port_identity},
 * {@code ionic_q_identity} (each 1912 bytes, words[478]).
 */
public final class Identity {
    /** Every identity union is __le32 words[478]. */
    public static final int SIZE = 1912;

    private Identity() {}

    /** union ionic_dev_identity. */
    public static final class Dev extends Struct<Dev> {
        static final int VERSION = 0;         // u8 version
        static final int TYPE = 1;            // u8 type
        static final int NPORTS = 4;          // u8 nports
        static final int NLIFS = 8;           // __le32 nlifs
        static final int NINTRS = 12;         // __le32 nintrs
        static final int NDBPGS_PER_LIF = 16; // __le32 ndbpgs_per_lif
        static final int INTR_COAL_MULT = 20; // __le32 intr_coal_mult
        static final int INTR_COAL_DIV = 24;  // __le32 intr_coal_div
        static final int EQ_COUNT = 28;       // __le32 eq_count
        static final int HWSTAMP_MASK = 32;   // __le64 hwstamp_mask
        static final int HWSTAMP_MULT = 40;   // __le32 hwstamp_mult
        static final int HWSTAMP_SHIFT = 44;  // __le32 hwstamp_shift
        static final int CAPABILITIES = 48;   // __le64 capabilities

        public int version() { return u8(VERSION); }
        public int nports() { return u8(NPORTS); }
        public int nlifs() { return u32(NLIFS); }
        public int nintrs() { return u32(NINTRS); }
        public int ndbpgsPerLif() { return u32(NDBPGS_PER_LIF); }
        public int intrCoalMult() { return u32(INTR_COAL_MULT); }
        public int intrCoalDiv() { return u32(INTR_COAL_DIV); }
        public int eqCount() { return u32(EQ_COUNT); }
        public long capabilities() { return u64(CAPABILITIES); }

        public Dev version(int v) { put8(VERSION, v); return this; }
        public Dev type(int v) { put8(TYPE, v); return this; }
        public Dev nports(int v) { put8(NPORTS, v); return this; }
        public Dev nlifs(int v) { put32(NLIFS, v); return this; }
        public Dev nintrs(int v) { put32(NINTRS, v); return this; }
        public Dev ndbpgsPerLif(int v) { put32(NDBPGS_PER_LIF, v); return this; }
        public Dev intrCoal(int mult, int div) { put32(INTR_COAL_MULT, mult); put32(INTR_COAL_DIV, div); return this; }
        public Dev eqCount(int v) { put32(EQ_COUNT, v); return this; }
        public Dev hwstamp(long mask, int mult, int shift) {
            put64(HWSTAMP_MASK, mask); put32(HWSTAMP_MULT, mult); put32(HWSTAMP_SHIFT, shift); return this;
        }
        public Dev capabilities(long v) { put64(CAPABILITIES, v); return this; }
    }

    /** union ionic_lif_identity: capabilities, the eth part (with its config) and the rdma part. */
    public static final class Lif extends Struct<Lif> {
        public static final long CAP_ETH = 1, CAP_RDMA = 2;
        public static final int QTYPE_MAX = 16; // IONIC_QTYPE_MAX
        static final int CAPABILITIES = 0;         // __le64 capabilities
        static final int ETH_VERSION = 8;          // eth.version u8
        static final int ETH_MAX_UCAST_FILTERS = 12; // eth.max_ucast_filters __le32
        static final int ETH_MAX_MCAST_FILTERS = 16; // eth.max_mcast_filters __le32
        static final int ETH_RSS_IND_TBL_SZ = 20;  // eth.rss_ind_tbl_sz __le16
        static final int ETH_MIN_FRAME_SIZE = 22;  // eth.min_frame_size __le32 (packed)
        static final int ETH_MAX_FRAME_SIZE = 26;  // eth.max_frame_size __le32 (packed)
        static final int ETH_HWSTAMP_TX_MODES = 32; // eth.hwstamp_tx_modes __le64
        static final int ETH_HWSTAMP_RX_FILTERS = 40; // eth.hwstamp_rx_filters __le64
        static final int CONFIG_STATE = 136;       // eth.config.state u8
        static final int CONFIG_NAME = 140;        // eth.config.name[16]
        static final int CONFIG_MTU = 156;         // eth.config.mtu __le32
        static final int CONFIG_MAC = 160;         // eth.config.mac[6]
        static final int CONFIG_VLAN = 166;        // eth.config.vlan __le16
        static final int CONFIG_FEATURES = 168;    // eth.config.features __le64
        static final int CONFIG_QUEUE_COUNT = 176; // eth.config.queue_count[16] __le32
        static final int RDMA_VERSION = 392;       // rdma.version u8
        static final int RDMA_QP_OPCODES = 393;    // rdma.qp_opcodes u8
        static final int RDMA_ADMIN_OPCODES = 394; // rdma.admin_opcodes u8
        static final int RDMA_MINOR_VERSION = 395; // rdma.minor_version u8
        static final int RDMA_NPTS_PER_LIF = 396;  // rdma.npts_per_lif __le32
        static final int RDMA_NMRS_PER_LIF = 400;  // rdma.nmrs_per_lif __le32
        static final int RDMA_NAHS_PER_LIF = 404;  // rdma.nahs_per_lif __le32
        static final int RDMA_MAX_STRIDE = 408;    // rdma.max_stride u8
        static final int RDMA_CL_STRIDE = 409;     // rdma.cl_stride u8
        static final int RDMA_PTE_STRIDE = 410;    // rdma.pte_stride u8
        static final int RDMA_RRQ_STRIDE = 411;    // rdma.rrq_stride u8
        static final int RDMA_RSQ_STRIDE = 412;    // rdma.rsq_stride u8
        static final int RDMA_DCQCN_PROFILES = 413; // rdma.dcqcn_profiles u8
        static final int RDMA_UDMA_SHIFT = 414;    // rdma.udma_shift u8
        static final int RDMA_PAGE_SIZE_CAP = 416; // rdma.page_size_cap __le64
        static final int RDMA_AQ_QTYPE = 424;      // rdma.aq_qtype (struct ionic_lif_logical_qtype)
        static final int RDMA_SQ_QTYPE = 436;      // rdma.sq_qtype
        static final int RDMA_RQ_QTYPE = 448;      // rdma.rq_qtype
        static final int RDMA_CQ_QTYPE = 460;      // rdma.cq_qtype
        static final int RDMA_EQ_QTYPE = 472;      // rdma.eq_qtype
        static final int RDMA_STATS_TYPE = 484;    // rdma.stats_type __le16
        // struct ionic_lif_logical_qtype: qtype u8 @0, qid_count __le32 @4, qid_base __le32 @8.
        static final int LQ_QTYPE = 0, LQ_QID_COUNT = 4, LQ_QID_BASE = 8;

        /** The RDMA logical queue types in LIF identity order. */
        public enum RdmaQueue {
            AQ(RDMA_AQ_QTYPE), SQ(RDMA_SQ_QTYPE), RQ(RDMA_RQ_QTYPE), CQ(RDMA_CQ_QTYPE), EQ(RDMA_EQ_QTYPE);

            final int offset;

            RdmaQueue(int offset) {
                this.offset = offset;
            }
        }

        public long capabilities() { return u64(CAPABILITIES); }
        public int ethVersion() { return u8(ETH_VERSION); }
        public int maxUcastFilters() { return u32(ETH_MAX_UCAST_FILTERS); }
        public int maxMcastFilters() { return u32(ETH_MAX_MCAST_FILTERS); }
        public int rssIndTblSz() { return u16(ETH_RSS_IND_TBL_SZ); }
        public int minFrameSize() { return u32(ETH_MIN_FRAME_SIZE); }
        public int maxFrameSize() { return u32(ETH_MAX_FRAME_SIZE); }
        public int configMtu() { return u32(CONFIG_MTU); }
        public long configMac() { return Mac.read(seg, base + CONFIG_MAC); }
        public long configFeatures() { return u64(CONFIG_FEATURES); }
        public int queueCount(int type) { return u32(CONFIG_QUEUE_COUNT + 4L * type); }
        public int rdmaVersion() { return u8(RDMA_VERSION); }
        public int rdmaQpOpcodes() { return u8(RDMA_QP_OPCODES); }
        public int rdmaAdminOpcodes() { return u8(RDMA_ADMIN_OPCODES); }
        public int rdmaMinorVersion() { return u8(RDMA_MINOR_VERSION); }
        public int rdmaNptsPerLif() { return u32(RDMA_NPTS_PER_LIF); }
        public int rdmaNmrsPerLif() { return u32(RDMA_NMRS_PER_LIF); }
        public int rdmaNahsPerLif() { return u32(RDMA_NAHS_PER_LIF); }
        public int rdmaMaxStride() { return u8(RDMA_MAX_STRIDE); }
        public int rdmaUdmaShift() { return u8(RDMA_UDMA_SHIFT); }
        public long rdmaPageSizeCap() { return u64(RDMA_PAGE_SIZE_CAP); }
        public int rdmaQtype(RdmaQueue q) { return u8(q.offset + LQ_QTYPE); }
        public int rdmaQidCount(RdmaQueue q) { return u32(q.offset + LQ_QID_COUNT); }
        public int rdmaQidBase(RdmaQueue q) { return u32(q.offset + LQ_QID_BASE); }
        public int rdmaStatsType() { return u16(RDMA_STATS_TYPE); }

        public Lif capabilities(long v) { put64(CAPABILITIES, v); return this; }
        public Lif ethVersion(int v) { put8(ETH_VERSION, v); return this; }
        public Lif filters(int ucast, int mcast) {
            put32(ETH_MAX_UCAST_FILTERS, ucast); put32(ETH_MAX_MCAST_FILTERS, mcast); return this;
        }
        public Lif rssIndTblSz(int v) { put16(ETH_RSS_IND_TBL_SZ, v); return this; }
        public Lif frameSizes(int min, int max) { put32(ETH_MIN_FRAME_SIZE, min); put32(ETH_MAX_FRAME_SIZE, max); return this; }
        public Lif hwstamp(long txModes, long rxFilters) {
            put64(ETH_HWSTAMP_TX_MODES, txModes); put64(ETH_HWSTAMP_RX_FILTERS, rxFilters); return this;
        }
        public Lif configState(int v) { put8(CONFIG_STATE, v); return this; }
        public Lif configName(String v) { Endian.putString(seg, base + CONFIG_NAME, 16, v); return this; }
        public Lif configMtu(int v) { put32(CONFIG_MTU, v); return this; }
        public Lif configMac(long v) { Mac.write(seg, base + CONFIG_MAC, v); return this; }
        public Lif configVlan(int v) { put16(CONFIG_VLAN, v); return this; }
        public Lif configFeatures(long v) { put64(CONFIG_FEATURES, v); return this; }
        public Lif queueCount(int type, int v) { put32(CONFIG_QUEUE_COUNT + 4L * type, v); return this; }
        public Lif rdmaVersion(int version, int minor, int qpOpcodes, int adminOpcodes) {
            put8(RDMA_VERSION, version); put8(RDMA_MINOR_VERSION, minor);
            put8(RDMA_QP_OPCODES, qpOpcodes); put8(RDMA_ADMIN_OPCODES, adminOpcodes); return this;
        }
        public Lif rdmaPerLif(int npts, int nmrs, int nahs) {
            put32(RDMA_NPTS_PER_LIF, npts); put32(RDMA_NMRS_PER_LIF, nmrs); put32(RDMA_NAHS_PER_LIF, nahs); return this;
        }
        public Lif rdmaStrides(int max, int cl, int pte, int rrq, int rsq) {
            put8(RDMA_MAX_STRIDE, max); put8(RDMA_CL_STRIDE, cl); put8(RDMA_PTE_STRIDE, pte);
            put8(RDMA_RRQ_STRIDE, rrq); put8(RDMA_RSQ_STRIDE, rsq); return this;
        }
        public Lif rdmaDcqcnProfiles(int v) { put8(RDMA_DCQCN_PROFILES, v); return this; }
        public Lif rdmaUdmaShift(int v) { put8(RDMA_UDMA_SHIFT, v); return this; }
        public Lif rdmaPageSizeCap(long v) { put64(RDMA_PAGE_SIZE_CAP, v); return this; }
        public Lif rdmaQueue(RdmaQueue q, int qtype, int qidCount, int qidBase) {
            put8(q.offset + LQ_QTYPE, qtype); put32(q.offset + LQ_QID_COUNT, qidCount);
            put32(q.offset + LQ_QID_BASE, qidBase); return this;
        }
        public Lif rdmaStatsType(int v) { put16(RDMA_STATS_TYPE, v); return this; }
    }

    /** union ionic_port_identity; its config is a union ionic_port_config (see {@link PortConfig}). */
    public static final class Port extends Struct<Port> {
        public static final int TYPE_ETH = 1;
        static final int VERSION = 0;         // u8 version
        static final int TYPE = 1;            // u8 type (enum ionic_port_type)
        static final int NUM_LANES = 2;       // u8 num_lanes
        static final int AUTONEG = 3;         // u8 autoneg
        static final int MIN_FRAME_SIZE = 4;  // __le32 min_frame_size
        static final int MAX_FRAME_SIZE = 8;  // __le32 max_frame_size
        static final int FEC_TYPE = 12;       // u8 fec_type[4]
        static final int SPEEDS = 20;         // __le32 speeds[16]
        public static final int CONFIG = 128; // union ionic_port_config config (256 bytes)

        public int version() { return u8(VERSION); }
        public int type() { return u8(TYPE); }
        public int numLanes() { return u8(NUM_LANES); }
        public int maxFrameSize() { return u32(MAX_FRAME_SIZE); }
        public int speed(int i) { return u32(SPEEDS + 4L * i); }

        public Port version(int v) { put8(VERSION, v); return this; }
        public Port type(int v) { put8(TYPE, v); return this; }
        public Port numLanes(int v) { put8(NUM_LANES, v); return this; }
        public Port autoneg(int v) { put8(AUTONEG, v); return this; }
        public Port frameSizes(int min, int max) { put32(MIN_FRAME_SIZE, min); put32(MAX_FRAME_SIZE, max); return this; }
        public Port speed(int i, int mbps) { put32(SPEEDS + 4L * i, mbps); return this; }
    }

    /** union ionic_port_config (256 bytes), in port identity @128 and port_info @0. */
    public static final class PortConfig extends Struct<PortConfig> {
        public static final int SIZE = 256;
        public static final int STATE_DOWN = 1, STATE_UP = 2;
        static final int SPEED = 0;           // __le32 speed (Mbps)
        static final int MTU = 4;             // __le32 mtu
        static final int STATE = 8;           // u8 state (enum ionic_port_admin_state)
        static final int AN_ENABLE = 9;       // u8 an_enable
        static final int FEC_TYPE = 10;       // u8 fec_type
        static final int PAUSE_TYPE = 11;     // u8 pause_type
        static final int LOOPBACK_MODE = 12;  // u8 loopback_mode

        public int speed() { return u32(SPEED); }
        public int mtu() { return u32(MTU); }
        public int state() { return u8(STATE); }

        public PortConfig speed(int v) { put32(SPEED, v); return this; }
        public PortConfig mtu(int v) { put32(MTU, v); return this; }
        public PortConfig state(int v) { put8(STATE, v); return this; }
    }

    /** union ionic_q_identity. */
    public static final class Queue extends Struct<Queue> {
        static final int VERSION = 0;         // u8 version
        static final int SUPPORTED = 1;       // u8 supported (bit n = version n)
        static final int FEATURES = 8;        // __le64 features
        static final int DESC_SZ = 16;        // __le16 desc_sz
        static final int COMP_SZ = 18;        // __le16 comp_sz
        static final int SG_DESC_SZ = 20;     // __le16 sg_desc_sz
        static final int MAX_SG_ELEMS = 22;   // __le16 max_sg_elems
        static final int SG_DESC_STRIDE = 24; // __le16 sg_desc_stride

        public int version() { return u8(VERSION); }
        public int supported() { return u8(SUPPORTED); }
        public long features() { return u64(FEATURES); }
        public int descSz() { return u16(DESC_SZ); }
        public int compSz() { return u16(COMP_SZ); }
        public int sgDescSz() { return u16(SG_DESC_SZ); }
        public int maxSgElems() { return u16(MAX_SG_ELEMS); }
        public int sgDescStride() { return u16(SG_DESC_STRIDE); }

        public Queue version(int v) { put8(VERSION, v); return this; }
        public Queue supported(int v) { put8(SUPPORTED, v); return this; }
        public Queue features(long v) { put64(FEATURES, v); return this; }
        public Queue sizes(int desc, int comp, int sgDesc) {
            put16(DESC_SZ, desc); put16(COMP_SZ, comp); put16(SG_DESC_SZ, sgDesc); return this;
        }
        public Queue sg(int maxElems, int stride) { put16(MAX_SG_ELEMS, maxElems); put16(SG_DESC_STRIDE, stride); return this; }
    }
}
