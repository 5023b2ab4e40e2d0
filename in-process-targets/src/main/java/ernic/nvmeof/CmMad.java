package ernic.nvmeof;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * IB CM MADs (IBTA vol. 1 ch. 12; Linux drivers/infiniband/core/cm_msgs.h, include/rdma/ibta_vol1_c12.h):
 * 256 bytes, big-endian, a 24-byte MAD header then the message. Offsets are from the start of the MAD.
 * Also the rdma_cm header (struct cma_hdr) and the NVMe/RDMA private data (include/linux/nvme-rdma.h),
 * which are little-endian where NVMe says so.
 */
final class CmMad {
    private CmMad() {}

    static final int SIZE = 256;
    // MAD common header
    static final int BASE_VERSION = 0, MGMT_CLASS = 1, CLASS_VERSION = 2, METHOD = 3, STATUS = 4, TID = 8,
            ATTR_ID = 16, ATTR_MOD = 20, DATA = 24;
    static final int MGMT_CLASS_CM = 0x07, CM_CLASS_VERSION = 2, METHOD_SEND = 0x03;
    static final int ATTR_REQ = 0x10, ATTR_MRA = 0x11, ATTR_REJ = 0x12, ATTR_REP = 0x13, ATTR_RTU = 0x14,
            ATTR_DREQ = 0x15, ATTR_DREP = 0x16;
    /** Every CM message starts with the sender's and (but REQ) the receiver's communication id. */
    static final int LOCAL_COMM_ID = 24, REMOTE_COMM_ID = 28;

    // REQ
    static final int REQ_SERVICE_ID = 32, REQ_LOCAL_CA_GUID = 40, REQ_LOCAL_QKEY = 52,
            /** local QPN (31:8), responder resources (7:0). */ REQ_QPN_RESP = 56,
            /** local EECN (31:8), initiator depth (7:0). */ REQ_EECN_INIT = 60,
            /** remote EECN (31:8), remote CM response timeout (7:3), transport service type (2:1), flow control (0). */
            REQ_TST = 64,
            /** starting PSN (31:8), local CM response timeout (7:3), retry count (2:0). */ REQ_PSN = 68,
            REQ_PKEY = 72, REQ_PRIMARY_LOCAL_GID = 80, REQ_PRIMARY_REMOTE_GID = 96, REQ_PRIVATE = 164;
    static final int REQ_PRIVATE_SIZE = 92;
    // REP
    static final int REP_LOCAL_QKEY = 32, REP_QPN = 36, REP_EECN = 40, REP_PSN = 44, REP_RESP_RESOURCES = 48,
            REP_INIT_DEPTH = 49, REP_ACK_FAILOVER_FLOW = 50, REP_RNR_SRQ = 51, REP_LOCAL_CA_GUID = 52, REP_PRIVATE = 60;
    // DREQ: remote QPN/EECN (31:8)
    static final int DREQ_REMOTE_QPN = 32;
    // REJ: message rejected (7:6 of the byte), reject info length (7:1), reason, ARI, private data
    static final int REJ_MSG_REJECTED = 32, REJ_INFO_LEN = 33, REJ_REASON = 34, REJ_PRIVATE = 108;
    static final int REJ_MSG_REQ = 0, REJ_MSG_REP = 1, REJ_MSG_OTHER = 2;
    /** REJ reasons (enum ib_cm_rej_reason). */
    static final int REJ_INVALID_SERVICE_ID = 8, REJ_INVALID_TRANSPORT_TYPE = 9, REJ_CONSUMER_DEFINED = 28;
    static final int RC = 0;

    /** rdma_cm: the service ID of the TCP port space is 0x0106 << 16 | port (RDMA_PS_TCP). */
    static final long SERVICE_ID_TCP = 0x0106L << 16;
    // struct cma_hdr (36 bytes) at the start of the REQ's private data
    static final int CMA_VERSION = 0, CMA_IP_VERSION = 1, CMA_SRC_PORT = 2, CMA_SRC_ADDR = 4, CMA_DST_ADDR = 20,
            CMA_HDR_SIZE = 36;
    /** IPv4 in a cma_ip_addr: three pad words, then the address. */
    static final int CMA_IP4_ADDR = 12;
    // struct nvme_rdma_cm_req (after the cma_hdr), nvme_rdma_cm_rep, nvme_rdma_cm_rej: little-endian
    static final int NVME_REQ_RECFMT = 0, NVME_REQ_QID = 2, NVME_REQ_HRQSIZE = 4, NVME_REQ_HSQSIZE = 6;
    static final int NVME_REP_RECFMT = 0, NVME_REP_CRQSIZE = 2;
    static final int NVME_REJ_RECFMT = 0, NVME_REJ_STS = 2;
    /** enum nvme_rdma_cm_status. */
    static final int NVME_RDMA_CM_INVALID_LEN = 1, NVME_RDMA_CM_INVALID_RECFMT = 2, NVME_RDMA_CM_INVALID_QID = 3,
            NVME_RDMA_CM_INVALID_HSQSIZE = 4, NVME_RDMA_CM_INVALID_HRQSIZE = 5, NVME_RDMA_CM_NO_RSC = 6;

    static ByteBuffer be(byte[] mad) {
        return ByteBuffer.wrap(mad).order(ByteOrder.BIG_ENDIAN);
    }

    static int le16(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    static void le16(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    /** A new MAD with the CM header: class CM version 2, method Send, {@code attr}, transaction {@code tid}. */
    static byte[] header(int attr, long tid) {
        byte[] m = new byte[SIZE];
        ByteBuffer b = be(m);
        b.put(BASE_VERSION, (byte) 1).put(MGMT_CLASS, (byte) MGMT_CLASS_CM).put(CLASS_VERSION, (byte) CM_CLASS_VERSION)
                .put(METHOD, (byte) METHOD_SEND).putLong(TID, tid).putShort(ATTR_ID, (short) attr);
        return m;
    }
}
