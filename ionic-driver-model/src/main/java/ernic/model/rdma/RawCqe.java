package ernic.model.rdma;

import java.lang.foreign.MemorySegment;

import static ernic.model.rdma.Fw.*;

/** A copy of one 32-byte CQE (struct ionic_v1_cqe) as the device wrote it, read at the header's offsets. */
public record RawCqe(byte[] bytes) {
    private MemorySegment s() {
        return MemorySegment.ofArray(bytes);
    }

    private int qidTypeFlags() {
        return be32(s(), CQE_QID_TYPE_FLAGS_BE);
    }

    public boolean color() {
        return (qidTypeFlags() & CQE_COLOR) != 0;
    }

    public boolean error() {
        return (qidTypeFlags() & CQE_ERROR) != 0;
    }

    /** CQE_TYPE_ADMIN, RECV, SEND_MSN or SEND_NPG. */
    public int type() {
        return qidTypeFlags() >>> CQE_TYPE_SHIFT & 7;
    }

    public int qid() {
        return qidTypeFlags() >>> CQE_QID_SHIFT;
    }

    /** A length (receive) or an enum ionic_status (error). */
    public int statusLength() {
        return be32(s(), CQE_STATUS_LENGTH_BE);
    }

    /** Receive: the RQ WQE's wqe_id. */
    public long wqeId() {
        return le64(s(), CQE_RECV_WQE_ID);
    }

    /** Receive: source QP number (23..0), op (28..24), IPv4 and VLAN bits. */
    public int srcQpnOp() {
        return be32(s(), CQE_RECV_SRC_QPN_OP_BE);
    }

    public int immDataRkey() {
        return be32(s(), CQE_RECV_IMM_DATA_RKEY_BE);
    }

    /** SEND_MSN: the number of remote WQEs done. */
    public int msn() {
        return be32(s(), CQE_SEND_MSN_BE);
    }

    /**
     * "SQ flush received": a SEND_NPG error entry with status WQE_FLUSHED, which consumes no WQE. libionic and
     * ionic_rdma take it as the start of flushing the SQ (or ignore it when they flush already) and report no
     * work completion for it.
     */
    public boolean sqFlushReceived() {
        return type() == CQE_TYPE_SEND_NPG && error() && statusLength() == RdmaVerbs.STS_WQE_FLUSHED_ERR;
    }

    /** SEND_NPG: the SQ index of the local WQE. */
    public long npgWqeId() {
        return le64(s(), CQE_SEND_NPG_WQE_ID);
    }

    /** A CQ ring in guest memory read by color: the consumer index, and the color expected there. */
    public static final class Ring {
        private final MemorySegment ram;
        private final long base;
        private final int mask;
        private int cons;
        private boolean color = true;

        Ring(MemorySegment ram, long base, int depthLog2) {
            this.ram = ram;
            this.base = base;
            this.mask = (1 << depthLog2) - 1;
        }

        /** The next CQE (a copy) if it has the expected color, else null. */
        public RawCqe poll() {
            long at = base + (long) CQE_SIZE * cons;
            if (((be32(ram, at + CQE_QID_TYPE_FLAGS_BE) & CQE_COLOR) != 0) != color) {
                return null;
            }
            cons = (cons + 1) & mask;
            if (cons == 0) {
                color = !color;
            }
            return new RawCqe(ram.asSlice(at, CQE_SIZE).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }

        /**
         * The next CQE that reports work, if there is one: "SQ flush received" entries before it are consumed
         * as the drivers consume them ({@link #sqFlushReceived}).
         */
        public RawCqe pollWork() {
            RawCqe c = poll();
            while (c != null && c.sqFlushReceived()) {
                c = poll();
            }
            return c;
        }

        /** The consumer index: the slot of the next CQE. */
        public int consumer() {
            return cons;
        }
    }
}
