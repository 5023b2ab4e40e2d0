package ernic.nvmeof;

import ernic.nvmeof.CmResponder.Connection;
import ernic.nvmeof.NvmeofCounters.Traffic;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CM state machine over MAD bytes built here from the IBTA CM message layouts (vol. 1 ch. 12) and
 * rdma_cm's and nvme-rdma's private data, as the guest's kernel sends them.
 */
class CmResponderTest {
    final NvmeofOptions options = NvmeofOptions.parse("nvmeof:queues=4", 1 << 16, 1 << 12);
    final NvmeofCounters counters = new NvmeofCounters();
    final List<Connection> established = new ArrayList<>(), closed = new ArrayList<>();
    final CmResponder cm = new CmResponder(options, counters, new CmResponder.Listener() {
        @Override
        public void established(Connection c) {
            established.add(c);
        }

        @Override
        public void closed(Connection c) {
            closed.add(c);
        }
    });

    static final int HOST_COMM_ID = 0x1234_5678, HOST_QPN = 0x11, HOST_PSN = 0xabcdef;
    static final long TID = 0x0000_0001_0000_0042L;

    /** A REQ as rdma_cm sends it for nvme-rdma: attribute 0x10, private data cma_hdr + nvme_rdma_cm_req. */
    static ByteBuffer req(int qid, int hrqsize, int hsqsize) {
        ByteBuffer m = ByteBuffer.allocate(256).order(ByteOrder.BIG_ENDIAN);
        m.put(0, (byte) 1).put(1, (byte) 0x07).put(2, (byte) 2).put(3, (byte) 0x03);  // base 1, CM, v2, Send
        m.putLong(8, TID).putShort(16, (short) 0x0010);
        m.putInt(24, HOST_COMM_ID);                      // local comm id
        m.putLong(32, 0x0000_0000_0106_0000L | 4420);    // service id: RDMA_PS_TCP, port 4420
        m.putInt(56, HOST_QPN << 8 | 16);                // local QPN, responder resources 16
        m.putInt(60, 0 << 8 | 8);                        // local EECN, initiator depth 8
        m.putInt(64, 0 << 8 | 20 << 3 | 0 << 1 | 1);     // remote EECN, response timeout, RC, flow control
        m.putInt(68, HOST_PSN << 8 | 20 << 3 | 7);       // starting PSN, timeout, retries
        m.putShort(72, (short) 0xffff);                  // P_Key
        // primary path: local GID (the host's ::ffff:192.168.200.2) @80, remote GID (ours) @96
        m.put(80 + 10, (byte) 0xff).put(80 + 11, (byte) 0xff).putInt(80 + 12, 0xc0a8_c802);
        m.put(96 + 10, (byte) 0xff).put(96 + 11, (byte) 0xff).putInt(96 + 12, 0xc0a8_c801);
        int p = 164;
        m.put(p, (byte) 0).put(p + 1, (byte) 0x40).putShort(p + 2, (short) 51000);  // cma_hdr: v0, IPv4, src port
        m.putInt(p + 4 + 12, 0xc0a8_c802).putInt(p + 20 + 12, 0xc0a8_c801);        // src and dst IPv4
        ByteBuffer n = m.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        n.putShort(p + 36, (short) 0).putShort(p + 38, (short) qid).putShort(p + 40, (short) hrqsize)
                .putShort(p + 42, (short) hsqsize);
        return m;
    }

    static ByteBuffer be(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN);
    }

    static int le16(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    static byte[] msg(int attr, int local, int remote) {
        ByteBuffer m = ByteBuffer.allocate(256);
        m.put(0, (byte) 1).put(1, (byte) 0x07).put(2, (byte) 2).put(3, (byte) 0x03).putLong(8, 77);
        m.putShort(16, (short) attr).putInt(24, local).putInt(28, remote);
        return m.array();
    }

    byte[] only(List<byte[]> out) {
        assertThat(out).hasSize(1);
        return out.getFirst();
    }

    @Test
    void reqRepRtuDreqDrep() {
        byte[] rep = only(cm.receive(req(1, 128, 127).array()));
        ByteBuffer r = be(rep);
        assertThat(r.getShort(16)).as("REP").isEqualTo((short) 0x0013);
        assertThat(r.getLong(8)).as("the REQ's transaction id").isEqualTo(TID);
        assertThat(r.get(1)).isEqualTo((byte) 0x07);
        int ours = r.getInt(24);
        assertThat(r.getInt(28)).as("remote comm id").isEqualTo(HOST_COMM_ID);
        int qpn = r.getInt(36) >>> 8;
        assertThat(qpn & 0xff_0000).as("a 0xc0xxxx QPN").isEqualTo(0xc0_0000);
        assertThat(r.get(48) & 0xff).as("responder resources <= host initiator depth").isEqualTo(8);
        assertThat(r.get(49) & 0xff).as("initiator depth <= host responder resources").isEqualTo(16);
        // private data @60: nvme_rdma_cm_rep {recfmt 0, crqsize = hsqsize + 1}
        assertThat(le16(rep, 60)).isZero();
        assertThat(le16(rep, 62)).isEqualTo(128);
        Connection c = cm.connection(qpn);
        assertThat(c.qid).isEqualTo(1);
        assertThat(c.hostQpn).isEqualTo(HOST_QPN);
        assertThat(c.hostPsn).isEqualTo(HOST_PSN);
        assertThat(c.hsqsize).isEqualTo(127);
        assertThat(c.hostGid[15]).isEqualTo((byte) 2);
        assertThat(c.state()).isEqualTo(Connection.State.REP_SENT);

        assertThat(cm.receive(msg(0x14, HOST_COMM_ID, ours))).as("RTU needs no answer").isEmpty();
        assertThat(established).containsExactly(c);
        assertThat(c.state()).isEqualTo(Connection.State.ESTABLISHED);

        byte[] drep = only(cm.receive(msg(0x15, HOST_COMM_ID, ours)));
        assertThat(be(drep).getShort(16)).as("DREP").isEqualTo((short) 0x0016);
        assertThat(be(drep).getInt(24)).isEqualTo(ours);
        assertThat(be(drep).getInt(28)).isEqualTo(HOST_COMM_ID);
        assertThat(be(drep).getLong(8)).as("the DREQ's transaction id").isEqualTo(77);
        assertThat(closed).containsExactly(c);
        assertThat(cm.connection(qpn)).isNull();
        assertThat(counters.traffic.get(Traffic.CM_REQ)).isEqualTo(1);
        assertThat(counters.traffic.get(Traffic.CM_DREP)).isEqualTo(1);
    }

    @Test
    void aRetransmittedReqGetsTheSameRep() {
        byte[] first = only(cm.receive(req(0, 32, 31).array()));
        byte[] again = only(cm.receive(req(0, 32, 31).array()));
        assertThat(again).isEqualTo(first);
        assertThat(cm.connections()).isEqualTo(1);
    }

    @Test
    void aSendBeforeRtuEstablishes() {
        int qpn = be(only(cm.receive(req(0, 32, 31).array()))).getInt(36) >>> 8;
        cm.established(qpn);
        assertThat(established).hasSize(1);
    }

    /** REJ: reason @34 (be16), rejected message @32 bits 7:6 (0 = REQ); private data @108. */
    void rejected(ByteBuffer req, int reason, int nvmeStatus) {
        byte[] rej = only(cm.receive(req.array()));
        ByteBuffer r = be(rej);
        assertThat(r.getShort(16)).as("REJ").isEqualTo((short) 0x0012);
        assertThat(r.getInt(28)).isEqualTo(HOST_COMM_ID);
        assertThat(r.get(32) >>> 6 & 3).as("REQ rejected").isZero();
        assertThat(r.getShort(34)).as("reason").isEqualTo((short) reason);
        if (nvmeStatus >= 0) {
            assertThat(le16(rej, 108)).as("recfmt").isZero();
            assertThat(le16(rej, 110)).as("NVMe/RDMA status").isEqualTo(nvmeStatus);
        }
        assertThat(cm.connections()).isZero();
    }

    @Test
    void rejectsWithTheNvmeRdmaStatus() {
        rejected(req(5, 128, 127), 28, 3);            // qid beyond queues=4: NVME_RDMA_CM_INVALID_QID
        rejected(req(1, 128, 128), 28, 4);            // hsqsize + 1 > 128: INVALID_HSQSIZE
        rejected(req(0, 32, 32), 28, 4);              // the admin queue is at most 32 entries
        rejected(req(1, 0, 127), 28, 5);              // hrqsize 0: INVALID_HRQSIZE
        ByteBuffer fmt = req(1, 128, 127);
        fmt.put(164 + 36, (byte) 1);                  // recfmt 1: INVALID_RECFMT
        rejected(fmt, 28, 2);
        assertThat(counters.traffic.get(Traffic.CM_REJ)).isEqualTo(5);
    }

    @Test
    void rejectsWhatIsNotAnNvmeRdmaRequest() {
        ByteBuffer port = req(1, 128, 127);
        port.putLong(32, 0x0106_0000L | 4421);
        rejected(port, 8, -1);                         // no listener on that port: invalid service ID
        ByteBuffer ud = req(1, 128, 127);
        ud.put(67, (byte) (ud.get(67) | 3 << 1));       // transport service type 3 (UD)
        rejected(ud, 9, -1);
        ByteBuffer v6 = req(1, 128, 127);
        v6.put(165, (byte) 0x60);                       // IPv6 rdma_cm header
        rejected(v6, 28, -1);
        ByteBuffer other = req(1, 128, 127);
        other.putInt(164 + 20 + 12, 0xc0a8_c863);       // for 192.168.200.99: not ours, no answer
        assertThat(cm.receive(other.array())).isEmpty();
        byte[] perf = req(1, 128, 127).array();
        perf[1] = 0x04;                                 // performance management class
        assertThat(cm.receive(perf)).isEmpty();
        assertThat(cm.receive(new byte[10])).isEmpty();
        assertThat(counters.traffic.get(Traffic.CM_IGNORED)).isEqualTo(3);
    }

    @Test
    void ourDisconnect() {
        int qpn = be(only(cm.receive(req(2, 128, 127).array()))).getInt(36) >>> 8;
        Connection c = cm.connection(qpn);
        int ours = c.localCommId;
        cm.receive(msg(0x14, HOST_COMM_ID, ours));
        byte[] dreq = cm.disconnect(c);
        assertThat(be(dreq).getShort(16)).as("DREQ").isEqualTo((short) 0x0015);
        assertThat(be(dreq).getInt(24)).isEqualTo(ours);
        assertThat(be(dreq).getInt(28)).isEqualTo(HOST_COMM_ID);
        assertThat(be(dreq).getInt(32) >>> 8).as("remote QPN").isEqualTo(HOST_QPN);
        assertThat(closed).isEmpty();
        assertThat(cm.receive(msg(0x16, HOST_COMM_ID, ours))).isEmpty();
        assertThat(closed).containsExactly(c);
        // the QPN is free again, and a DREQ for a connection we do not know still gets a DREP
        assertThat(only(cm.receive(msg(0x15, 5, 6)))[17]).isEqualTo((byte) 0x16);
    }

    @Test
    void theHostsRejEndsAPendingConnection() {
        int qpn = be(only(cm.receive(req(1, 128, 127).array()))).getInt(36) >>> 8;
        int ours = cm.connection(qpn).localCommId;
        cm.receive(msg(0x12, HOST_COMM_ID, ours));
        assertThat(cm.connection(qpn)).isNull();
        assertThat(closed).hasSize(1);
        assertThat(cm.receive(msg(0x14, HOST_COMM_ID, ours))).as("a late RTU").isEmpty();
        assertThat(established).isEmpty();
    }
}
