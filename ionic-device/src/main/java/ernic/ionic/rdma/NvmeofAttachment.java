package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.ionic.target.nvmeof.CmResponder;
import ernic.ionic.target.nvmeof.HostQueue;
import ernic.ionic.target.nvmeof.NvmeofTarget;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The in-process NVMe-oF target on this data path, as the guest sees a peer at the target's address: the
 * datagrams its GSI QP (QP 1) sends to that address are CM MADs offered to the {@link CmResponder}
 * ({@link #offer}), whose replies arrive in QP 1's receive queue as UD completions with a synthesised GRH
 * ({@link #deliver}); an established connection binds the guest's QP to a {@link TargetEnd} (its SENDs
 * are command capsules), and DREQ/DREP, REJ, the QP's destruction or a reset unbind it. Routing treats
 * the target's GID as this node ({@link #owns}). Device thread only.
 */
final class NvmeofAttachment implements CmResponder.Listener {
    /** The GSI QP's number and the Q_Key every CM MAD goes under (IB_QP1_QKEY). */
    static final int GSI_QPN = 1, GSI_QKEY = 0x8001_0000;
    /** The management class of the communication manager. */
    static final int MGMT_CLASS_CM = 0x07, MAD_SIZE = 256;
    /** CM replies that may wait for the guest's GSI receives before newer ones are dropped. */
    static final int MAX_PENDING = 256;
    private static final int HOP_LIMIT = 64;

    /** A CM MAD on its way to the guest's GSI QP. */
    private record Reply(byte[] mad, byte[] hostGid) { }

    final NvmeofTarget target;
    final CmResponder cm;
    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Responder responder;
    private final QpErrors errors;
    private final Refusals refusals;
    private final Counters<PathCounter> path;
    /** The target's address as a GID (IPv4, v4-mapped). */
    private final byte[] gid = new byte[16];
    private final Map<Integer, TargetEnd> ends = new HashMap<>();
    private final ArrayDeque<Reply> pending = new ArrayDeque<>();
    private final MemorySegment datagram = Arena.ofAuto().allocate(Grh.SIZE + MAD_SIZE, 8);
    private final byte[] mad = new byte[MAD_SIZE];
    private final Spans in = new Spans(), out = new Spans();
    /** What the guest addresses the target by on the Ethernet (its AH's destination MAC and VLAN). */
    private long mac;
    private int vlan = -1;

    NvmeofAttachment(RdmaLif lif, KeyedMemory memory, Responder responder, QpErrors errors, Refusals refusals,
                     Counters<PathCounter> path, NvmeofTarget target) {
        this.lif = lif;
        this.memory = memory;
        this.responder = responder;
        this.errors = errors;
        this.refusals = refusals;
        this.path = path;
        this.target = target;
        this.cm = new CmResponder(target.options(), target.counters(), this);
        gid[10] = gid[11] = (byte) 0xff;
        String[] octets = target.options().ip().split("\\.");
        for (int i = 0; i < 4; i++) {
            gid[12 + i] = (byte) Integer.parseInt(octets[i]);
        }
    }

    /** True when {@code dgid} is the target's address: the destination is in this node. */
    boolean owns(byte[] dgid) {
        return dgid != null && Arrays.equals(dgid, gid);
    }

    // ---------------------------------------------------------------------------------------------
    // The GSI QP

    /**
     * A datagram the guest sent to the target's address ({@link Request#payload}: the GRH area, then the
     * MAD): a CM MAD to QP 1 goes to the CM; anything else finds no taker and is lost, as on a wire. The
     * sender completes either way.
     */
    int offer(Request r) {
        long len = r.payload.total - Grh.SIZE;
        if (r.destQpn != GSI_QPN || len != MAD_SIZE) {
            drop("nvmeof-ud", "datagram of " + len + " bytes for QPN " + r.destQpn + " at the target's address");
            return V1.STS_OK;
        }
        in.clear().addLocal(datagram, 0, Grh.SIZE + MAD_SIZE);
        if (!memory.copy(r.payload, in, Grh.SIZE + MAD_SIZE)) {
            drop("nvmeof-ud", "datagram to the target unreadable");
            return V1.STS_OK;
        }
        MemorySegment.copy(datagram, java.lang.foreign.ValueLayout.JAVA_BYTE, Grh.SIZE, mad, 0, MAD_SIZE);
        if ((mad[1] & 0xff) != MGMT_CLASS_CM) {
            drop("nvmeof-mad-class", "MAD of class 0x" + Integer.toHexString(mad[1] & 0xff) + " to the target");
            return V1.STS_OK;
        }
        path.inc(PathCounter.TARGET_MADS);
        mac = r.ah.dmac;
        vlan = r.ah.vlan;
        List<byte[]> replies = cm.receive(mad.clone());
        for (byte[] reply : replies) {
            queue(reply, r.ah.sgid);
        }
        r.moved = len;
        return V1.STS_OK;
    }

    private void queue(byte[] reply, byte[] hostGid) {
        if (pending.size() >= MAX_PENDING) {
            drop("nvmeof-gsi-full", "the guest's GSI QP took no CM reply for " + MAX_PENDING + " replies");
            return;
        }
        pending.add(new Reply(reply, hostGid));
    }

    boolean hasPending() {
        return !pending.isEmpty();
    }

    /**
     * Delivers the CM's replies into the guest's GSI receive queue, as a peer's datagrams would arrive (after
     * the send that caused them has run); what finds no receive waits for the next RQ doorbell of QP 1.
     */
    void deliver() {
        while (!pending.isEmpty()) {
            QueuePair gsi = lif.qps[GSI_QPN];
            if (gsi == null || !gsi.datagram() || gsi.rq == null || gsi.rq.empty()) {
                return;
            }
            Reply reply = pending.poll();
            MemorySegment.copy(reply.mad, 0, datagram, java.lang.foreign.ValueLayout.JAVA_BYTE, Grh.SIZE, MAD_SIZE);
            Grh.fill(datagram.asSlice(0, Grh.SIZE), true, gid, reply.hostGid, 0, HOP_LIMIT, MAD_SIZE);
            out.clear().addLocal(datagram, 0, Grh.SIZE + MAD_SIZE);
            int flags = GSI_QPN | V1.Cqe.RECV_IS_IPV4 | (vlan >= 0 ? V1.Cqe.RECV_IS_VLAN : 0);
            responder.datagram(GSI_QPN, GSI_QKEY, flags, false, 0, out, mac, Math.max(vlan, 0), false);
            path.inc(PathCounter.TARGET_MADS_SENT);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Connections

    @Override
    public void established(CmResponder.Connection c) {
        QueuePair qp = c.hostQpn >= 0 && c.hostQpn < lif.qpCount ? lif.qps[c.hostQpn] : null;
        String why = qp == null ? "does not exist"
                : qp.type != V1.QPT_RC ? "is not RC"
                : (qp.destQpn & 0xff_ffff) != c.targetQpn ? "has destination QPN " + qp.destQpn
                : qp.av == null || !owns(qp.av.dgid) ? "has no address vector to the target"
                : qp.end != null ? "is bound already"
                : null;
        if (why != null) {
            // Its SENDs would go nowhere: end the connection now rather than let the host time out.
            refusals.refuse("nvmeof-bind", "connection of QP " + c.hostQpn + " to 0x" + Integer.toHexString(c.targetQpn)
                    + ": the QP " + why);
            byte[] dreq = cm.disconnect(c);
            if (dreq != null) {
                queue(dreq, c.hostGid);
            }
            return;
        }
        TargetEnd end = new TargetEnd(this, qp, c, memory, responder, path);
        HostQueue queue = target.openQueue(c.qid, c.hsqsize, lif.hostMemory(), end);
        end.open(queue);
        qp.end = end;
        ends.put(c.targetQpn, end);
    }

    @Override
    public void closed(CmResponder.Connection c) {
        TargetEnd end = ends.remove(c.targetQpn);
        if (end != null) {
            end.unbind();
        }
    }

    /** The target ends a connection (its controller failed): our DREQ to the host, and its QP to ERROR. */
    void disconnect(TargetEnd end) {
        byte[] dreq = cm.disconnect(end.connection);
        if (dreq != null) {
            queue(dreq, end.connection.hostGid);
            deliver();
        }
        errors.failed(end.qp);
    }

    /** A QP is destroyed: the connection it was bound to ends with it. */
    void destroyed(QueuePair qp) {
        if (qp.end instanceof TargetEnd end) {
            cm.forget(end.connection);
        }
    }

    /** Device reset: every connection ends, nothing waits for the GSI QP any more. */
    void reset() {
        for (TargetEnd end : new ArrayList<>(ends.values())) {
            cm.forget(end.connection);
        }
        pending.clear();
    }

    private void drop(String cause, String detail) {
        path.inc(PathCounter.TARGET_MADS_DROPPED);
        refusals.refuse(cause, detail);
    }
}
