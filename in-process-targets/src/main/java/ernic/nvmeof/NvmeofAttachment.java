package ernic.nvmeof;

import ernic.attach.Attachment;
import ernic.attach.Datagram;
import ernic.attach.GuestQps;
import ernic.common.IpAddress;
import ernic.counters.Counters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The NVMe-oF target on the device's RDMA side, as the guest sees a peer at the target's address: the
 * datagrams its GSI QP (QP 1) sends to that address are CM MADs for the {@link CmResponder} ({@link #datagram}),
 * whose replies arrive in QP 1's receive queue as UD completions ({@link #deliver}); an established connection
 * binds the guest's QP to a {@link HostQpEnd} (its SENDs are command capsules), and DREQ/DREP, REJ, the QP's
 * destruction or a reset unbind it. Device thread only.
 */
public final class NvmeofAttachment implements Attachment, CmResponder.Listener {
    /** The GSI QP's number and the Q_Key every CM MAD goes under (IB_QP1_QKEY). */
    static final int GSI_QPN = 1, GSI_QKEY = 0x8001_0000;
    /** The management class of the communication manager. */
    static final int MGMT_CLASS_CM = 0x07, MAD_SIZE = 256;
    /** CM replies that may wait for the guest's GSI receives before newer ones are dropped. */
    static final int MAX_PENDING = 256;

    /** A CM MAD on its way to the guest's GSI QP. */
    private record Reply(byte[] mad, byte[] hostGid) { }

    private final NvmeofTarget target;
    private final CmResponder cm;
    private final GuestQps qps;
    private final Counters<PathCounter> path;
    /** The target's address as a GID (IPv4, v4-mapped). */
    private final IpAddress address;
    private final byte[] gid;
    private final Map<Integer, HostQpEnd> ends = new HashMap<>();
    /** The same ends by the guest QP they are bound to (an RQ doorbell finds its end without a search). */
    private HostQpEnd[] byHostQp = new HostQpEnd[0];
    private final ArrayDeque<Reply> pending = new ArrayDeque<>();
    private final MemorySegment mad = Arena.ofAuto().allocate(MAD_SIZE, 8);
    /** What the guest addresses the target by on the Ethernet (its AH's destination MAC and VLAN). */
    private long mac;
    private int vlan = -1;

    /** Puts {@code target} on the device side {@code qps}; its RDMA counters go to {@code path}. */
    public NvmeofAttachment(GuestQps qps, NvmeofTarget target, Counters<PathCounter> path) {
        this.qps = qps;
        this.target = target;
        this.path = path;
        this.cm = new CmResponder(target.options(), target.counters(), this);
        this.address = target.options().ip();
        this.gid = address.gid();
    }

    @Override
    public boolean owns(byte[] dgid) {
        return address.isGid(dgid);
    }

    // ---------------------------------------------------------------------------------------------
    // The GSI QP

    /** A CM MAD to QP 1 goes to the CM; anything else finds no taker and is lost, as on a wire. */
    @Override
    public boolean datagram(Datagram d) {
        long len = d.length();
        if (d.destQpn() != GSI_QPN || len != MAD_SIZE) {
            drop("nvmeof-ud", "datagram of " + len + " bytes for QPN " + d.destQpn() + " at the target's address");
            return false;
        }
        if (!d.copyTo(mad)) {
            drop("nvmeof-ud", "datagram to the target unreadable");
            return false;
        }
        byte[] bytes = mad.toArray(ValueLayout.JAVA_BYTE);
        if ((bytes[1] & 0xff) != MGMT_CLASS_CM) {
            drop("nvmeof-mad-class", "MAD of class 0x" + Integer.toHexString(bytes[1] & 0xff) + " to the target");
            return false;
        }
        path.inc(PathCounter.MADS);
        mac = d.destMac();
        vlan = d.vlan();
        byte[] hostGid = d.sourceGid();
        for (byte[] reply : cm.receive(bytes)) {
            queue(reply, hostGid);
        }
        return true;
    }

    private void queue(byte[] reply, byte[] hostGid) {
        if (pending.size() >= MAX_PENDING) {
            drop("nvmeof-gsi-full", "the guest's GSI QP took no CM reply for " + MAX_PENDING + " replies");
            return;
        }
        pending.add(new Reply(reply, hostGid));
    }

    /**
     * Delivers the CM's replies into the guest's GSI receive queue, as a peer's datagrams would arrive (after
     * the send that caused them has run); what finds no receive waits for the next RQ doorbell of QP 1.
     */
    private void deliver() {
        while (!pending.isEmpty()) {
            Reply reply = pending.peek();
            MemorySegment.copy(reply.mad, 0, mad, ValueLayout.JAVA_BYTE, 0, MAD_SIZE);
            if (qps.datagram(GSI_QPN, GSI_QKEY, gid, reply.hostGid, mad, mac, vlan) != GuestQps.Delivery.DELIVERED) {
                return;
            }
            pending.poll();
            path.inc(PathCounter.MADS_SENT);
        }
    }

    @Override
    public void receivesPosted(int qpn) {
        HostQpEnd end = qpn >= 0 ? bound(qpn) : null;
        if (end != null) {
            end.receivesPosted();
        }
        if ((qpn == GSI_QPN || qpn < 0) && !pending.isEmpty()) {
            deliver();
        }
    }

    @Override
    public void tick() {
        target.tick();
        if (!pending.isEmpty()) {
            deliver();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Connections

    @Override
    public void established(CmResponder.Connection c) {
        HostQpEnd end = new HostQpEnd(this, qps, c, path);
        String why = qps.bind(c.hostQpn, c.targetQpn, this, end);
        if (why != null) {
            // Its SENDs would go nowhere: end the connection now rather than let the host time out.
            qps.refuse("nvmeof-bind", "connection of QP " + c.hostQpn + " to 0x" + Integer.toHexString(c.targetQpn)
                    + ": the QP " + why);
            byte[] dreq = cm.disconnect(c);
            if (dreq != null) {
                queue(dreq, c.hostGid);
            }
            return;
        }
        end.open(target.openQueue(c.qid, c.hsqsize, qps.memory(), end));
        ends.put(c.targetQpn, end);
        if (c.hostQpn >= byHostQp.length) {
            byHostQp = Arrays.copyOf(byHostQp, Math.max(c.hostQpn + 1, 2 * byHostQp.length));
        }
        byHostQp[c.hostQpn] = end;
    }

    @Override
    public void closed(CmResponder.Connection c) {
        HostQpEnd end = ends.remove(c.targetQpn);
        if (end != null) {
            end.unbind();
            if (byHostQp[c.hostQpn] == end) {
                byHostQp[c.hostQpn] = null;
            }
        }
    }

    /** The target ends a connection (its controller failed): our DREQ to the host, and its QP to ERROR. */
    void disconnect(HostQpEnd end) {
        byte[] dreq = cm.disconnect(end.connection);
        if (dreq != null) {
            queue(dreq, end.connection.hostGid);
            deliver();
        }
        qps.fail(end.connection.hostQpn);
    }

    /** The end bound to guest QP {@code qpn}, or null. */
    private HostQpEnd bound(int qpn) {
        return qpn < byHostQp.length ? byHostQp[qpn] : null;
    }

    /** A QP is destroyed: the connection it was bound to ends with it. */
    @Override
    public void forget(int qpn) {
        HostQpEnd end = bound(qpn);
        if (end != null) {
            cm.forget(end.connection);
        }
    }

    /** Device reset: every connection ends, nothing waits for the GSI QP any more. */
    @Override
    public void reset() {
        for (HostQpEnd end : new ArrayList<>(ends.values())) {
            cm.forget(end.connection);
        }
        pending.clear();
    }

    /** The connection manager (tests look at its connections). */
    public CmResponder cm() {
        return cm;
    }

    private void drop(String cause, String detail) {
        path.inc(PathCounter.MADS_DROPPED);
        qps.refuse(cause, detail);
    }
}
