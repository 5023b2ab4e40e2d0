package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The send side of one RC QP (IBTA vol. 1, 9.7; rdma_rxe's requester and completer): it cuts posted messages
 * into path-MTU packets with one PSN each (a READ request takes one PSN per response it will get), sets AckReq on
 * each message's last packet and every {@link #ACK_REQ_EVERY} packets, keeps at most {@link #MAX_UNACKED_PSNS} PSNs
 * unacknowledged and max_rd_atomic READs and atomics in flight, and turns the responder's
 * ACKs (coalesced: an ACK for PSN n acknowledges every PSN up to n), READ responses, atomic ACKs and NAKs into
 * completions, in the order the messages were posted.
 *
 * <p>Recovery is go-back-N from the oldest unacknowledged PSN, with a window of {@link #RETRY_WINDOW} PSNs after a
 * timeout that doubles back with each acknowledgement of progress (a sequence NAK halves it): after a PSN sequence NAK, an implied NAK (an ACK
 * past a READ or atomic whose response has not come), a retransmission timeout, or the wait an RNR NAK asks for.
 * retry_cnt bounds the retries without progress (then RETRY_EXC_ERR), rnr_retry the RNR NAKs (then
 * RNR_RETRY_EXC_ERR); progress resets both. 7 retries for ever in both, as rdma_rxe does (the IBTA gives 7 that
 * meaning for rnr_retry only). A remote access, invalid request or remote operational NAK completes
 * its message with the matching status and fails the QP: every later message is flushed.
 *
 * <p>Single-threaded, no clock of its own: {@link #poll} transmits, {@link #receive} takes a response,
 * {@link #tick} fires what {@link #nextDeadline} announced. Nothing is allocated after construction.
 */
public final class RcRequester extends ConnectedEngine implements ConnectedRequester {
    /**
     * PSNs sent and not acknowledged, at most (rxe's RXE_MAX_UNACKED_PSNS): more would only flood a receiver that
     * drops, and go-back-N would send every one of them again. A single READ longer than this still goes alone.
     */
    public static final int MAX_UNACKED_PSNS = 128;
    /**
     * The window after a retransmission timeout. A timeout says the responder is slow or its queue overflowed (a
     * TCG guest's receive ring, here): resending all 128 PSNs at once would overflow it again, and spend the retry
     * count on a responder that is alive. Each acknowledgement that makes progress doubles the window back; a
     * sequence NAK halves it.
     */
    public static final int RETRY_WINDOW = 8;
    /** AckReq at least every this many packets (rxe's RXE_MAX_PKT_PER_ACK), so the window reopens mid-message. */
    public static final int ACK_REQ_EVERY = 64;
    /** One posted work request, in a preallocated ring. */
    private static final class Wqe {
        long wrId;
        RcOp op;
        int length;
        long va;
        int rkey;
        int immOrInv;
        long swapAdd, compare;
        /** The SE bit on its last packet; begun only when no READ or atomic before it is in flight. */
        boolean solicited, fence;
        /** PSNs are given when the message is first sent. */
        boolean psnAssigned;
        int firstPsn, npkts;
        /** Counted in {@link #rdInFlight}. */
        boolean rdCounted;
    }

    private final RcRequesterHost host;
    private final long ackTimeout;

    private final Wqe[] ring;
    /** Sequence numbers (ring index = seq % length): oldest not completed, next to (re)send, next free. */
    private long headSeq, sendSeq, tailSeq;
    /** Packet index in the message at sendSeq, and the PSN of that packet. */
    private int pktIdx, psn;
    /** The PSN after the last one ever sent; the oldest PSN not acknowledged. */
    private int nextPsn, ackPsn;
    private int rdInFlight;
    /** Packets sent since the last one with AckReq. */
    private int sinceAckReq;
    /** PSNs that may be outstanding now: {@link #MAX_UNACKED_PSNS}, less after a timeout or a sequence NAK. */
    private int window = MAX_UNACKED_PSNS;
    private int retryLeft, rnrRetryLeft;
    /** A go-back from ackPsn is under way and nothing has been acknowledged since. */
    private boolean retrying;
    private boolean timerArmed, rnrWaiting, failed;
    private long timerDeadline, rnrDeadline;

    /**
     * @param destQp     the responder's QP number, put in every BTH
     * @param initialPsn the first PSN (sq_psn)
     * @param counters   what it counts into (shared by every QP of a device, for its registry)
     */
    public RcRequester(RcAttributes attr, int destQp, int initialPsn, RcPacketSink sink, RcRequesterHost host,
               Counters<RcCounter> counters) {
        super(attr, destQp, sink, counters);
        this.host = host;
        this.ackTimeout = attr.ackTimeoutNanos();
        this.ring = new Wqe[attr.sqDepth()];
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new Wqe();
        }
        this.psn = this.nextPsn = this.ackPsn = initialPsn & Psn.MASK;
        this.retryLeft = attr.retryCnt();
        this.rnrRetryLeft = attr.rnrRetry();
    }

    /**
     * Posts a message ({@link ConnectedRequester#post}). On a failed QP the message completes at once with
     * WR_FLUSH_ERR.
     *
     * @return false when the send queue is full
     */
    @Override
    public boolean post(long wrId, RcOp op, int flags, int length, long va, int rkey, int immOrInv, long swapAdd,
                        long compare) {
        if (length < 0) {
            throw new IllegalArgumentException("length " + length);
        }
        if (tailSeq - headSeq == ring.length) {
            return false;
        }
        if (failed) {
            host.completed(wrId, RcStatus.WR_FLUSH_ERR);
            return true;
        }
        Wqe w = ring[(int) (tailSeq % ring.length)];
        w.wrId = wrId;
        w.op = op;
        w.length = op.atomic() ? 8 : length;
        w.va = va;
        w.rkey = rkey;
        w.immOrInv = immOrInv;
        w.swapAdd = swapAdd;
        w.compare = compare;
        w.solicited = (flags & SOLICITED) != 0 && op.mayBeSolicited();
        w.fence = (flags & FENCE) != 0;
        w.psnAssigned = false;
        w.rdCounted = false;
        w.npkts = op.atomic() ? 1 : attr.packets(length);
        tailSeq++;
        return true;
    }

    /**
     * Transmits up to {@code budget} packets: new ones, or again from the PSN a retry went back to.
     *
     * @return the packets transmitted
     */
    @Override
    public int poll(long now, int budget) {
        int sent = 0;
        while (sent < budget && !failed && !rnrWaiting && sendSeq != tailSeq) {
            Wqe w = ring[(int) (sendSeq % ring.length)];
            if (!w.psnAssigned) {
                int inFlight = Psn.diff(nextPsn, ackPsn);
                if (inFlight + w.npkts >= Psn.WINDOW) {
                    break; // the responder could no longer tell these PSNs from old ones
                }
                if (w.op.readOrAtomic() && rdInFlight >= attr.maxRdAtomic() || w.fence && rdInFlight > 0) {
                    break;
                }
                w.firstPsn = nextPsn;
                w.psnAssigned = true;
                pktIdx = 0;
                psn = nextPsn;
            }
            int outstanding = Psn.diff(psn, ackPsn);
            if (outstanding > 0 && outstanding + (w.op.readOrAtomic() ? w.npkts : 1) > window) {
                break; // the window is full: ACKs reopen it
            }
            if (w.op.readOrAtomic() && !w.rdCounted) {
                rdInFlight++;
                w.rdCounted = true;
            }
            boolean again = Psn.lt(psn, nextPsn);
            emit(w);
            counters.inc(RcCounter.REQ_PACKETS);
            if (again) {
                counters.inc(RcCounter.REQ_RETRANSMITTED);
            }
            if (w.op.readOrAtomic() || pktIdx + 1 == w.npkts) {
                psn = Psn.add(w.firstPsn, w.npkts);
                pktIdx = 0;
                sendSeq++;
            } else {
                psn = Psn.add(psn, 1);
                pktIdx++;
            }
            if (Psn.lt(nextPsn, psn)) {
                nextPsn = psn;
            }
            if (!timerArmed && ackTimeout > 0) {
                timerArmed = true;
                timerDeadline = now + ackTimeout;
            }
            sent++;
        }
        return sent;
    }

    /** Fills {@link #out} and {@link #payload} for packet {@link #pktIdx} of {@code w} and hands them to the sink. */
    private void emit(Wqe w) {
        TransportHeader h = out;
        IbOpcode op = w.op.only.packet(pktIdx, w.npkts);
        long offset = (long) pktIdx * pmtu;
        h.opcode = op.code;
        h.solicited = w.solicited && op.last();
        h.destQp = destQp;
        h.psn = psn;
        // Half a window apart at most, so a small window is acknowledged before it fills.
        h.ackReq = op.last() || ++sinceAckReq >= Math.min(ACK_REQ_EVERY, Math.max(1, window / 2));
        if (h.ackReq) {
            sinceAckReq = 0;
        }
        h.va = w.va + offset;
        h.rkey = w.rkey;
        h.dmaLength = (int) (w.length - offset);
        h.swapAdd = w.swapAdd;
        h.compare = w.compare;
        h.imm = w.immOrInv;
        h.invRkey = w.immOrInv;
        if (w.op.carriesPayload()) {
            payload.message(w.wrId, offset, (int) Math.min(pmtu, w.length - offset));
        } else {
            payload.none();
        }
        sink.transmit(h, payload);
    }

    /**
     * Takes one response from the responder: an ACK or NAK, a READ response (its {@code length} bytes of payload
     * at {@code offset} of {@code data}) or an atomic ACK. Anything else is counted and dropped.
     */
    @Override
    public void receive(TransportHeader r, MemorySegment data, long offset, int length, long now) {
        IbOpcode o = IbOpcode.of(r.opcode);
        if (o == null || o.transport != IbOpcode.RC || o.request) {
            counters.inc(RcCounter.REQ_DROP_NOT_RESPONSE);
            return;
        }
        if (failed) {
            counters.inc(RcCounter.REQ_DROP_QP_ERROR);
            return;
        }
        int p = r.psn & Psn.MASK;
        if (!Psn.lt(p, nextPsn)) {
            counters.inc(RcCounter.REQ_DROP_PSN_OUT_OF_WINDOW);
            return;
        }
        if (Psn.lt(p, ackPsn)) {
            counters.inc(RcCounter.REQ_DROP_DUPLICATE);
            return;
        }
        if (o.has(IbOpcode.Header.AETH) && o != IbOpcode.RC_ACKNOWLEDGE && (r.syndrome & 0xe0) != 0) {
            counters.inc(RcCounter.REQ_DROP_BAD_SYNDROME); // a response that carries data is never a NAK
            return;
        }
        if (!o.payload && length != 0) {
            counters.inc(RcCounter.REQ_DROP_BAD_LENGTH);
            return;
        }
        switch (o) {
            case RC_ACKNOWLEDGE -> aeth(r.syndrome & 0xff, p, now);
            case RC_ATOMIC_ACKNOWLEDGE -> atomicAck(r, p, now);
            default -> readResponse(o, p, data, offset, length, now);
        }
    }

    /** An ACKNOWLEDGE: its AETH syndrome says ACK, RNR NAK or NAK (vol. 1, 9.7.5.1, table 44). */
    private void aeth(int syndrome, int p, long now) {
        switch (syndrome >>> 5) {
            case 0 -> {
                counters.inc(RcCounter.REQ_ACKS);
                if (ackThrough(p, now)) {
                    impliedNak(now);
                }
            }
            case 1 -> rnrNak(syndrome & 0x1f, p, now);
            case 3 -> {
                switch (syndrome & 0x1f) {
                    case 0 -> sequenceNak(p, now);
                    case 1 -> fatalNak(p, RcStatus.REM_INV_REQ_ERR, now);
                    case 2 -> fatalNak(p, RcStatus.REM_ACCESS_ERR, now);
                    case 3 -> fatalNak(p, RcStatus.REM_OP_ERR, now);
                    case 4 -> fatalNak(p, RcStatus.REM_INV_RD_REQ_ERR, now);
                    default -> counters.inc(RcCounter.REQ_DROP_BAD_SYNDROME);
                }
            }
            default -> counters.inc(RcCounter.REQ_DROP_BAD_SYNDROME);
        }
    }

    /**
     * Acknowledges every PSN up to {@code x}: completes the SENDs and WRITEs that end there, in order. Stops at
     * a READ or atomic, which only its response completes.
     *
     * @return true when {@code x} reaches a READ or atomic whose response has not come (an implied NAK)
     */
    private boolean ackThrough(int x, long now) {
        boolean progress = false, implied = false;
        while (headSeq != tailSeq) {
            Wqe w = ring[(int) (headSeq % ring.length)];
            if (!w.psnAssigned) {
                break;
            }
            int last = Psn.add(w.firstPsn, w.npkts - 1);
            if (w.op.readOrAtomic()) {
                implied = !Psn.lt(x, ackPsn);
                break;
            }
            if (Psn.le(last, x)) {
                ackPsn = Psn.add(last, 1);
                complete(RcStatus.SUCCESS);
                progress = true;
                continue;
            }
            if (Psn.le(ackPsn, x)) {
                ackPsn = Psn.add(x, 1); // part of a multi-packet message
                progress = true;
            }
            break;
        }
        if (progress) {
            progress(now);
        }
        return implied;
    }

    /** Something was acknowledged: the retry counts start again, the timer restarts, the send point follows. */
    private void progress(long now) {
        window = Math.min(MAX_UNACKED_PSNS, window * 2);
        retryLeft = attr.retryCnt();
        rnrRetryLeft = attr.rnrRetry();
        retrying = false;
        if (Psn.lt(psn, ackPsn)) {
            position(ackPsn);
        }
        restartTimer(now);
    }

    private void restartTimer(long now) {
        timerArmed = ackTimeout > 0 && Psn.lt(ackPsn, nextPsn) && !rnrWaiting;
        timerDeadline = now + ackTimeout;
    }

    /** Completes the oldest message. */
    private void complete(RcStatus status) {
        Wqe w = ring[(int) (headSeq % ring.length)];
        if (w.rdCounted) {
            rdInFlight--;
            w.rdCounted = false;
        }
        headSeq++;
        if (sendSeq < headSeq) {
            sendSeq = headSeq;
            pktIdx = 0;
        }
        host.completed(w.wrId, status);
    }

    /** Moves the send point to PSN {@code p} (at most {@link #nextPsn}): go-back-N. */
    private void position(int p) {
        for (long seq = headSeq; seq < tailSeq; seq++) {
            Wqe w = ring[(int) (seq % ring.length)];
            if (!w.psnAssigned) {
                sendSeq = seq;
                pktIdx = 0;
                psn = nextPsn;
                return;
            }
            if (Psn.lt(p, Psn.add(w.firstPsn, w.npkts))) {
                sendSeq = seq;
                pktIdx = Math.max(0, Psn.diff(p, w.firstPsn));
                psn = Psn.add(w.firstPsn, pktIdx);
                return;
            }
        }
        sendSeq = tailSeq;
        pktIdx = 0;
        psn = nextPsn;
    }

    /** Goes back to the oldest unacknowledged PSN, spending a retry; false (and the QP failed) when none is left. */
    private boolean retry(long now) {
        if (retryLeft == 0) {
            fail(RcStatus.RETRY_EXC_ERR);
            return false;
        }
        if (attr.retryCnt() != RcAttributes.RETRY_FOREVER) {
            retryLeft--;
        }
        retrying = true;
        position(ackPsn);
        timerArmed = ackTimeout > 0;
        timerDeadline = now + ackTimeout;
        return true;
    }

    private void impliedNak(long now) {
        counters.inc(RcCounter.REQ_IMPLIED_NAKS);
        if (retrying) {
            counters.inc(RcCounter.REQ_DROP_RETRY_UNDER_WAY);
            return;
        }
        window = Math.max(RETRY_WINDOW, window / 2);
        retry(now);
    }

    /** PSN sequence error NAK: the responder expects {@code p}; it has everything before. */
    private void sequenceNak(int p, long now) {
        counters.inc(RcCounter.REQ_SEQ_NAKS);
        if (p != ackPsn) {
            ackThrough(Psn.add(p, -1), now);
        }
        if (retrying) {
            counters.inc(RcCounter.REQ_DROP_RETRY_UNDER_WAY);
            return;
        }
        window = Math.max(RETRY_WINDOW, window / 2);
        retry(now);
    }

    /** RNR NAK for {@code p}: wait the RNR timer its code gives, then go back to it. */
    private void rnrNak(int code, int p, long now) {
        counters.inc(RcCounter.REQ_RNR_NAKS);
        if (p != ackPsn) {
            ackThrough(Psn.add(p, -1), now);
        }
        if (rnrRetryLeft == 0) {
            fail(RcStatus.RNR_RETRY_EXC_ERR);
            return;
        }
        if (attr.rnrRetry() != RcAttributes.RNR_RETRY_FOREVER) {
            rnrRetryLeft--;
        }
        rnrWaiting = true;
        rnrDeadline = now + RcAttributes.rnrTimerNanos(code);
        timerArmed = false;
    }

    /** A NAK that ends the QP: the message holding {@code p} completes with {@code status}. */
    private void fatalNak(int p, RcStatus status, long now) {
        counters.inc(RcCounter.REQ_FATAL_NAKS);
        if (p != ackPsn) {
            ackThrough(Psn.add(p, -1), now);
        }
        fail(status);
    }

    /** The oldest message completes with {@code status}, every later one with WR_FLUSH_ERR; the QP fails. */
    private void fail(RcStatus status) {
        failed = true;
        timerArmed = false;
        rnrWaiting = false;
        if (headSeq != tailSeq) {
            complete(status);
        }
        while (headSeq != tailSeq) {
            complete(RcStatus.WR_FLUSH_ERR);
        }
    }

    /** A READ response: data for the READ at the head, in PSN order; it also acknowledges what precedes it. */
    private void readResponse(IbOpcode o, int p, MemorySegment data, long offset, int length, long now) {
        Wqe w = expectResponse(p, RcOp.RDMA_READ, now);
        if (w == null) {
            return;
        }
        int idx = Psn.diff(p, w.firstPsn);
        // the last response ends the READ; a READ resent from part-way is answered from FIRST (or ONLY) there
        if (o.last() != (idx == w.npkts - 1)) {
            counters.inc(RcCounter.REQ_DROP_UNEXPECTED);
            return;
        }
        long at = (long) idx * pmtu;
        if (length != Math.min(pmtu, w.length - at)) {
            counters.inc(RcCounter.REQ_DROP_BAD_LENGTH);
            return;
        }
        counters.inc(RcCounter.REQ_READ_RESPONSES);
        if (length > 0) {
            host.scatter(w.wrId, at, data, offset, length);
        }
        ackPsn = Psn.add(p, 1);
        if (o.last()) {
            complete(RcStatus.SUCCESS);
        }
        progress(now);
    }

    private void atomicAck(TransportHeader r, int p, long now) {
        Wqe w = expectResponse(p, null, now);
        if (w == null) {
            return;
        }
        counters.inc(RcCounter.REQ_ATOMIC_ACKS);
        host.atomicResult(w.wrId, r.origData);
        ackPsn = Psn.add(p, 1);
        complete(RcStatus.SUCCESS);
        progress(now);
    }

    /**
     * The message a response at {@code p} (a PSN in [ackPsn, nextPsn)) answers, when it is the one now due: it
     * acknowledges the SENDs and WRITEs before it, and must be the next PSN acknowledged; a gap before it is an
     * implied NAK. {@code op} is RDMA_READ, or null for an atomic.
     */
    private Wqe expectResponse(int p, RcOp op, long now) {
        Wqe w = null;
        for (long seq = headSeq; seq < tailSeq; seq++) {
            Wqe c = ring[(int) (seq % ring.length)];
            if (!c.psnAssigned) {
                break;
            }
            if (Psn.lt(p, Psn.add(c.firstPsn, c.npkts))) {
                w = c;
                break;
            }
        }
        if (w == null || (op == null ? !w.op.atomic() : w.op != op)) {
            counters.inc(RcCounter.REQ_DROP_UNEXPECTED);
            return null;
        }
        if (Psn.lt(ackPsn, w.firstPsn) && ackThrough(Psn.add(w.firstPsn, -1), now)) {
            impliedNak(now); // an earlier READ or atomic is still unanswered
            return null;
        }
        if (p != ackPsn) {
            impliedNak(now); // responses before this one were lost
            return null;
        }
        return ring[(int) (headSeq % ring.length)] == w ? w : null;
    }

    /** Fires the RNR wait or the retransmission timer when {@code now} has reached it. */
    @Override
    public void tick(long now) {
        if (failed) {
            return;
        }
        if (rnrWaiting) {
            if (now - rnrDeadline >= 0) {
                rnrWaiting = false;
                position(ackPsn);
                restartTimer(now);
            }
            return;
        }
        if (timerArmed && now - timerDeadline >= 0) {
            if (!Psn.lt(ackPsn, nextPsn)) {
                timerArmed = false;
                return;
            }
            counters.inc(RcCounter.REQ_TIMEOUTS);
            window = RETRY_WINDOW;
            retry(now);
        }
    }

    /** When {@link #tick} next has work: the end of an RNR wait or the retransmission timer; else Long.MAX_VALUE. */
    @Override
    public long nextDeadline() {
        if (failed) {
            return Long.MAX_VALUE;
        }
        if (rnrWaiting) {
            return rnrDeadline;
        }
        return timerArmed ? timerDeadline : Long.MAX_VALUE;
    }

    /** The QP failed (a fatal NAK, or retries exhausted); every message has completed. */
    @Override
    public boolean failed() {
        return failed;
    }

    /** Messages posted and not yet completed. */
    @Override
    public int outstanding() {
        return (int) (tailSeq - headSeq);
    }

    /** The oldest PSN not yet acknowledged. */
    public int ackPsn() {
        return ackPsn;
    }

    /** The PSN the next new packet gets. */
    public int nextPsn() {
        return nextPsn;
    }

    /** READs and atomics sent and not yet answered. */
    public int readsInFlight() {
        return rdInFlight;
    }

    /** Waiting out an RNR NAK's timer. */
    public boolean rnrWaiting() {
        return rnrWaiting;
    }
}
