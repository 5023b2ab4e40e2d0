package ernic.ionic.rdma;

import ernic.roce.IbOpcode;

import static ernic.ionic.rdma.RdmaCounters.Device.LOCAL_REQS;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_ATOMIC_REQS;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_READ_BYTES;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_READ_REQS;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_SEND_BYTES;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_SEND_REQS;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_WRITE_BYTES;
import static ernic.ionic.rdma.RdmaCounters.Device.TX_WRITE_REQS;

/**
 * The send WQE opcodes (enum ionic_v1_op of ionic_fw.h, {@code base.op} of a WQE) and everything the data path
 * knows of each: the one table of opcode properties, as rxe's {@code rxe_opcode_info[]} is for the IBTA's. The
 * requester, the responders, the ends, the trace, the WQE hook and the counters read it; none of them encodes
 * an opcode's properties as a range or a list of opcodes.
 *
 * <p>A WQE opcode is carried out as one of a few {@link Kind}s (which {@link End} method, or which local
 * operation); the rest are properties: what its requester checks and moves, what its responder takes, how it
 * completes and is counted, and its IBTA opcodes ({@link #request} and {@link #response}, in their RC form and
 * single-packet: {@link IbOpcode#on} gives another transport's, {@link IbOpcode#packet} a longer message's
 * packets). {@link #of} reads an array: no allocation, no boxing.
 */
enum WqeOpcode {
    SEND(V1.Wqe.OP_SEND, Kind.SEND, V1.Cqe.RECV_OP_SEND, WireHeader.SEND,
            IbOpcode.RC_SEND_ONLY, IbOpcode.RC_ACKNOWLEDGE),
    SEND_INV(V1.Wqe.OP_SEND_INV, Kind.SEND, V1.Cqe.RECV_OP_SEND_INV, WireHeader.SEND_INV,
            IbOpcode.RC_SEND_ONLY_WITH_INVALIDATE, IbOpcode.RC_ACKNOWLEDGE),
    SEND_IMM(V1.Wqe.OP_SEND_IMM, Kind.SEND, V1.Cqe.RECV_OP_SEND_IMM, WireHeader.SEND_IMM,
            IbOpcode.RC_SEND_ONLY_WITH_IMMEDIATE, IbOpcode.RC_ACKNOWLEDGE),
    RDMA_READ(V1.Wqe.OP_RDMA_READ, Kind.READ, -1, WireHeader.READ,
            IbOpcode.RC_RDMA_READ_REQUEST, IbOpcode.RC_RDMA_READ_RESPONSE_ONLY),
    RDMA_WRITE(V1.Wqe.OP_RDMA_WRITE, Kind.WRITE, -1, WireHeader.WRITE,
            IbOpcode.RC_RDMA_WRITE_ONLY, IbOpcode.RC_ACKNOWLEDGE),
    RDMA_WRITE_IMM(V1.Wqe.OP_RDMA_WRITE_IMM, Kind.WRITE, V1.Cqe.RECV_OP_RDMA_IMM, WireHeader.WRITE_IMM,
            IbOpcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, IbOpcode.RC_ACKNOWLEDGE),
    ATOMIC_CS(V1.Wqe.OP_ATOMIC_CS, Kind.ATOMIC, -1, WireHeader.ATOMIC_CS,
            IbOpcode.RC_CMP_SWAP, IbOpcode.RC_ATOMIC_ACKNOWLEDGE),
    ATOMIC_FA(V1.Wqe.OP_ATOMIC_FA, Kind.ATOMIC, -1, WireHeader.ATOMIC_FA,
            IbOpcode.RC_FETCH_ADD, IbOpcode.RC_ATOMIC_ACKNOWLEDGE),
    REG_MR(V1.Wqe.OP_REG_MR, Kind.REG_MR, -1, 0, null, null),
    LOCAL_INV(V1.Wqe.OP_LOCAL_INV, Kind.LOCAL_INV, -1, 0, null, null),
    BIND_MW(V1.Wqe.OP_BIND_MW, Kind.BIND_MW, -1, 0, null, null);

    /** How the requester carries a WQE out: the {@link End} method it goes to, or the local operation it is. */
    enum Kind {
        SEND(true, TX_SEND_REQS, TX_SEND_BYTES),
        WRITE(true, TX_WRITE_REQS, TX_WRITE_BYTES),
        READ(true, TX_READ_REQS, TX_READ_BYTES),
        ATOMIC(true, TX_ATOMIC_REQS, null),
        REG_MR(false, LOCAL_REQS, null),
        LOCAL_INV(false, LOCAL_REQS, null),
        BIND_MW(false, LOCAL_REQS, null);

        /** Goes to a responder (an end); else done by the requester on this device alone. */
        final boolean remote;
        /** The counters a WQE of this kind adds to, once executed (requests; bytes moved, or null). */
        final RdmaCounters.Device requests, bytes;

        Kind(boolean remote, RdmaCounters.Device requests, RdmaCounters.Device bytes) {
            this.remote = remote;
            this.requests = requests;
            this.bytes = bytes;
        }
    }

    private static final WqeOpcode[] BY_CODE = new WqeOpcode[256], BY_MESH = new WqeOpcode[256];

    static {
        for (WqeOpcode o : values()) {
            if (BY_CODE[o.code] != null || o.mesh != 0 && BY_MESH[o.mesh] != null) {
                throw new ExceptionInInitializerError("WQE opcode " + o + ": its code or mesh opcode twice");
            }
            BY_CODE[o.code] = o;
            if (o.mesh != 0) {
                BY_MESH[o.mesh] = o;
            }
        }
    }

    /** The value of {@code base.op}. */
    final int code;
    final Kind kind;
    /** Local-only: nothing leaves this device (REG_MR, LOCAL_INV, BIND_MW); no IBTA opcode. */
    final boolean local;
    /** On a connected QP, completes with an MSN (TYPE_SEND_MSN); else by SQ index (TYPE_SEND_NPG). */
    final boolean completesByMsn;
    /** Takes a receive WQE at the responder (SEND, SEND_INV, SEND_IMM, RDMA_WRITE_IMM). */
    final boolean takesReceive;
    /** Names remote memory: the WQE carries an rkey and a remote address (READ, WRITE, atomics). */
    final boolean keyed;
    /** Carries a payload: its SGEs are read (checked for local read) and gathered. */
    final boolean payload;
    /** Writes local memory with the answer: a READ's data, an atomic's old value (checked for local write). */
    final boolean landsLocally;
    /** The WQE's {@code imm_data_key} goes to the responder: immediate data (ImmDt) or the rkey to invalidate. */
    final boolean immediate, invalidate;
    /** The receive completion's op ({@code V1.Cqe.RECV_OP_*}) when it {@link #takesReceive}, else -1. */
    final int recvOp;
    /** Its opcode on the mesh ({@link WireHeader}), 0 for a local operation. */
    final int mesh;
    /** The IBTA opcode of its request and of the responder's answer: RC, one packet; null when local. */
    final IbOpcode request, response;

    WqeOpcode(int code, Kind kind, int recvOp, int mesh, IbOpcode request, IbOpcode response) {
        this.code = code;
        this.kind = kind;
        this.local = !kind.remote;
        this.completesByMsn = kind.remote;
        this.recvOp = recvOp;
        this.takesReceive = recvOp >= 0;
        this.keyed = kind == Kind.WRITE || kind == Kind.READ || kind == Kind.ATOMIC;
        this.payload = request != null && request.payload;
        this.landsLocally = response != null && response.payload || response == IbOpcode.RC_ATOMIC_ACKNOWLEDGE;
        this.immediate = request != null && request.immediate();
        this.invalidate = request != null && request.invalidate();
        this.mesh = mesh;
        this.request = request;
        this.response = response;
    }

    /** The opcode of {@code base.op} {@code code}, or null for a value that is none. */
    static WqeOpcode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** The opcode whose mesh request opcode is {@code mesh}, or null. */
    static WqeOpcode ofMesh(int mesh) {
        return mesh > 0 && mesh < BY_MESH.length ? BY_MESH[mesh] : null;
    }

    /** The name in traces and refusals: ionic_fw.h's, without its IONIC_V1_OP_ prefix. */
    String traceName() {
        return name();
    }

    /** {@code code}'s name for a refusal or a log line: its {@link #traceName}, or its number. */
    static String nameOf(int code) {
        WqeOpcode o = of(code);
        return o != null ? o.traceName() : Integer.toString(code);
    }

    /** The counter of executed WQEs this one adds to; {@code datagram} for a UD QP's. */
    RdmaCounters.Device requests(boolean datagram) {
        return datagram && kind == Kind.SEND ? RdmaCounters.Device.TX_UD_REQS : kind.requests;
    }

    /** The counter of bytes it moved, or null. */
    RdmaCounters.Device bytes(boolean datagram) {
        return datagram && kind == Kind.SEND ? RdmaCounters.Device.TX_UD_BYTES : kind.bytes;
    }
}
