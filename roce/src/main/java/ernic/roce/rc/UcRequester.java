package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The send side of one UC QP (IBTA vol. 1, 9.8, unreliable connection; rdma_rxe's requester for UC): it cuts
 * SENDs and RDMA WRITEs into path-MTU packets with the UC opcodes, one PSN each, and completes each message
 * successfully once its last packet is out: nothing is acknowledged, nothing is sent again, a lost packet loses its
 * message at the responder. UC carries no READs or atomics; posting one is a caller's error.
 *
 * <p>Single-threaded; nothing is allocated after construction. A completion comes from {@link #poll}, never from
 * {@link #post}.
 */
public final class UcRequester extends ConnectedEngine implements ConnectedRequester {
    /** One posted work request, in a preallocated ring. */
    private static final class Wqe {
        long wrId;
        IbOpcode only;
        int length;
        long va;
        int rkey;
        int imm;
        int npkts;
        /** The SE bit on its last packet. */
        boolean solicited;
    }

    private final RcRequesterHost host;
    private final Wqe[] ring;
    /** Sequence numbers (ring index = seq % length): the message being sent, the next free slot. */
    private long headSeq, tailSeq;
    /** Packet index in the message at headSeq; the PSN of the next packet. */
    private int pktIdx, psn;

    /**
     * @param destQp     the responder's QP number, put in every BTH
     * @param initialPsn the first PSN (sq_psn)
     */
    public UcRequester(RcAttributes attr, int destQp, int initialPsn, RcPacketSink sink, RcRequesterHost host,
                       Counters<RcCounter> counters) {
        super(attr, destQp, sink, counters);
        this.host = host;
        this.psn = initialPsn & Psn.MASK;
        this.ring = new Wqe[attr.sqDepth()];
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new Wqe();
        }
    }

    /**
     * Posts a message ({@link ConnectedRequester#post}); a fence has nothing to wait for on UC.
     *
     * @throws IllegalArgumentException for a READ or an atomic, which UC does not carry, or a negative length
     */
    @Override
    public boolean post(long wrId, RcOp op, int flags, int length, long va, int rkey, int immOrInv, long swapAdd,
                        long compare) {
        if (op.readOrAtomic() || op == RcOp.SEND_WITH_INV || length < 0) {
            throw new IllegalArgumentException("UC carries no " + op + " (length " + length + ")");
        }
        if (tailSeq - headSeq == ring.length) {
            return false;
        }
        Wqe w = ring[(int) (tailSeq % ring.length)];
        w.wrId = wrId;
        w.only = op.only.on(IbOpcode.UC);
        w.length = length;
        w.va = va;
        w.rkey = rkey;
        w.imm = immOrInv;
        w.npkts = attr.packets(length);
        w.solicited = (flags & SOLICITED) != 0 && op.mayBeSolicited();
        tailSeq++;
        return true;
    }

    /** Sends up to {@code budget} packets, completing each message whose last packet went. */
    @Override
    public int poll(long now, int budget) {
        int sent = 0;
        while (sent < budget && headSeq != tailSeq) {
            Wqe w = ring[(int) (headSeq % ring.length)];
            emit(w);
            counters.inc(RcCounter.REQ_PACKETS);
            psn = Psn.add(psn, 1);
            sent++;
            if (++pktIdx == w.npkts) {
                pktIdx = 0;
                headSeq++;
                host.completed(w.wrId, RcStatus.SUCCESS);
            }
        }
        return sent;
    }

    private void emit(Wqe w) {
        TransportHeader h = out;
        long offset = (long) pktIdx * pmtu;
        h.opcode = w.only.packet(pktIdx, w.npkts).code;
        h.solicited = w.solicited && pktIdx + 1 == w.npkts;
        h.ackReq = false;
        h.destQp = destQp;
        h.psn = psn;
        h.va = w.va;
        h.rkey = w.rkey;
        h.dmaLength = w.length;
        h.imm = w.imm;
        int n = (int) Math.min(pmtu, w.length - offset);
        if (n > 0) {
            payload.message(w.wrId, offset, n);
        } else {
            payload.none();
        }
        sink.transmit(h, payload);
    }

    /** UC has no responses: whatever comes is counted and dropped. */
    @Override
    public void receive(TransportHeader r, MemorySegment data, long offset, int length, long now) {
        counters.inc(RcCounter.UC_REQ_DROP_UNEXPECTED);
    }

    @Override
    public void tick(long now) {
        // no timers: nothing is sent again
    }

    @Override
    public long nextDeadline() {
        return Long.MAX_VALUE;
    }

    /** A UC requester never fails on its own: no responder's answer can fail it. */
    @Override
    public boolean failed() {
        return false;
    }

    /** The PSN the next packet gets. */
    public int nextPsn() {
        return psn;
    }

    /** Messages posted whose last packet has not gone yet. */
    @Override
    public int outstanding() {
        return (int) (tailSeq - headSeq);
    }
}
