package ernic.nvmeof;

import ernic.counters.OncePerCause;

import ernic.common.IpAddress;

import ernic.nvmeof.NvmeofCounters.Traffic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static ernic.nvmeof.CmMad.*;

/**
 * The target's side of IB connection management on the guest's GSI QP, as plain Java over MAD bytes: a
 * MAD the guest sent in, the MADs to send back out ({@link #receive}). REQ is checked (service ID, RC,
 * the rdma_cm header, the NVMe/RDMA private data) and answered with REP, or with REJ carrying the
 * NVMe/RDMA status instead of leaving the host to time out; RTU establishes; DREQ gets DREP. The
 * controller's QP of each connection is numbered from {@link #QPN_BASE} (0xc0xxxx), a range the device
 * never gives a guest QP. The NQN is not in the CM data: a wrong NQN fails at Fabrics Connect.
 * Synthesising the GRH and delivering the replies as UD completions is the data path's job. Device thread only.
 */
public final class CmResponder {
    private static final Logger log = LoggerFactory.getLogger(CmResponder.class);
    public static final int QPN_BASE = 0xc0_0000, QPN_COUNT = 1 << 16;
    /** Most RDMA READs in flight we offer or accept (REP responder resources / initiator depth). */
    static final int MAX_RD_ATOMIC = 16;

    /** One connection, from the accepted REQ to its DREQ/DREP. */
    public static final class Connection {
        public enum State { REP_SENT, ESTABLISHED, DREQ_SENT, CLOSED }

        /** The host's QP and GID, the controller-side QP (0xc0xxxx) and GID. */
        public final int hostQpn, targetQpn;
        public final byte[] hostGid, targetGid;
        /** From the NVMe/RDMA private data: queue id, host RQ size, host SQ size (0's based). */
        public final int qid, hrqsize, hsqsize;
        /** The host's first PSN, and ours. */
        public final int hostPsn, targetPsn;
        final int hostCommId, localCommId;
        final byte[] rep;
        State state = State.REP_SENT;

        Connection(int hostQpn, int targetQpn, byte[] hostGid, byte[] targetGid, int qid, int hrqsize, int hsqsize,
                   int hostPsn, int targetPsn, int hostCommId, int localCommId, byte[] rep) {
            this.hostQpn = hostQpn;
            this.targetQpn = targetQpn;
            this.hostGid = hostGid;
            this.targetGid = targetGid;
            this.qid = qid;
            this.hrqsize = hrqsize;
            this.hsqsize = hsqsize;
            this.hostPsn = hostPsn;
            this.targetPsn = targetPsn;
            this.hostCommId = hostCommId;
            this.localCommId = localCommId;
            this.rep = rep;
        }

        public State state() {
            return state;
        }
    }

    /** What the data path does when a connection is established or gone. */
    public interface Listener {
        void established(Connection c);

        void closed(Connection c);
    }

    private final NvmeofOptions options;
    private final NvmeofCounters counters;
    private final Listener listener;
    private final OncePerCause refusals = new OncePerCause(log);
    private final int ip;
    private final Map<Integer, Connection> byCommId = new HashMap<>();
    private final Map<Integer, Connection> byQpn = new HashMap<>();
    /** Pending or live connections by (host comm id, host QPN): a retransmitted REQ finds its REP. */
    private final Map<Long, Connection> byHost = new HashMap<>();
    private final BitSet qpns = new BitSet(QPN_COUNT);
    private int nextCommId = 0x4e56_0001, nextQpn;
    private long nextTid = 0x4e56_4d65_0000_0000L;

    public CmResponder(NvmeofOptions options, NvmeofCounters counters, Listener listener) {
        this.options = options;
        this.counters = counters;
        this.listener = listener;
        this.ip = options.ip().ipv4();
    }

    /** The live connection whose controller-side QP is {@code qpn}, or null. */
    public Connection connection(int targetQpn) {
        return byQpn.get(targetQpn);
    }

    public int connections() {
        return byQpn.size();
    }

    /**
     * A MAD the guest's GSI QP sent (256 bytes, without the GRH). Returns the MADs to send back to the
     * sender, in order; empty when the MAD is not for us or needs no answer.
     */
    public List<byte[]> receive(byte[] mad) {
        List<byte[]> out = new ArrayList<>(1);
        if (mad.length < SIZE) {
            return ignore("short mad", mad.length + " bytes");
        }
        ByteBuffer b = be(mad);
        if (b.get(BASE_VERSION) != 1 || b.get(MGMT_CLASS) != MGMT_CLASS_CM || b.get(METHOD) != METHOD_SEND) {
            return ignore("not a cm send", "class 0x" + Integer.toHexString(b.get(MGMT_CLASS) & 0xff)
                    + " method 0x" + Integer.toHexString(b.get(METHOD) & 0xff));
        }
        if (b.get(CLASS_VERSION) != CM_CLASS_VERSION) {
            return ignore("cm class version", "version " + b.get(CLASS_VERSION));
        }
        int attr = Short.toUnsignedInt(b.getShort(ATTR_ID));
        long tid = b.getLong(TID);
        int local = b.getInt(LOCAL_COMM_ID), remote = b.getInt(REMOTE_COMM_ID);
        switch (attr) {
            case ATTR_REQ -> request(mad, b, tid, out);
            case ATTR_RTU -> {
                counters.traffic.inc(Traffic.CM_RTU);
                Connection c = byCommId.get(remote);
                if (c == null || c.hostCommId != local || c.state != Connection.State.REP_SENT) {
                    return ignore("rtu unknown", "RTU for comm id 0x" + Integer.toHexString(remote));
                }
                establish(c);
            }
            case ATTR_DREQ -> {
                counters.traffic.inc(Traffic.CM_DREQ);
                Connection c = byCommId.get(remote);
                // A DREQ for a connection we do not know still gets its DREP (as Linux's CM answers).
                byte[] drep = header(ATTR_DREP, tid);
                ByteBuffer d = be(drep);
                d.putInt(LOCAL_COMM_ID, remote).putInt(REMOTE_COMM_ID, local);
                out.add(drep);
                counters.traffic.inc(Traffic.CM_DREP);
                if (c != null && c.hostCommId == local) {
                    close(c);
                }
            }
            case ATTR_DREP -> {
                Connection c = byCommId.get(remote);
                if (c != null && c.hostCommId == local) {
                    close(c);
                }
            }
            case ATTR_REJ -> {
                // The host gave up on our REP (a time-out, or its consumer refused).
                Connection c = byCommId.get(remote);
                if (c != null && c.hostCommId == local) {
                    close(c);
                }
            }
            case ATTR_MRA -> { } // the host asks for patience; nothing to do
            default -> {
                return ignore("cm attribute", "attribute 0x" + Integer.toHexString(attr));
            }
        }
        return out;
    }

    /**
     * The host sent a SEND on the connection before its RTU arrived: by the IB spec that establishes the
     * connection too (the "communication established" event).
     */
    public void established(int targetQpn) {
        Connection c = byQpn.get(targetQpn);
        if (c != null && c.state == Connection.State.REP_SENT) {
            establish(c);
        }
    }

    /** Our side ends a connection (the controller failed): the DREQ to send; the DREP closes it. */
    public byte[] disconnect(Connection c) {
        if (c.state == Connection.State.CLOSED) {
            return null;
        }
        c.state = Connection.State.DREQ_SENT;
        byte[] dreq = header(ATTR_DREQ, nextTid++);
        be(dreq).putInt(LOCAL_COMM_ID, c.localCommId).putInt(REMOTE_COMM_ID, c.hostCommId)
                .putInt(DREQ_REMOTE_QPN, c.hostQpn << 8);
        return dreq;
    }

    /**
     * The host's QP of {@code c} is gone without a DREQ (destroyed, the device reset): the connection ends
     * here, as a CM whose peer vanished would end it after its time-outs.
     */
    public void forget(Connection c) {
        close(c);
    }

    private void establish(Connection c) {
        c.state = Connection.State.ESTABLISHED;
        listener.established(c);
    }

    private void close(Connection c) {
        if (c.state == Connection.State.CLOSED) {
            return;
        }
        c.state = Connection.State.CLOSED;
        byCommId.remove(c.localCommId);
        byQpn.remove(c.targetQpn);
        byHost.remove(hostKey(c.hostCommId, c.hostQpn));
        qpns.clear(c.targetQpn - QPN_BASE);
        listener.closed(c);
    }

    private static long hostKey(int commId, int qpn) {
        return (long) commId << 32 | Integer.toUnsignedLong(qpn);
    }

    private void request(byte[] mad, ByteBuffer b, long tid, List<byte[]> out) {
        counters.traffic.inc(Traffic.CM_REQ);
        int hostCommId = b.getInt(LOCAL_COMM_ID);
        int hostQpn = b.getInt(REQ_QPN_RESP) >>> 8, respResources = b.get(REQ_QPN_RESP + 3) & 0xff;
        int initDepth = b.get(REQ_EECN_INIT + 3) & 0xff;
        int tst = (b.get(REQ_TST + 3) & 0xff) >>> 1 & 3;
        int hostPsn = b.getInt(REQ_PSN) >>> 8;
        long serviceId = b.getLong(REQ_SERVICE_ID);
        Connection dup = byHost.get(hostKey(hostCommId, hostQpn));
        if (dup != null) {
            // A retransmitted REQ: our REP was lost (resend it) or the connection is up already (drop it).
            if (dup.state == Connection.State.REP_SENT) {
                out.add(dup.rep.clone());
                counters.traffic.inc(Traffic.CM_REP);
            }
            return;
        }
        int p = REQ_PRIVATE;
        // The rdma_cm header: version 0, IPv4, addressed to us; a REQ for another address is not ours.
        int ipVersion = (mad[p + CMA_IP_VERSION] & 0xff) >>> 4;
        int dst = be(mad).getInt(p + CMA_DST_ADDR + CMA_IP4_ADDR);
        if (mad[p + CMA_VERSION] == 0 && ipVersion == 4 && dst != ip) {
            ignore("req for another address", "REQ for " + IpAddress.ofIpv4(dst));
            return;
        }
        if (serviceId != (SERVICE_ID_TCP | options.port())) {
            out.add(reject(mad, tid, REJ_INVALID_SERVICE_ID, -1, "req service id",
                    "service ID 0x" + Long.toHexString(serviceId) + " (we listen on TCP port " + options.port() + ")"));
            return;
        }
        if (tst != RC) {
            out.add(reject(mad, tid, REJ_INVALID_TRANSPORT_TYPE, -1, "req transport", "transport service type " + tst));
            return;
        }
        if (mad[p + CMA_VERSION] != 0 || ipVersion != 4) {
            out.add(reject(mad, tid, REJ_CONSUMER_DEFINED, -1, "req cma header", "cma_version "
                    + (mad[p + CMA_VERSION] & 0xff) + ", IP version " + ipVersion + " (we serve IPv4 rdma_cm)"));
            return;
        }
        int n = p + CMA_HDR_SIZE;
        int recfmt = le16(mad, n + NVME_REQ_RECFMT), qid = le16(mad, n + NVME_REQ_QID);
        int hrqsize = le16(mad, n + NVME_REQ_HRQSIZE), hsqsize = le16(mad, n + NVME_REQ_HSQSIZE);
        int maxEntries = qid == 0 ? Nvme.AQ_DEPTH : NvmeofTarget.MQES + 1;
        int sts = recfmt != 0 ? NVME_RDMA_CM_INVALID_RECFMT
                : qid > options.queues() ? NVME_RDMA_CM_INVALID_QID
                : hsqsize < 1 || hsqsize + 1 > maxEntries ? NVME_RDMA_CM_INVALID_HSQSIZE
                : hrqsize < 1 || hrqsize > maxEntries ? NVME_RDMA_CM_INVALID_HRQSIZE
                : 0;
        if (sts != 0) {
            out.add(reject(mad, tid, REJ_CONSUMER_DEFINED, sts, "req nvme private data", "recfmt " + recfmt
                    + ", qid " + qid + ", hrqsize " + hrqsize + ", hsqsize " + hsqsize + " (NVMe/RDMA status " + sts + ")"));
            return;
        }
        int slot = qpns.nextClearBit(nextQpn);
        if (slot >= QPN_COUNT) {
            slot = qpns.nextClearBit(0);
        }
        if (slot >= QPN_COUNT) {
            out.add(reject(mad, tid, REJ_CONSUMER_DEFINED, NVME_RDMA_CM_NO_RSC, "req no qpn", "no free target QPN"));
            return;
        }
        qpns.set(slot);
        nextQpn = (slot + 1) % QPN_COUNT;
        int targetQpn = QPN_BASE + slot;
        int localCommId = nextCommId++;
        if (nextCommId == 0) {
            nextCommId = 1;
        }
        int targetPsn = (targetQpn * 0x9e37_79b9) >>> 8;  // any 24-bit start; fixed per QPN for repeatability
        byte[] hostGid = new byte[16], targetGid = new byte[16];
        System.arraycopy(mad, REQ_PRIMARY_LOCAL_GID, hostGid, 0, 16);
        System.arraycopy(mad, REQ_PRIMARY_REMOTE_GID, targetGid, 0, 16);

        byte[] rep = header(ATTR_REP, tid);
        ByteBuffer r = be(rep);
        r.putInt(LOCAL_COMM_ID, localCommId).putInt(REMOTE_COMM_ID, hostCommId)
                .putInt(REP_QPN, targetQpn << 8).putInt(REP_PSN, targetPsn << 8)
                .put(REP_RESP_RESOURCES, (byte) Math.min(initDepth, MAX_RD_ATOMIC))
                .put(REP_INIT_DEPTH, (byte) Math.min(respResources, MAX_RD_ATOMIC))
                .put(REP_ACK_FAILOVER_FLOW, (byte) 1)   // target ACK delay 0, failover accepted, flow control
                .put(REP_RNR_SRQ, (byte) (7 << 5))      // RNR retry 7 (infinite), no SRQ
                .putLong(REP_LOCAL_CA_GUID, 0x0200_5eff_fe00_0000L | ip & 0xff_ffffL);
        le16(rep, REP_PRIVATE + NVME_REP_RECFMT, 0);
        le16(rep, REP_PRIVATE + NVME_REP_CRQSIZE, hsqsize + 1);
        Connection c = new Connection(hostQpn, targetQpn, hostGid, targetGid, qid, hrqsize, hsqsize, hostPsn,
                targetPsn, hostCommId, localCommId, rep);
        byCommId.put(localCommId, c);
        byQpn.put(targetQpn, c);
        byHost.put(hostKey(hostCommId, hostQpn), c);
        counters.traffic.inc(Traffic.CM_REP);
        out.add(rep.clone());
    }

    /** A REJ of the REQ in {@code req}; with {@code nvmeStatus} >= 0 it carries nvme_rdma_cm_rej. */
    private byte[] reject(byte[] req, long tid, int reason, int nvmeStatus, String cause, String detail) {
        counters.traffic.inc(Traffic.CM_REJ);
        refusals.warn(cause, "{}: {}", cause, detail);
        byte[] rej = header(ATTR_REJ, tid);
        ByteBuffer r = be(rej);
        r.putInt(LOCAL_COMM_ID, 0).putInt(REMOTE_COMM_ID, be(req).getInt(LOCAL_COMM_ID))
                .put(REJ_MSG_REJECTED, (byte) (REJ_MSG_REQ << 6)).putShort(REJ_REASON, (short) reason);
        if (nvmeStatus >= 0) {
            le16(rej, REJ_PRIVATE + NVME_REJ_RECFMT, 0);
            le16(rej, REJ_PRIVATE + NVME_REJ_STS, nvmeStatus);
        }
        return rej;
    }

    private List<byte[]> ignore(String cause, String detail) {
        counters.traffic.inc(Traffic.CM_IGNORED);
        refusals.warn(cause, "{}: {}", cause, detail);
        return List.of();
    }

}
