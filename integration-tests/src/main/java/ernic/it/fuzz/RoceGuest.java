package ernic.it.fuzz;

import ernic.common.IpAddress;
import ernic.ionic.IonicDevice;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.Path;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RawWqe;
import ernic.model.rdma.RdmaRaw;
import ernic.model.rdma.RdmaVerbs;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static ernic.it.fuzz.RoceFuzz.CQ;
import static ernic.it.fuzz.RoceFuzz.CQ_LOG2;
import static ernic.it.fuzz.RoceFuzz.DEPTH;
import static ernic.it.fuzz.RoceFuzz.PROBE_CQ;
import static ernic.it.fuzz.RoceFuzz.PROBE_QP;
import static ernic.it.fuzz.RoceFuzz.RAM;
import static ernic.it.fuzz.RoceFuzz.STRIDE;
import static ernic.it.fuzz.RoceFuzz.ok;
import static ernic.model.rdma.Fw.*;

/** The driver model's {@link RdmaRaw} on a {@link FuzzGuest} of one device: CQ 8, MRs, QP rings, templates. */
final class RoceGuest implements AutoCloseable {
    /** Header templates: Ethernet, IPv4 or IPv6, UDP. */
    static final int V4_LEN = 14 + 20 + 8, V6_LEN = 14 + 40 + 8;

    final FuzzGuest fg;
    final IonicDriverModel drv;
    final RdmaRaw raw;
    final RawCqe.Ring cq;
    RawCqe.Ring probeCq;
    final RawWqe wqe = new RawWqe();
    final long[] sq = new long[PROBE_QP + 1], rq = new long[PROBE_QP + 1], header = new long[PROBE_QP + 1];
    final int[] sqProd = new int[PROBE_QP + 1], rqProd = new int[PROBE_QP + 1];
    /** The MRs made: where each VA range is in guest memory. */
    private final List<Mr> mrs = new ArrayList<>();

    private record Mr(long va, long bytes, long mem) {}

    RoceGuest(IonicDevice d) throws Exception {
        fg = new FuzzGuest(d, RAM);
        drv = fg.drv;
        raw = RdmaVerbs.open(drv).raw();
        cq = cq(CQ);
    }

    RawCqe.Ring cq(int id) throws Exception {
        long ring = drv.alloc(32L << CQ_LOG2);
        ok(raw.createCq(id, 2, ring, CQ_LOG2), "CREATE_CQ " + id);
        return raw.cqRing(ring, CQ_LOG2);
    }

    /** An MR of {@code bytes} at {@code va} in fresh pages (through a page table when more than one). */
    void mr(int key, long va, int bytes, int access, int pd) throws Exception {
        int pages = bytes / 4096;
        long mem = drv.alloc(bytes), dma = mem;
        if (pages > 1) {
            dma = drv.alloc(8L * pages);
            for (int i = 0; i < pages; i++) {
                le64(drv.mem(dma, 8L * pages), 8L * i, mem + 4096L * i);
            }
        }
        ok(raw.createMr(key, va, bytes, access, pages, dma, 12, pd), "CREATE_MR 0x" + Integer.toHexString(key));
        mrs.add(new Mr(va, bytes, mem));
    }

    /** Guest memory at {@code va} of the MR that holds it. */
    MemorySegment at(long va, long length) {
        for (Mr m : mrs) {
            if (va >= m.va && va - m.va + length <= m.bytes) {
                return drv.mem(m.mem + (va - m.va), length);
            }
        }
        throw new IllegalArgumentException("no MR of this guest holds 0x" + Long.toHexString(va));
    }

    void rings(int id) {
        sq[id] = drv.alloc((long) STRIDE * DEPTH);
        rq[id] = drv.alloc((long) STRIDE * DEPTH);
    }

    /**
     * RC QP {@code id} (created, or in RESET) through INIT (every remote right) and RTR (toward {@code destQpn}
     * with the template at {@code hdr}, expecting {@code rqPsn}) and, when {@code rts}, to RTS from
     * {@code sqPsn}: local ACK timeout 14 (67 ms), {@code retry} retries, RNR retries for ever.
     */
    void connect(int id, int destQpn, long hdr, int hdrLen, int rqPsn, int sqPsn, boolean rts, int retry)
            throws Exception {
        ok(raw.modifyQp(id, IB_QP_STATE | IB_QP_ACCESS_FLAGS, RdmaVerbs.INIT, 0, 0,
                RdmaVerbs.QP_REMOTE_WRITE | RdmaVerbs.QP_REMOTE_READ | RdmaVerbs.QP_REMOTE_ATOMIC), "INIT");
        ok(raw.admin(OP_MODIFY_QP, LEN_MODIFY_QP, c -> {
            be32(c, MQP_ATTR_MASK_BE, IB_QP_STATE | IB_QP_AV | IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_PATH_MTU
                    | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
            le32(c, MQP_QKEY_DEST_QPN, destQpn);
            le32(c, MQP_RQ_PSN, rqPsn);
            u8(c, MQP_PMTU, 10);
            u8(c, MQP_RSQ_DEPTH, 2);
            u8(c, MQP_RNR_TIMER, 1);
            u8(c, MQP_TYPE_STATE, RdmaVerbs.RTR);
            le32(c, MQP_ID_VER, id);
            le32(c, MQP_AH_ID_LEN, hdrLen << 24);
            le64(c, MQP_DMA_ADDR, hdr);
        }), "RTR");
        if (rts) {
            ok(raw.admin(OP_MODIFY_QP, LEN_MODIFY_QP, c -> {
                be32(c, MQP_ATTR_MASK_BE, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT
                        | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
                le32(c, MQP_SQ_PSN, sqPsn);
                u8(c, MQP_RETRY, retry | 7 << 4);
                u8(c, MQP_RETRY_TIMEOUT, 14);
                u8(c, MQP_RRQ_DEPTH, 2);
                u8(c, MQP_TYPE_STATE, RdmaVerbs.RTS);
                le32(c, MQP_ID_VER, id);
            }), "RTS");
        }
    }

    /** An Ethernet/IPv4/UDP template from {@code src} to {@code dst}, as the driver builds it for MODIFY_QP. */
    long ipv4Template(long dmac, long smac, int src, int dst) {
        return template(dmac, smac, IpAddress.ofIpv4(src).gid(), IpAddress.ofIpv4(dst).gid());
    }

    /**
     * The template between two GIDs: over IPv6, or over IPv4 when they are IPv4-mapped (the driver model's
     * {@link Path#template}: hop limit 64, UDP source port 0xc000).
     */
    long template(long dmac, long smac, byte[] src, byte[] dst) {
        long at = drv.alloc(Path.TEMPLATE_BYTES);
        new Path(smac, dmac, src, dst, 64, 0, 0xc000).template(drv.mem(at, Path.TEMPLATE_BYTES), 0, false);
        return at;
    }

    void postSend(int qp, Consumer<RawWqe> fill) {
        MemorySegment slot = drv.mem(sq[qp] + (long) STRIDE * (sqProd[qp] % DEPTH), STRIDE);
        slot.fill((byte) 0);
        fill.accept(wqe.wrap(slot).wqeId(sqProd[qp]));
        sqProd[qp]++;
        raw.ringSq(0, qp, sqProd[qp] % DEPTH);
    }

    void postRecv(int qp, long va, long len, int key) {
        MemorySegment slot = drv.mem(rq[qp] + (long) STRIDE * (rqProd[qp] % DEPTH), STRIDE);
        slot.fill((byte) 0);
        wqe.wrap(slot).wqeId(1000 + rqProd[qp]).numSgeKey(1).sge(WQE_PLD, 0, va, len, key);
        rqProd[qp]++;
        raw.ringRq(0, qp, rqProd[qp] % DEPTH);
    }

    /** Takes every completion on {@code ring} (of CQ 8 or the probe's), telling {@code to}. */
    void drain(RawCqe.Ring ring, RoceFuzz to) {
        RawCqe c;
        int n = 0;
        while (n < 1 << CQ_LOG2 && (c = ring.poll()) != null) {
            n++;
            if (to != null) {
                to.completion(c);
            }
        }
        if (n > 0) {
            raw.ringCq(ring == cq ? CQ : PROBE_CQ, 0, ring.consumer());
        }
    }

    @Override
    public void close() {
        fg.close();
    }
}
