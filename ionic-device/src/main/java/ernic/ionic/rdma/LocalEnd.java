package ernic.ionic.rdma;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static ernic.common.Endian.LE;

/**
 * The end for a destination in this same guest: the responder is called at once and the WQE completes
 * with its answer. A destination QP that does not exist or is not connected answers as a silent peer
 * would (retry exceeded).
 */
final class LocalEnd implements End {
    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Responder responder;
    private final Spans source = new Spans();
    private final MemorySegment old = Arena.ofAuto().allocate(8, 8);

    LocalEnd(RdmaLif lif, KeyedMemory memory, Responder responder) {
        this.lif = lif;
        this.memory = memory;
        this.responder = responder;
    }

    private QueuePair peer(Request r) {
        int id = r.qp.destQpn;
        QueuePair dest = lif.queuePairs.get(id);
        // Like a peer that drops what it cannot take: not connected, or not ready to receive (ERROR).
        return dest != null && dest.connected() && (dest.state == V1.QPS_RTR || dest.state == V1.QPS_RTS
                || dest.state == V1.QPS_SQD) ? dest : null;
    }

    private static int waitOn(int status) {
        return status == Responder.RNR ? Requester.WAIT_RECEIVE : status;
    }

    @Override
    public int send(Request r) {
        QueuePair dest = peer(r);
        if (dest == null) {
            return V1.STS_RETRY_EXCEEDED;
        }
        r.moved = r.payload.total;
        return waitOn(responder.send(dest, r.qp.id, r.wqe.op(), r.wqe.immDataKey(), r.payload, r.solicited()));
    }

    @Override
    public int write(Request r) {
        QueuePair dest = peer(r);
        if (dest == null) {
            return V1.STS_RETRY_EXCEEDED;
        }
        r.moved = r.payload.total;
        return waitOn(responder.write(dest, r.qp.id, r.opcode.immediate, r.wqe.immDataKey(),
                r.wqe.rkey(), r.wqe.remoteVa(), r.payload, r.solicited()));
    }

    @Override
    public int read(Request r) {
        QueuePair dest = peer(r);
        if (dest == null) {
            return V1.STS_RETRY_EXCEEDED;
        }
        int st = responder.read(dest, r.wqe.rkey(), r.wqe.remoteVa(), r.length, source.clear());
        if (st == V1.STS_OK && !memory.copy(source, r.local, r.length)) {
            st = V1.STS_REMOTE_ACC_ERR;
        }
        r.moved = r.length;
        return st;
    }

    @Override
    public int atomic(Request r) {
        QueuePair dest = peer(r);
        if (dest == null) {
            return V1.STS_RETRY_EXCEEDED;
        }
        int st = responder.atomic(dest, r.opcode == WqeOpcode.ATOMIC_CS, r.wqe.rkey(), r.wqe.remoteVa(),
                r.wqe.compare(), r.wqe.swapAdd(), old);
        if (st != V1.STS_OK) {
            return st;
        }
        r.moved = 8;
        return memory.putWord(r.local, LE.u64(old, 0)) ? V1.STS_OK : V1.STS_LOCAL_PROT_ERR;
    }

    @Override
    public int datagram(Request r) {
        AddressHandle ah = r.ah;
        int flags = r.qp.id & 0xff_ffff;
        int vlan = 0;
        if (ah != null && ah.ipv4) {
            flags |= V1.Cqe.RECV_IS_IPV4;
        }
        if (ah != null && ah.vlan >= 0) {
            flags |= V1.Cqe.RECV_IS_VLAN;
            vlan = ah.vlan;
        }
        r.moved = r.payload.total - Grh.SIZE;
        responder.datagram(r.destQpn, r.qkey, flags, r.opcode.immediate, r.wqe.immDataKey(),
                r.payload, ah != null ? ah.smac : 0, vlan, r.solicited());
        return V1.STS_OK; // a datagram that finds no taker is lost, not an error of the sender
    }
}
