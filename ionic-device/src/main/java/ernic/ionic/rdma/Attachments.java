package ernic.ionic.rdma;

import ernic.attach.Attachment;
import ernic.attach.ConnectedEnd;
import ernic.attach.Datagram;
import ernic.attach.GuestQps;
import ernic.attach.HostMemory;
import ernic.common.IpAddress;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Function;

/**
 * The in-process peers on this data path ({@link Attachment}s) and what the data path offers them
 * ({@link GuestQps}). The data path calls every attachment's hooks and names none: a peer's address is this
 * node, its datagrams are offered to it, the QPs it connects are bound to a {@link BoundEnd}. Device thread only.
 */
final class Attachments implements GuestQps {
    /** The largest datagram an attachment delivers: a MAD is 256 bytes, a UD message at most one MTU. */
    static final int MAX_DATAGRAM = 4096;
    private static final int HOP_LIMIT = 64;

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Responder responder;
    private final QpErrors errors;
    private final Refusals refusals;
    private final HostMemory hostMemory;
    private Attachment[] all = new Attachment[0];
    private final MemorySegment datagram = Arena.ofAuto().allocate(Grh.SIZE + MAX_DATAGRAM, 8);
    private final Spans out = new Spans(), message = new Spans();
    private final Offered offered = new Offered();

    Attachments(RdmaLif lif, KeyedMemory memory, Responder responder, QpErrors errors, Refusals refusals,
                HostMemory hostMemory) {
        this.lif = lif;
        this.memory = memory;
        this.responder = responder;
        this.errors = errors;
        this.refusals = refusals;
        this.hostMemory = hostMemory;
    }

    <A extends Attachment> A add(Function<GuestQps, A> make) {
        A a = make.apply(this);
        all = Arrays.copyOf(all, all.length + 1);
        all[all.length - 1] = a;
        return a;
    }

    boolean any() {
        return all.length > 0;
    }

    /** The attachment whose address {@code gid} is, or null. */
    Attachment owner(byte[] gid) {
        if (gid == null) {
            return null;
        }
        for (Attachment a : all) {
            if (a.owns(gid)) {
                return a;
            }
        }
        return null;
    }

    /** Offers the datagram of {@code r} (GRH area first in its payload) to {@code to}; the WQE completes. */
    int offer(Attachment to, Request r) {
        offered.r = r;
        if (to.datagram(offered)) {
            r.moved = offered.length();
        }
        offered.r = null;
        return V1.STS_OK;
    }

    void receivesPosted(int qpn) {
        for (Attachment a : all) {
            a.receivesPosted(qpn);
        }
    }

    void tick() {
        for (Attachment a : all) {
            a.tick();
        }
    }

    void forget(QueuePair qp) {
        for (Attachment a : all) {
            a.forget(qp.id);
        }
    }

    void reset() {
        for (Attachment a : all) {
            a.reset();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // GuestQps

    @Override
    public HostMemory memory() {
        return hostMemory;
    }

    private QueuePair qp(int qpn) {
        return lif.queuePairs.get(qpn);
    }

    @Override
    public Delivery datagram(int qpn, int qkey, byte[] sourceGid, byte[] destGid, MemorySegment payload,
                             long sourceMac, int vlan) {
        long len = payload.byteSize();
        if (len > MAX_DATAGRAM) {
            throw new IllegalArgumentException("a datagram of " + len + " bytes, more than " + MAX_DATAGRAM);
        }
        QueuePair qp = qp(qpn);
        if (qp == null || !qp.datagram() || qp.rq == null || qp.rq.empty()) {
            return Delivery.NO_RECEIVE;
        }
        boolean ipv4 = IpAddress.ofGid(sourceGid).isIpv4();
        MemorySegment.copy(payload, 0, datagram, Grh.SIZE, len);
        Grh.fill(datagram.asSlice(0, Grh.SIZE), ipv4, sourceGid, destGid, 0, HOP_LIMIT, len);
        out.clear().addLocal(datagram, 0, Grh.SIZE + len);
        int flags = qpn | (ipv4 ? V1.Cqe.RECV_IS_IPV4 : 0) | (vlan >= 0 ? V1.Cqe.RECV_IS_VLAN : 0);
        responder.datagram(qpn, qkey, flags, false, 0, out, sourceMac, Math.max(vlan, 0), false);
        return Delivery.DELIVERED;
    }

    @Override
    public String bind(int qpn, int peerQpn, Attachment owner, ConnectedEnd end) {
        QueuePair qp = qp(qpn);
        String why = qp == null ? "does not exist"
                : qp.type != V1.QPT_RC ? "is not RC"
                : (qp.destQpn & 0xff_ffff) != peerQpn ? "has destination QPN " + qp.destQpn
                : qp.av == null || !owner.owns(qp.av.dgid) ? "has no address vector to the peer"
                : qp.end != null ? "is bound already"
                : null;
        if (why == null) {
            qp.end = new BoundEnd(end, memory);
        }
        return why;
    }

    @Override
    public void unbind(int qpn, ConnectedEnd end) {
        QueuePair qp = qp(qpn);
        if (qp != null && qp.end instanceof BoundEnd b && b.end == end) {
            qp.end = null;
        }
    }

    @Override
    public boolean receiving(int qpn) {
        QueuePair qp = qp(qpn);
        return qp != null && (qp.state == V1.QPS_RTR || qp.state == V1.QPS_RTS || qp.state == V1.QPS_SQD);
    }

    @Override
    public Delivery send(int qpn, int srcQpn, MemorySegment bytes, long offset, long length, boolean invalidate,
                         int rkey) {
        QueuePair qp = qp(qpn);
        if (qp == null) {
            return Delivery.FAILED;
        }
        message.clear().addLocal(bytes, offset, length);
        int st = responder.send(qp, srcQpn, (invalidate ? WqeOpcode.SEND_INV : WqeOpcode.SEND).code,
                invalidate ? rkey : 0, message, false);
        message.clear();
        return st == Responder.RNR ? Delivery.NO_RECEIVE : st == V1.STS_OK ? Delivery.DELIVERED : Delivery.FAILED;
    }

    @Override
    public void fail(int qpn) {
        QueuePair qp = qp(qpn);
        if (qp != null) {
            errors.failed(qp);
        }
    }

    @Override
    public void refuse(String cause, String detail) {
        refusals.refuse(cause, detail);
    }

    /** The datagram of the WQE being offered, as an attachment reads it. */
    private final class Offered implements Datagram {
        Request r;
        private final Spans into = new Spans();

        @Override
        public int destQpn() {
            return r.destQpn;
        }

        @Override
        public long length() {
            return r.payload.total - Grh.SIZE;
        }

        @Override
        public boolean copyTo(MemorySegment dst) {
            long len = length();
            into.clear().addLocal(dst, 0, len);
            boolean ok = memory.copy(r.payload, Grh.SIZE, into, len);
            into.clear();
            return ok;
        }

        @Override
        public byte[] sourceGid() {
            return r.ah.sgid;
        }

        @Override
        public long destMac() {
            return r.ah.dmac;
        }

        @Override
        public int vlan() {
            return r.ah.vlan;
        }
    }
}
