package ernic.nvmeof;

/**
 * Facts of the NVMe base and NVMe over Fabrics specifications this controller uses (names as in Linux
 * include/linux/nvme.h). A status here is SCT << 8 | SC, as Linux writes it; the CQE carries it shifted
 * left by one, with DNR at bit 14 of the unshifted value.
 */
final class Nvme {
    private Nvme() {}

    // --- opcodes (SQE byte 0) ---
    static final int ADMIN_GET_LOG_PAGE = 0x02, ADMIN_IDENTIFY = 0x06, ADMIN_ABORT = 0x08,
            ADMIN_SET_FEATURES = 0x09, ADMIN_GET_FEATURES = 0x0a, ADMIN_ASYNC_EVENT = 0x0c,
            ADMIN_KEEP_ALIVE = 0x18, FABRICS = 0x7f;
    static final int IO_FLUSH = 0x00, IO_WRITE = 0x01, IO_READ = 0x02, IO_WRITE_ZEROES = 0x08, IO_DSM = 0x09;
    /** Fabrics command type (SQE byte 4, fctype). */
    static final int FCTYPE_PROPERTY_SET = 0x00, FCTYPE_CONNECT = 0x01, FCTYPE_PROPERTY_GET = 0x04;

    // --- the common SQE (struct nvme_common_command, 64 bytes) ---
    static final int SQE_SIZE = 64, CQE_SIZE = 16;
    static final int SQE_OPCODE = 0, SQE_FLAGS = 1, SQE_CID = 2, SQE_NSID = 4, SQE_FCTYPE = 4, SQE_DPTR = 24,
            SQE_CDW10 = 40, SQE_CDW11 = 44, SQE_CDW12 = 48, SQE_CDW13 = 52, SQE_CDW14 = 56, SQE_CDW15 = 60;
    /** flags: bits 7:6 PSDT; fabrics requires 01b (NVME_CMD_SGL_METABUF); bits 1:0 fused operation. */
    static final int FLAGS_PSDT_MASK = 0xc0, FLAGS_PSDT_SGL = 0x40, FLAGS_FUSE_MASK = 0x03;

    // --- SGL descriptor in DPTR (struct nvme_sgl_desc / nvme_keyed_sgl_desc, 16 bytes) ---
    /** addr le64 @0; data block: length le32 @8; keyed: length 3 bytes LE @8, key le32 @11; type @15. */
    static final int SGL_ADDR = 0, SGL_LENGTH = 8, SGL_KEY = 11, SGL_TYPE = 15;
    /** type >> 4: descriptor type. */
    static final int SGL_FMT_DATA_DESC = 0x0, SGL_FMT_KEYED_DATA_DESC = 0x4;
    /** type & 0xf: subtype. */
    static final int SGL_SUBTYPE_ADDRESS = 0x0, SGL_SUBTYPE_OFFSET = 0x1, SGL_SUBTYPE_INVALIDATE = 0xf;

    // --- the CQE (struct nvme_completion) ---
    static final int CQE_RESULT = 0, CQE_SQ_HEAD = 8, CQE_SQ_ID = 10, CQE_CID = 12, CQE_STATUS = 14;

    // --- status (SCT << 8 | SC) ---
    static final int SC_SUCCESS = 0x00, SC_INVALID_OPCODE = 0x01, SC_INVALID_FIELD = 0x02,
            SC_DATA_XFER_ERROR = 0x04, SC_INTERNAL = 0x06, SC_ABORT_REQ = 0x07, SC_INVALID_NS = 0x0b,
            SC_CMD_SEQ_ERROR = 0x0c, SC_SGL_INVALID_DATA = 0x0f, SC_SGL_INVALID_TYPE = 0x11,
            SC_SGL_INVALID_OFFSET = 0x16, SC_LBA_RANGE = 0x80;
    static final int SC_QID_INVALID = 0x101, SC_ASYNC_LIMIT = 0x105, SC_INVALID_LOG_PAGE = 0x109,
            SC_FEATURE_NOT_SAVEABLE = 0x10d;
    static final int SC_CONNECT_FORMAT = 0x180, SC_CONNECT_CTRL_BUSY = 0x181, SC_CONNECT_INVALID_PARAM = 0x182,
            SC_CONNECT_INVALID_HOST = 0x184;
    static final int SC_WRITE_FAULT = 0x280, SC_READ_ERROR = 0x281;
    static final int STATUS_DNR = 0x4000;

    // --- Fabrics Connect (struct nvmf_connect_command, struct nvmf_connect_data) ---
    static final int CONNECT_RECFMT = 40, CONNECT_QID = 42, CONNECT_SQSIZE = 44, CONNECT_CATTR = 46, CONNECT_KATO = 48;
    static final int CONNECT_DATA_SIZE = 1024, CONNECT_DATA_HOSTID = 0, CONNECT_DATA_CNTLID = 16,
            CONNECT_DATA_SUBNQN = 256, CONNECT_DATA_HOSTNQN = 512;
    /** Connect response dword 0 on INVALID_PARAM: IATTR bit 16 (1 = in the data), IPO bits 15:0. */
    static final int IATTR_CONNECT_DATA = 1 << 16;
    static final int CNTLID_DYNAMIC = 0xffff;
    // --- Property Get/Set (struct nvmf_property_{get,set}_command) ---
    static final int PROP_ATTRIB = 40, PROP_OFFSET = 44, PROP_VALUE = 48;
    /** Controller properties (register offsets). */
    static final int REG_CAP = 0x00, REG_VS = 0x08, REG_CC = 0x14, REG_CSTS = 0x1c, REG_NSSR = 0x20;
    static final int CC_EN = 1, CC_SHN_SHIFT = 14, CC_SHN_MASK = 3 << CC_SHN_SHIFT;
    static final int CSTS_RDY = 1, CSTS_CFS = 2, CSTS_SHST_COMPLETE = 2 << 2;
    static final int VERSION_1_3 = 0x0001_0300;

    // --- Identify ---
    static final int CNS_NS = 0x00, CNS_CTRL = 0x01, CNS_NS_ACTIVE_LIST = 0x02, CNS_NS_DESC_LIST = 0x03;
    static final int IDENTIFY_SIZE = 4096;
    static final int NSID_ALL = 0xffff_ffff;
    static final int CNTRLTYPE_IO = 1, CNTRLTYPE_DISCOVERY = 2;
    /** Namespace identification descriptor types (NIDT). */
    static final int NIDT_NGUID = 2, NIDT_UUID = 3, NIDT_CSI = 4;

    // --- features (FID, cdw10 bits 7:0) ---
    static final int FEAT_ARBITRATION = 0x01, FEAT_POWER_MGMT = 0x02, FEAT_TEMP_THRESH = 0x04,
            FEAT_ERR_RECOVERY = 0x05, FEAT_VOLATILE_WC = 0x06, FEAT_NUM_QUEUES = 0x07,
            FEAT_WRITE_ATOMIC = 0x0a, FEAT_ASYNC_EVENT = 0x0b, FEAT_KATO = 0x0f;

    // --- log pages (LID) ---
    static final int LOG_ERROR = 0x01, LOG_SMART = 0x02, LOG_FW_SLOT = 0x03, LOG_CHANGED_NS = 0x04,
            LOG_DISCOVERY = 0x70;

    static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";
    /** The longest NQN (NVMF_NQN_SIZE); the Connect data field is 256 bytes. */
    static final int NQN_MAX = 223, NQN_FIELD = 256;

    /** The 0's based admin queue size limit the Linux host uses (NVME_AQ_DEPTH 32). */
    static final int AQ_DEPTH = 32;
}
