package ernic.ionic.rdma;

import ernic.counters.Counter;
import ernic.counters.Counters;
import ernic.roce.rc.RcCounter;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static ernic.common.Endian.BE;
import static ernic.common.Endian.LE;

/**
 * The RDMA counters of the device and of each QP, and their ionic v1 statistics layout: what the
 * STATS_HDRS / QP_STATS_HDRS admin commands DMA as headers (32-byte {@code {BE32 type<<28 | offset,
 * name[28]}} entries, ending with type 0) and STATS_VALS / QP_STATS_VALS as values (one LE64 per
 * counter, at 8 × its ordinal). The names are what the guest lists under {@code hw_counters}.
 *
 * <p>A QP's counters have the device layout (same names, same offsets), counted for that QP; the
 * device-wide ones (datagrams dropped, CQ events, admin commands, refusals) read zero for a QP.
 * ib_core adds a bound QP counter's values into the port's hw_counters index by index, over the
 * port's whole list, so the two lists must be the same length and order. The RoCEv2 counters (packets, ACKs,
 * NAKs, retransmissions, duplicates, congestion marks) count the wire end's traffic ({@code --roce}), device-wide:
 * they read zero for a QP, and without {@code --roce}. {@code cnp_sent} is always zero.
 * Device thread only; counting allocates nothing. In the registry the device set is {@code rdma.hw.*},
 * the control set {@code rdma.*} and the QPs' sets the family {@code rdma.hw.qp.*} labelled {@code qp}.
 */
public final class RdmaCounters {
    /** ionic_v1_stat: type in the top 4 bits of a BE32, then the offset; name[28] NUL-terminated. */
    public static final int HDR_SIZE = 32, NAME_SIZE = 28, TYPE_SHIFT = 28, TYPE_LE64 = 4;

    /** Device counters, in value-buffer order; a QP's counters use the same list. */
    public enum Device implements Counter {
        /** SEND, SEND_IMM, SEND_INV on RC/UC, and their payload bytes. */
        TX_SEND_REQS("tx_send_reqs"), TX_SEND_BYTES("tx_send_bytes"),
        /** RDMA WRITE and WRITE_IMM, and bytes written. */
        TX_WRITE_REQS("tx_rdma_write_reqs"), TX_WRITE_BYTES("tx_rdma_write_bytes"),
        /** RDMA READ, and bytes read. */
        TX_READ_REQS("tx_rdma_read_reqs"), TX_READ_BYTES("tx_rdma_read_bytes"),
        /** ATOMIC_CS and ATOMIC_FA. */
        TX_ATOMIC_REQS("tx_atomic_reqs"),
        /** Datagrams sent on UD (and GSI) QPs, and their payload bytes (GRH excluded). */
        TX_UD_REQS("tx_ud_reqs"), TX_UD_BYTES("tx_ud_bytes"),
        /** REG_MR, LOCAL_INV and BIND_MW work requests. */
        LOCAL_REQS("local_reqs"),
        /** Receive WQEs consumed (SEND, WRITE_IMM, datagrams), and bytes placed in them. */
        RX_RECV_REQS("rx_recv_reqs"), RX_RECV_BYTES("rx_recv_bytes"),
        /** RDMA WRITE, READ and atomics that targeted the QP's memory (responder side). */
        RX_REMOTE_REQS("rx_remote_reqs"),
        /** Completions written, and those carrying an error. */
        SEND_COMPLETIONS("send_completions"), RECV_COMPLETIONS("recv_completions"),
        COMPLETION_ERRORS("completion_errors"),
        /** QPs moved to ERROR (flushes). */
        QP_FLUSHES("qp_flushes"),
        /** Datagrams that found no taker (no QP, wrong Q_Key, empty RQ). Device-wide. */
        RX_UD_DROPPED("rx_ud_dropped"),
        /** Error completions by ionic status. */
        ERR_LOCAL_LEN("err_local_len"), ERR_LOCAL_QP_OPER("err_local_qp_oper"), ERR_LOCAL_PROT("err_local_prot"),
        ERR_WQE_FLUSHED("err_wqe_flushed"), ERR_MEM_MGMT_OPER("err_mem_mgmt_oper"), ERR_BAD_RESP("err_bad_resp"),
        ERR_LOCAL_ACC("err_local_acc"), ERR_REMOTE_INV_REQ("err_remote_inv_req"), ERR_REMOTE_ACC("err_remote_acc"),
        ERR_REMOTE_OPER("err_remote_oper"), ERR_RETRY_EXCEEDED("err_retry_exceeded"),
        ERR_RNR_RETRY_EXCEEDED("err_rnr_retry_exceeded"), ERR_OTHER("err_other"),
        /** CQ events (EQEs) raised. Device-wide, as are the admin and refusal counters. */
        CQ_EVENTS("cq_events"),
        /** RDMA admin commands run, and those that completed with an error status. */
        ADMIN_COMMANDS("admin_commands"), ADMIN_ERRORS("admin_errors"),
        /** Guest requests the device refused (every cause, Ethernet and RDMA; vfio-user's own excluded). */
        REFUSALS("refusals"),
        /**
         * RoCEv2 on the wire ({@code --roce}; device-wide, copied from the wire end's counts): packets and bytes each
         * way, packets dropped for a bad ICRC.
         */
        ROCE_TX_PKTS("roce_tx_pkts"), ROCE_TX_BYTES("roce_tx_bytes"), ROCE_RX_PKTS("roce_rx_pkts"),
        ROCE_RX_BYTES("roce_rx_bytes"), ROCE_RX_ICRC_ERR("roce_rx_icrc_err"),
        /** The RC transport on the wire: ACKs, NAKs by kind, each way. */
        ACKS_SENT("ack_sent"), ACKS_RCVD("ack_rcvd"), SEQ_ERRORS("seq_err"), SEQ_NAKS_SENT("seq_nak_sent"),
        RNR_NAKS("rnr_nak_rcvd"), RNR_NAKS_SENT("rnr_nak_sent"), ERR_NAKS_RCVD("err_nak_rcvd"),
        ERR_NAKS_SENT("err_nak_sent"),
        /** Packets sent again, and the retransmission timer's expiries. */
        RETRANSMITS("retransmits"), ACK_TIMEOUTS("ack_timeouts"),
        /** Duplicate requests answered again, and requests ahead of the expected PSN. */
        DUPLICATE_REQS("duplicate_req"), OUT_OF_SEQUENCE("out_of_sequence"),
        /** Congestion: no CNP is ever sent (no congestion control); CNPs and ECN CE marks received are counted. */
        CNP_SENT("cnp_sent"), CNP_RCVD("cnp_rcvd"), ECN_MARKED("ecn_marked");

        public final String hwName;

        Device(String hwName) {
            this.hwName = hwName;
        }

        @Override
        public String key() {
            return hwName;
        }
    }

    /** The control path's counters (admin commands, events) and the objects in use; not guest-visible. */
    public enum Control implements Counter {
        ADMIN_COMMANDS("admin.commands"), ADMIN_ERRORS("admin.errors"),
        /** CQ events raised (the same count as {@link Device#CQ_EVENTS}). */
        EVENTS("events"),
        /** Objects in use (gauges, back to zero at RDMA_RESET_LIF). */
        QPS("qps", true), CQS("cqs", true), MRS("mrs", true), MWS("mws", true), AHS("ahs", true);

        private final String key;
        private final boolean gauge;

        Control(String key) {
            this(key, false);
        }

        Control(String key, boolean gauge) {
            this.key = key;
            this.gauge = gauge;
        }

        @Override
        public String key() {
            return key;
        }

        @Override
        public boolean gauge() {
            return gauge;
        }
    }

    /** How many counters a QP has: the whole device list. */
    public static final int QP_COUNTERS = Device.values().length;

    private static final Device[] DEVICE = Device.values();

    final Counters<Device> device = new Counters<>(Device.class);
    final Counters<Control> control = new Counters<>(Control.class);

    public long get(Device c) {
        return device.get(c);
    }

    void add(Device c, long v) {
        device.add(c, v);
    }

    void inc(Device c) {
        device.inc(c);
    }

    /** Adds to the device counter and to {@code qp}'s. */
    void add(QueuePair qp, Device c, long v) {
        device.add(c, v);
        qp.counters.add(c, v);
    }

    /** An admin command ran; {@code failed} when its status was not OK. */
    void adminCommand(boolean failed) {
        control.inc(Control.ADMIN_COMMANDS);
        device.inc(Device.ADMIN_COMMANDS);
        if (failed) {
            control.inc(Control.ADMIN_ERRORS);
            device.inc(Device.ADMIN_ERRORS);
        }
    }

    /** A CQ event was raised. */
    void event() {
        control.inc(Control.EVENTS);
        device.inc(Device.CQ_EVENTS);
    }

    /** The refusals counter is kept by {@link Refusals} (it spans Ethernet too): copied in before a read. */
    void syncRefusals(Refusals refusals) {
        device.set(Device.REFUSALS, refusals.total());
    }

    /** The wire end's counts copied in ({@code --roce}): done where {@link #syncRefusals} is. */
    void syncWire(Counters<WireCounter> wire, Counters<RcCounter> rc) {
        device.set(Device.ROCE_TX_PKTS, wire.get(WireCounter.TX_FRAMES));
        device.set(Device.ROCE_TX_BYTES, wire.get(WireCounter.TX_BYTES));
        device.set(Device.ROCE_RX_PKTS, wire.get(WireCounter.RX_FRAMES));
        device.set(Device.ROCE_RX_BYTES, wire.get(WireCounter.RX_BYTES));
        device.set(Device.ROCE_RX_ICRC_ERR, wire.get(WireCounter.RX_BAD_ICRC));
        device.set(Device.CNP_RCVD, wire.get(WireCounter.RX_CNP));
        device.set(Device.ECN_MARKED, wire.get(WireCounter.RX_CE_MARKED));
        device.set(Device.ACKS_SENT, rc.get(RcCounter.RESP_ACKS));
        device.set(Device.ACKS_RCVD, rc.get(RcCounter.REQ_ACKS));
        device.set(Device.SEQ_ERRORS, rc.get(RcCounter.REQ_SEQ_NAKS));
        device.set(Device.SEQ_NAKS_SENT, rc.get(RcCounter.RESP_SEQ_NAKS));
        device.set(Device.RNR_NAKS, rc.get(RcCounter.REQ_RNR_NAKS));
        device.set(Device.RNR_NAKS_SENT, rc.get(RcCounter.RESP_RNR_NAKS));
        device.set(Device.ERR_NAKS_RCVD, rc.get(RcCounter.REQ_FATAL_NAKS));
        device.set(Device.ERR_NAKS_SENT, rc.get(RcCounter.RESP_NAK_OPCODE_SEQUENCE)
                + rc.get(RcCounter.RESP_NAK_BAD_LENGTH) + rc.get(RcCounter.RESP_NAK_RECEIVE_TOO_SHORT)
                + rc.get(RcCounter.RESP_NAK_MISALIGNED_ATOMIC) + rc.get(RcCounter.RESP_NAK_INVALIDATE)
                + rc.get(RcCounter.RESP_NAK_NO_RD_ATOMIC_RESOURCES) + rc.get(RcCounter.RESP_NAK_ACCESS));
        device.set(Device.RETRANSMITS, rc.get(RcCounter.REQ_RETRANSMITTED));
        device.set(Device.ACK_TIMEOUTS, rc.get(RcCounter.REQ_TIMEOUTS));
        device.set(Device.DUPLICATE_REQS, rc.get(RcCounter.RESP_DUPLICATES));
        device.set(Device.OUT_OF_SEQUENCE, rc.get(RcCounter.RESP_OUT_OF_SEQUENCE));
    }

    /** The objects in use back to zero (RDMA_RESET_LIF). */
    void clearObjects() {
        control.set(Control.QPS, 0);
        control.set(Control.CQS, 0);
        control.set(Control.MRS, 0);
        control.set(Control.MWS, 0);
        control.set(Control.AHS, 0);
    }

    /** Device power-on: everything back to zero. */
    void reset() {
        device.reset();
        control.reset();
    }

    /** A fresh per-QP counter set (the device list, counted for one QP). */
    static Counters<Device> newQp() {
        return new Counters<>(Device.class);
    }

    /** Counts an error completion of ionic status {@code status} (non-zero) on {@code qp}. */
    void error(QueuePair qp, int status) {
        add(qp, Device.COMPLETION_ERRORS, 1);
        add(qp, switch (status) {
            case V1.STS_LOCAL_LEN_ERR -> Device.ERR_LOCAL_LEN;
            case V1.STS_LOCAL_QP_OPER_ERR -> Device.ERR_LOCAL_QP_OPER;
            case V1.STS_LOCAL_PROT_ERR -> Device.ERR_LOCAL_PROT;
            case V1.STS_WQE_FLUSHED_ERR -> Device.ERR_WQE_FLUSHED;
            case V1.STS_MEM_MGMT_OPER_ERR -> Device.ERR_MEM_MGMT_OPER;
            case V1.STS_BAD_RESP_ERR -> Device.ERR_BAD_RESP;
            case V1.STS_LOCAL_ACC_ERR -> Device.ERR_LOCAL_ACC;
            case V1.STS_REMOTE_INV_REQ_ERR -> Device.ERR_REMOTE_INV_REQ;
            case V1.STS_REMOTE_ACC_ERR -> Device.ERR_REMOTE_ACC;
            case V1.STS_REMOTE_OPER_ERR -> Device.ERR_REMOTE_OPER;
            case V1.STS_RETRY_EXCEEDED -> Device.ERR_RETRY_EXCEEDED;
            case V1.STS_RNR_RETRY_EXCEEDED -> Device.ERR_RNR_RETRY_EXCEEDED;
            default -> Device.ERR_OTHER;
        }, 1);
    }

    /** The device counters by hw_counters name, in value order. */
    public Map<String, Long> deviceSnapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        device.forEach(m::put);
        return m;
    }

    /** One QP's counters by name. */
    static Map<String, Long> qpSnapshot(Counters<Device> qp) {
        Map<String, Long> m = new LinkedHashMap<>();
        qp.forEach(m::put);
        return m;
    }

    // ---------------------------------------------------------------------------------------------
    // The v1 statistics layout

    /** Bytes of the device (or QP) header list, terminator included. */
    static int headersSize(boolean perQp) {
        return ((perQp ? QP_COUNTERS : DEVICE.length) + 1) * HDR_SIZE;
    }

    /** Bytes of the device (or QP) values. */
    static int valuesSize(boolean perQp) {
        return (perQp ? QP_COUNTERS : DEVICE.length) * 8;
    }

    /** Writes the header list into {@code buf} at 0 (headersSize bytes). */
    static void writeHeaders(MemorySegment buf, boolean perQp) {
        int n = perQp ? QP_COUNTERS : DEVICE.length;
        buf.asSlice(0, headersSize(perQp)).fill((byte) 0);
        for (int i = 0; i < n; i++) {
            String name = DEVICE[i].hwName;
            long at = (long) i * HDR_SIZE;
            BE.put32(buf, at, TYPE_LE64 << TYPE_SHIFT | i * 8);
            byte[] b = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            MemorySegment.copy(MemorySegment.ofArray(b), 0, buf, at + 4, Math.min(b.length, NAME_SIZE - 1));
        }
    }

    /** Writes the device values into {@code buf} at 0 (valuesSize bytes). */
    void writeDeviceValues(MemorySegment buf) {
        for (int i = 0; i < DEVICE.length; i++) {
            LE.put64(buf, i * 8L, device.at(i));
        }
    }

    static void writeQpValues(MemorySegment buf, Counters<Device> qp) {
        for (int i = 0; i < QP_COUNTERS; i++) {
            LE.put64(buf, i * 8L, qp.at(i));
        }
    }

    /** Names of the device counters, in value order. */
    public static List<String> deviceNames() {
        return Arrays.stream(DEVICE).map(c -> c.hwName).toList();
    }
}
