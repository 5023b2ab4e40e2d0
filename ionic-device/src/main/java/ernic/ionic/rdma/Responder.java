package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.ionic.base.RdmaIdentity;
import ernic.vfiouser.server.Refusals;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.LE;

/**
 * The responder: applies one RDMA operation to a QP of this device, whoever asked (a QP of this device,
 * a peer server's guest, an in-process target). The operation's data arrives as checked {@link Spans}
 * (guest memory of a local requester, or a received message's buffers) and its result is returned as a
 * value: an ionic status as the requester must see it, or {@link #RNR} when the QP has no receive posted.
 * A receive it consumes is completed here. Device thread only; nothing allocates per operation.
 */
final class Responder {
    /** No receive is posted on the QP: receiver not ready, the requester waits and asks again. */
    static final int RNR = -1;
    private static final Logger log = LoggerFactory.getLogger(Responder.class);

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Refusals refusals;
    private final RdmaCounters counters;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment rqeBuf = arena.allocate(1 << RdmaIdentity.MAX_STRIDE, 8);
    private final MemorySegment cqeBuf = arena.allocate(V1.Cqe.SIZE, 8);
    private final MemorySegment word = arena.allocate(8, 8);
    private final V1.Wqe rqe = new V1.Wqe();
    private final V1.Cqe cqe = new V1.Cqe();
    private final Spans target = new Spans(), here = new Spans();
    private final Counters<PathCounter> path;
    private final QpErrors errors;
    private final Completions completions;
    /** The WQE id and status of the receive {@link #takeReceiveInto} took last. */
    long takenWqeId;
    int takenStatus;
    /** A datagram reached a UD QP that has no Q_Key: said once (the rule is the seed's, unusual for the IB spec). */
    private boolean unkeyedLogged;

    Responder(RdmaLif lif, KeyedMemory memory, Refusals refusals, RdmaCounters counters, Counters<PathCounter> path,
              QpErrors errors, Completions completions) {
        this.lif = lif;
        this.completions = completions;
        this.refusals = refusals;
        this.path = path;
        this.errors = errors;
        this.memory = memory;
        this.counters = counters;
    }

    /**
     * A SEND, SEND_IMM or SEND_INV ({@code op}, a V1.Wqe opcode) from QP {@code srcQpn} with {@code payload}.
     * A message longer than the receive buffer is the requester's fault (NAK invalid request); a receive
     * WQE the responder may not use (bad key, SGE past its MR, malformed) is its own (remote operational error).
     * A SEND_INV whose rkey cannot be invalidated (no such MR or type 2 window, a type 1 window, an MR with
     * windows bound) fails the receive, not the send.
     */
    int send(QueuePair dest, int srcQpn, int op, int imm, Spans payload, boolean solicited) {
        if (dest.rq == null) {
            return rejected(dest, V1.STS_REMOTE_INV_REQ_ERR);
        }
        if (!takeReceive(dest)) {
            return RNR;
        }
        long len = payload.total;
        int recvSt = memory.scatterList(dest, rqe, dest.rq.stride(), len, target.clear());
        if (recvSt == V1.STS_OK && !memory.copy(payload, target, len)) {
            recvSt = V1.STS_LOCAL_PROT_ERR;
        }
        WqeOpcode o = WqeOpcode.of(op);
        boolean invalidFailed = o.invalidate && recvSt == V1.STS_OK && !memory.invalidate(imm);
        if (invalidFailed) {
            // rxe's class J (an rkey that cannot be invalidated): the data is placed, the receive completes
            // with an invalid request error and the QP goes to ERROR; the sender had its ACK.
            recvSt = V1.STS_REMOTE_INV_REQ_ERR;
        }
        receiveCompletion(dest, rqe.wqeId(), srcQpn | o.recvOp << 24, o.immediate || o.invalidate ? imm : 0, len, recvSt, 0, 0, solicited);
        if (invalidFailed) {
            return V1.STS_OK;
        }
        return switch (recvSt) {
            case V1.STS_OK -> V1.STS_OK;
            case V1.STS_LOCAL_LEN_ERR -> V1.STS_REMOTE_INV_REQ_ERR;
            default -> V1.STS_REMOTE_OPER_ERR;
        };
    }

    /** An RDMA WRITE (with immediate data when {@code withImm}, which also consumes a receive). */
    int write(QueuePair dest, int srcQpn, boolean withImm, int imm, int rkey, long va, Spans payload,
              boolean solicited) {
        if (withImm && dest.rq == null) {
            return rejected(dest, V1.STS_REMOTE_INV_REQ_ERR);
        }
        if ((dest.accessFlags & V1.QPF_REMOTE_WRITE) == 0) {
            path.inc(PathCounter.ACCESS_DENIED);
            // RC: NAK invalid request (rxe: unsupported opcode, class C); UC: the message is dropped.
            return dest.type == V1.QPT_RC ? rejected(dest, V1.STS_REMOTE_INV_REQ_ERR) : V1.STS_OK;
        }
        if (withImm && dest.rq.empty()) {
            return RNR;
        }
        long len = payload.total;
        int st = memory.resolve(dest, rkey, va, len, V1.MRF_REMOTE_WRITE, true, target.clear());
        if (st != V1.STS_OK) {
            return rejected(dest, st);
        }
        if (!memory.copy(payload, target, len)) {
            return rejected(dest, V1.STS_REMOTE_ACC_ERR);
        }
        counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        if (withImm && takeReceive(dest)) {
            receiveCompletion(dest, rqe.wqeId(), srcQpn | WqeOpcode.RDMA_WRITE_IMM.recvOp << 24, imm, len, V1.STS_OK, 0, 0, solicited);
        }
        return V1.STS_OK;
    }

    /** An RDMA READ of {@code len} bytes: the checked source range is appended to {@code source}. */
    int read(QueuePair dest, int rkey, long va, long len, Spans source) {
        if ((dest.accessFlags & V1.QPF_REMOTE_READ) == 0) {
            path.inc(PathCounter.ACCESS_DENIED);
            return rejected(dest, V1.STS_REMOTE_INV_REQ_ERR);
        }
        int st = memory.resolve(dest, rkey, va, len, V1.MRF_REMOTE_READ, true, source);
        if (st != V1.STS_OK) {
            return rejected(dest, st);
        }
        counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        return st;
    }

    /**
     * ATOMIC_CS ({@code compareSwap}) or ATOMIC_FA on the aligned 8 bytes at {@code va}; the value they held
     * goes to {@code old} (8 bytes, little-endian as in guest memory).
     */
    int atomic(QueuePair dest, boolean compareSwap, int rkey, long va, long compare, long swapAdd, MemorySegment old) {
        if ((dest.accessFlags & V1.QPF_REMOTE_ATOMIC) == 0) {
            path.inc(PathCounter.ACCESS_DENIED);
            return rejected(dest, V1.STS_REMOTE_INV_REQ_ERR);
        }
        if ((va & 7) != 0) {
            return rejected(dest, V1.STS_REMOTE_INV_REQ_ERR);
        }
        int st = memory.resolve(dest, rkey, va, 8, V1.MRF_REMOTE_ATOMIC, true, target.clear());
        if (st != V1.STS_OK) {
            return rejected(dest, st);
        }
        here.clear().addLocal(word, 0, 8);
        if (!memory.copy(target, here, 8)) {
            return rejected(dest, V1.STS_REMOTE_ACC_ERR);
        }
        long was = LE.u64(word, 0);
        LE.put64(word, 0, compareSwap ? (was == compare ? swapAdd : was) : was + swapAdd);
        if (!memory.copy(here, target, 8)) {
            return rejected(dest, V1.STS_REMOTE_ACC_ERR);
        }
        path.add(PathCounter.BYTES, -16); // two 8-byte moves here (and one to the requester) for one 8-byte operation
        LE.put64(old, 0, was);
        counters.add(dest, RdmaCounters.Device.RX_REMOTE_REQS, 1);
        return V1.STS_OK;
    }

    /**
     * A datagram (its 40-byte GRH area first in {@code payload}) for UD QP {@code destQpn} under {@code qkey} (the
     * sender's resolved key: a controlled one was replaced by the sending QP's own): delivered into the next
     * receive, or dropped and counted when nothing takes it. The Q_Key rule is the seed's: a destination that has
     * a Q_Key takes only that one (IB spec: a mismatch is silently dropped and counted); one that MODIFY_QP never
     * gave a Q_Key takes any. The IB spec has no such QP (the kernel requires IB_QP_QKEY at INIT for UD), so the
     * two agree on everything stock software does.
     * {@code cqeFlags}: the source QPN with RECV_IS_IPV4 / RECV_IS_VLAN as the CQE carries them.
     */
    void datagram(int destQpn, int qkey, int cqeFlags, boolean withImm, int imm, Spans payload, long smac,
                  int vlan, boolean solicited) {
        QueuePair dest = lif.queuePairs.get(destQpn);
        if (payload.total < Grh.SIZE || dest == null || !dest.datagram() || !qkeyAccepted(dest, qkey)
                || !takeReceive(dest)) {
            udDropped();
            return;
        }
        long len = payload.total;
        int recvSt = memory.scatterList(dest, rqe, dest.rq.stride(), len, target.clear());
        if (recvSt == V1.STS_OK && !memory.copy(payload, target, len)) {
            recvSt = V1.STS_LOCAL_PROT_ERR;
        }
        int op = (withImm ? WqeOpcode.SEND_IMM : WqeOpcode.SEND).recvOp;
        receiveCompletion(dest, rqe.wqeId(), cqeFlags | op << 24, withImm ? imm : 0, len, recvSt, smac, vlan, solicited);
    }

    /**
     * A request the responder rejects (invalid request, remote access error): as in Soft-RoCE (rxe_resp.c,
     * classes A and C), an RC responder's QP goes to ERROR too, with no completion of its own (no receive
     * was consumed); a UC responder drops the message and goes on.
     */
    private int rejected(QueuePair dest, int status) {
        if (dest.type == V1.QPT_RC) {
            errors.failed(dest);
        }
        return status;
    }

    /** Whether UD QP {@code dest} takes a datagram under {@code qkey}; a refusal is counted and said once. */
    private boolean qkeyAccepted(QueuePair dest, int qkey) {
        if (!dest.hasQkey) {
            path.inc(PathCounter.UD_UNKEYED);
            if (!unkeyedLogged) {
                unkeyedLogged = true;
                log.warn("UD QP {} has no Q_Key (MODIFY_QP never gave it one): it takes datagrams under any Q_Key,"
                        + " as the seed defines (counted as rdma.ud.unkeyed; not logged again)", dest.id);
            }
            return true;
        }
        if (dest.qkey == qkey) {
            return true;
        }
        path.inc(PathCounter.UD_QKEY_MISMATCH);
        refusals.refuse("rdma-ud-qkey", "a datagram for UD QP " + dest.id + " under Q_Key 0x"
                + Integer.toHexString(qkey) + ", which is not its own: dropped");
        return false;
    }

    void udDropped() {
        path.inc(PathCounter.UD_DROPPED);
        counters.inc(RdmaCounters.Device.RX_UD_DROPPED);
    }

    /** Takes the next receive WQE of {@code dest} into rqeBuf; false when its RQ is empty or unreadable. */
    private boolean takeReceive(QueuePair dest) {
        WorkQueue rq = dest.rq;
        if (rq == null || rq.empty()) {
            return false;
        }
        long at = rq.slot(rq.cons);
        if (at < 0 || !memory.dma().read(at, rqeBuf, 0, rq.stride())) {
            return false;
        }
        rqe.wrap(rqeBuf, 0);
        rq.cons = (rq.cons + 1) & rq.mask();
        path.inc(PathCounter.RQ_WQES);
        return true;
    }

    /**
     * Takes the next receive of {@code dest} for a message that arrives in packets (RoCE): its buffers, checked
     * for local write, to their whole length into {@code into}; its WQE id in {@link #takenWqeId}, and in
     * {@link #takenStatus} the status its completion is to carry (not OK: a receive the responder may not use,
     * with {@code into} left empty). False when none is posted.
     */
    boolean takeReceiveInto(QueuePair dest, Spans into) {
        into.clear();
        if (!takeReceive(dest)) {
            return false;
        }
        takenWqeId = rqe.wqeId();
        int stride = dest.rq.stride();
        long capacity = KeyedMemory.sgeTotal(rqe, stride);
        takenStatus = capacity < 0 ? V1.STS_LOCAL_QP_OPER_ERR : memory.scatterList(dest, rqe, stride, capacity, into);
        if (takenStatus != V1.STS_OK) {
            into.clear();
        }
        return true;
    }

    /** Completes a receive {@link #takeReceiveInto} took: {@code srcQpnOp} as {@link #datagram}'s CQE flags. */
    void receiveCompleted(QueuePair dest, long wqeId, int srcQpnOp, int imm, long length, int status,
                          boolean solicited) {
        receiveCompletion(dest, wqeId, srcQpnOp, imm, length, status, 0, 0, solicited);
    }

    /** Posts a receive completion on {@code dest}'s RQ CQ for the receive WQE {@code wqeId}. */
    private void receiveCompletion(QueuePair dest, long wqeId, int srcQpnOp, int imm, long length, int status, long srcMac,
                                   int vlan, boolean solicited) {
        counters.add(dest, RdmaCounters.Device.RX_RECV_REQS, 1);
        if (status == V1.STS_OK) {
            counters.add(dest, RdmaCounters.Device.RX_RECV_BYTES, length);
        }
        CompletionQueue cq = lif.completionQueues.get(dest.rqCqId);
        if (cq != null) {
            postReceiveCompletion(cq, dest, wqeId, srcQpnOp, imm, length, status, srcMac, vlan, solicited);
        }
        if (status != V1.STS_OK) {
            errors.failed(dest);
        }
    }

    private void postReceiveCompletion(CompletionQueue cq, QueuePair dest, long wqeId, int srcQpnOp, int imm, long length,
                                       int status, long srcMac, int vlan, boolean solicited) {
        counters.add(dest, RdmaCounters.Device.RECV_COMPLETIONS, 1);
        if (status != V1.STS_OK) {
            counters.error(dest, status);
        }
        cqe.wrap(cqeBuf, 0).clear().wqeId(wqeId).srcQpnOp(srcQpnOp).immDataRkey(imm)
                .srcMac(srcMac).vlanTag(vlan)
                .statusLength(status == V1.STS_OK ? (int) length : status)
                .qidType(dest.id, V1.Cqe.TYPE_RECV, status != V1.STS_OK);
        if (status != V1.STS_OK) {
            cq.hold(); // let out by errors.failed after the flush that follows it
        }
        completions.post(cq, cqeBuf, solicited);
    }
}
