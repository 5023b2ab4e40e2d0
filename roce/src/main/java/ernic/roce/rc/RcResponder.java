package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of one RC QP (IBTA vol. 1, 9.7; rdma_rxe's responder). It executes the requests that come
 * at the expected PSN, in order: a SEND into the posted receive, a WRITE into memory by rkey, a READ answered
 * with READ responses from memory, an atomic executed and answered with an ATOMIC ACKNOWLEDGE. It ACKs when a
 * packet asks (AckReq) or every {@link RcAttributes#ackEvery} packets, with the MSN (messages completed).
 *
 * <p>A request ahead of the expected PSN is dropped, and the first of a gap gets one PSN sequence error NAK; no
 * other until the expected PSN comes. A request behind it (a duplicate, within the 2^23 window) is not executed
 * again: a SEND or WRITE is ACKed (its own PSN) if it asks for an ACK, a READ answered again from memory, an atomic
 * answered from the replay record of its result (max_dest_rd_atomic records are kept; a duplicate with none left
 * is dropped). A SEND (or WRITE with immediate) with no receive posted gets an RNR NAK with the QP's min RNR timer
 * and is not executed.
 * An rkey, access, length or opcode-order error gets a NAK (remote access or invalid request) and fails the QP,
 * as rdma_rxe does; a failed responder drops everything.
 *
 * <p>Single-threaded; nothing is allocated after construction.
 */
public final class RcResponder extends ConnectedEngine implements ConnectedResponder {
    private final RcResponderHost host;

    /** The expected PSN and the message sequence number (messages completed, mod 2^24). */
    private int epsn, msn;
    /** A sequence (or RNR) NAK was sent for epsn: stay silent until it comes. */
    private boolean nakSent;
    private boolean failed;
    private int sinceAck;

    /** The message in progress. */
    private final Inbound in = new Inbound();
    /** A receive was taken for the message in progress. */
    private boolean haveReceive;

    // replay records of READs and atomics: a ring of max_dest_rd_atomic
    private final boolean[] recValid, recAtomic;
    private final int[] recPsn, recCount, recRkey;
    private final long[] recVa, recLength, recOriginal;
    private int recNext;

    /**
     * @param destQp     the requester's QP number, put in every response's BTH
     * @param initialPsn the first expected PSN (rq_psn)
     * @param counters   what it counts into (shared by every QP of a device, for its registry)
     */
    public RcResponder(RcAttributes attr, int destQp, int initialPsn, RcPacketSink sink, RcResponderHost host,
               Counters<RcCounter> counters) {
        super(attr, destQp, sink, counters);
        this.host = host;
        this.epsn = initialPsn & Psn.MASK;
        int n = attr.maxDestRdAtomic();
        recValid = new boolean[n];
        recAtomic = new boolean[n];
        recPsn = new int[n];
        recCount = new int[n];
        recRkey = new int[n];
        recVa = new long[n];
        recLength = new long[n];
        recOriginal = new long[n];
    }

    /**
     * Takes one request packet: its headers and its {@code length} bytes of payload at {@code offset} of
     * {@code data}. Responses (ACK, NAK, READ responses, atomic ACKs) go to the sink before it returns.
     */
    @Override
    public void receive(TransportHeader r, MemorySegment data, long offset, int length, long now) {
        IbOpcode o = Inbound.request(r, IbOpcode.RC, counters);
        if (o == null) {
            return;
        }
        if (failed) {
            counters.inc(RcCounter.RESP_DROP_QP_ERROR);
            return;
        }
        int p = r.psn & Psn.MASK;
        int d = Psn.diff(p, epsn);
        if (d > 0) {
            counters.inc(RcCounter.RESP_OUT_OF_SEQUENCE);
            if (!nakSent) {
                nakSent = true;
                counters.inc(RcCounter.RESP_SEQ_NAKS);
                acknowledge(TransportHeader.AETH_NAK_PSN_SEQUENCE, epsn);
            }
            return;
        }
        if (d < 0) {
            duplicate(o, p, r.ackReq);
            return;
        }
        nakSent = false;
        if (!Inbound.lengthFits(o, length, pmtu)) {
            invalidRequest(RcCounter.RESP_NAK_BAD_LENGTH, p);
            return;
        }
        if (!in.inOrder(o)) {
            invalidRequest(RcCounter.RESP_NAK_OPCODE_SEQUENCE, p);
            return;
        }
        switch (o) {
            case RC_RDMA_READ_REQUEST -> read(r, p);
            case RC_CMP_SWAP, RC_FETCH_ADD -> atomic(r, p, o == IbOpcode.RC_CMP_SWAP);
            default -> {
                if (Inbound.isSend(o) ? send(o, r, p, data, offset, length) : write(o, r, p, data, offset, length)) {
                    counters.inc(RcCounter.RESP_PACKETS);
                    epsn = Psn.add(epsn, 1);
                    if (r.ackReq || attr.ackEvery() > 0 && ++sinceAck >= attr.ackEvery()) {
                        acknowledge(TransportHeader.AETH_ACK, p);
                    }
                }
            }
        }
    }

    /** A SEND packet; false when it was refused (RNR NAK or a fatal NAK sent). */
    private boolean send(IbOpcode o, TransportHeader r, int p, MemorySegment data, long offset, int length) {
        if (o.first()) {
            if (!host.takeReceive()) {
                rnr(p);
                return false;
            }
            haveReceive = true;
            in.receiveOffset = 0;
        }
        if (!in.receiveFits(host, length)) {
            counters.inc(RcCounter.RESP_NAK_RECEIVE_TOO_SHORT);
            haveReceive = false;
            host.receiveCompleted(RcStatus.LOC_LEN_ERR, in.receiveOffset + length, false, 0, false, 0, false);
            fatal(TransportHeader.AETH_NAK_INVALID_REQUEST, null, RcStatus.LOC_LEN_ERR, p);
            return false;
        }
        in.receive(host, o, data, offset, length);
        if (!o.last()) {
            return true;
        }
        if (o.invalidate() && (r.invRkey == 0 || !host.invalidate(r.invRkey))) {
            invalidRequest(RcCounter.RESP_NAK_INVALIDATE, p);
            return false;
        }
        haveReceive = false;
        msn = Psn.add(msn, 1);
        host.receiveCompleted(RcStatus.SUCCESS, in.receiveOffset, o.immediate(), r.imm, o.invalidate(), r.invRkey,
                r.solicited);
        return true;
    }

    /** An RDMA WRITE packet; false when it was refused. */
    private boolean write(IbOpcode o, TransportHeader r, int p, MemorySegment data, long offset, int length) {
        if (o.first()) {
            in.startWrite(r);
            if (in.length > Integer.MAX_VALUE) {
                invalidRequest(RcCounter.RESP_NAK_BAD_LENGTH, p);
                return false;
            }
            if (in.length > 0 && !Inbound.accessible(host, in.rkey, in.va, in.length, RcResponderHost.REMOTE_WRITE)) {
                remoteAccess(p);
                return false;
            }
        }
        if (!in.writeFits(o, length)) {
            invalidRequest(RcCounter.RESP_NAK_BAD_LENGTH, p);
            return false;
        }
        if (o.immediate()) {
            if (!host.takeReceive()) {
                rnr(p); // nothing of this packet is executed; a retry brings it again
                return false;
            }
            haveReceive = true;
        }
        in.write(host, o, data, offset, length);
        if (!o.last()) {
            return true;
        }
        msn = Psn.add(msn, 1);
        if (o.immediate()) {
            haveReceive = false;
            host.receiveCompleted(RcStatus.SUCCESS, in.length, true, r.imm, false, 0, r.solicited);
        }
        return true;
    }

    /** An RDMA READ request: checked, recorded for replay, answered with ceil(len / pmtu) responses. */
    private void read(TransportHeader r, int p) {
        if (noRdAtomicResources(p)) {
            return;
        }
        long len = Integer.toUnsignedLong(r.dmaLength);
        if (len > Integer.MAX_VALUE) {
            invalidRequest(RcCounter.RESP_NAK_BAD_LENGTH, p);
            return;
        }
        if (len > 0 && !Inbound.accessible(host, r.rkey, r.va, len, RcResponderHost.REMOTE_READ)) {
            remoteAccess(p);
            return;
        }
        int count = attr.packets(len);
        counters.inc(RcCounter.RESP_PACKETS);
        msn = Psn.add(msn, 1);
        record(p, count, false, r.rkey, r.va, len, 0);
        readResponses(p, r.rkey, r.va, len);
        epsn = Psn.add(p, count);
        sinceAck = 0;
    }

    /** READ responses from PSN {@code p} for {@code len} bytes at {@code va}. */
    private void readResponses(int p, int rkey, long va, long len) {
        int count = attr.packets(len);
        TransportHeader h = header(p);
        for (int i = 0; i < count; i++) {
            long at = (long) i * pmtu;
            h.opcode = IbOpcode.RC_RDMA_READ_RESPONSE_ONLY.packet(i, count).code;
            h.psn = Psn.add(p, i);
            h.syndrome = TransportHeader.AETH_ACK;
            h.msn = msn;
            int n = (int) Math.min(pmtu, len - at);
            if (n == 0) {
                payload.none(); // a READ of 0 bytes touches no memory (and may name no region)
            } else {
                payload.memory(rkey, va + at, n);
            }
            counters.inc(RcCounter.RESP_READ_RESPONSES);
            sink.transmit(h, payload);
        }
    }

    /**
     * True (after the NAK) when this responder takes no READs and atomics: max_dest_rd_atomic 0, the QP's value until
X
     */
    private boolean noRdAtomicResources(int p) {
        if (attr.maxDestRdAtomic() > 0) {
            return false;
        }
        invalidRequest(RcCounter.RESP_NAK_NO_RD_ATOMIC_RESOURCES, p);
        return true;
    }

    /** An atomic: executed once, its original value recorded for replay and returned. */
    private void atomic(TransportHeader r, int p, boolean compareSwap) {
        if (noRdAtomicResources(p)) {
            return;
        }
        if ((r.va & 7) != 0) {
            invalidRequest(RcCounter.RESP_NAK_MISALIGNED_ATOMIC, p);
            return;
        }
        if (!Inbound.accessible(host, r.rkey, r.va, 8, RcResponderHost.REMOTE_ATOMIC)) {
            remoteAccess(p);
            return;
        }
        long original = host.atomic(r.rkey, r.va, compareSwap, r.swapAdd, r.compare);
        counters.inc(RcCounter.RESP_PACKETS);
        msn = Psn.add(msn, 1);
        record(p, 1, true, r.rkey, r.va, 8, original);
        atomicAck(p, original);
        epsn = Psn.add(p, 1);
        sinceAck = 0;
    }

    private void atomicAck(int p, long original) {
        TransportHeader h = header(p);
        h.opcode = IbOpcode.RC_ATOMIC_ACKNOWLEDGE.code;
        h.syndrome = TransportHeader.AETH_ACK;
        h.msn = msn;
        h.origData = original;
        payload.none();
        counters.inc(RcCounter.RESP_ATOMIC_ACKS);
        sink.transmit(h, payload);
    }

    private void record(int p, int count, boolean atomic, int rkey, long va, long len, long original) {
        int i = recNext;
        recNext = (recNext + 1) % recValid.length;
        recValid[i] = true;
        recAtomic[i] = atomic;
        recPsn[i] = p;
        recCount[i] = count;
        recRkey[i] = rkey;
        recVa[i] = va;
        recLength[i] = len;
        recOriginal[i] = original;
    }

    /** The replay record whose PSNs hold {@code p}, or -1. */
    private int findRecord(int p, boolean atomic) {
        for (int i = 0; i < recValid.length; i++) {
            if (recValid[i] && recAtomic[i] == atomic) {
                int d = Psn.diff(p, recPsn[i]);
                if (d >= 0 && d < recCount[i]) {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * A request behind the expected PSN: answered again, never executed again (vol. 1, 9.7.5.1.1; C9-105). A
     * duplicate SEND or WRITE packet that asks for an ACK (AckReq: a message's last packet, or every so many) gets
     * one for its own PSN, which is true (everything up to it was taken) and no more than the requester has sent
     * again; one that does not ask is dropped in silence, as a new packet would be (Intel's hfi1 does the same).
     * An ACK beyond the message a requester is resending, the newest PSN taken, is what rdma_rxe's completer
     * mishandles: it moves past that message without completing it, and later resends it as a zero-length SEND or
     * stops (docs/roce.md, "rxe under load").
     */
    private void duplicate(IbOpcode o, int p, boolean ackReq) {
        counters.inc(RcCounter.RESP_DUPLICATES);
        switch (o) {
            case RC_RDMA_READ_REQUEST -> {
                int i = findRecord(p, false);
                if (i < 0) {
                    counters.inc(RcCounter.RESP_DROP_NO_RECORD);
                    return;
                }
                // from the record, checked when it was made: the PSN says where in the READ the retry starts
                long at = (long) Psn.diff(p, recPsn[i]) * pmtu;
                long len = recLength[i] - at;
                if (len > 0 && !host.checkAccess(recRkey[i], recVa[i] + at, len, RcResponderHost.REMOTE_READ)) {
                    counters.inc(RcCounter.RESP_NAK_ACCESS);
                    return; // the region went away since: nothing to answer with
                }
                readResponses(p, recRkey[i], recVa[i] + at, Math.max(0, len));
            }
            case RC_CMP_SWAP, RC_FETCH_ADD -> {
                int i = findRecord(p, true);
                if (i < 0) {
                    counters.inc(RcCounter.RESP_DROP_NO_RECORD);
                    return;
                }
                counters.inc(RcCounter.RESP_ATOMIC_REPLAYS);
                atomicAck(p, recOriginal[i]);
            }
            default -> {
                if (ackReq) {
                    acknowledge(TransportHeader.AETH_ACK, p);
                }
            }
        }
    }

    /** No receive for a SEND (or WRITE with immediate): RNR NAK with the min RNR timer; the requester retries. */
    private void rnr(int p) {
        counters.inc(RcCounter.RESP_RNR_NAKS);
        nakSent = true; // the packets behind it are dropped in silence until it comes again
        acknowledge(TransportHeader.AETH_RNR_NAK | attr.minRnrTimer(), p);
    }

    private void invalidRequest(RcCounter cause, int p) {
        fatal(TransportHeader.AETH_NAK_INVALID_REQUEST, cause, RcStatus.REM_INV_REQ_ERR, p);
    }

    private void remoteAccess(int p) {
        fatal(TransportHeader.AETH_NAK_REMOTE_ACCESS, RcCounter.RESP_NAK_ACCESS, RcStatus.REM_ACCESS_ERR, p);
    }

    /** A NAK that fails the QP (class C/D errors of 9.9.3.1.2 as rdma_rxe treats them). */
    private void fatal(int syndrome, RcCounter cause, RcStatus status, int p) {
        if (cause != null) {
            counters.inc(cause);
        }
        acknowledge(syndrome, p);
        failed = true;
        haveReceive = false;
        in.kind = Inbound.NONE;
        host.failed(status);
    }

    /** An ACKNOWLEDGE (ACK or NAK) for PSN {@code p}. */
    private void acknowledge(int syndrome, int p) {
        TransportHeader h = header(p);
        h.opcode = IbOpcode.RC_ACKNOWLEDGE.code;
        h.syndrome = syndrome;
        h.msn = msn;
        payload.none();
        if (syndrome == TransportHeader.AETH_ACK) {
            counters.inc(RcCounter.RESP_ACKS);
            sinceAck = 0;
        }
        sink.transmit(h, payload);
    }

    private TransportHeader header(int p) {
        TransportHeader h = out;
        h.solicited = false;
        h.ackReq = false;
        h.destQp = destQp;
        h.psn = p;
        return h;
    }

    /** The PSN the next in-order request must carry. */
    public int expectedPsn() {
        return epsn;
    }

    /** The message sequence number: requests completed, mod 2^24. */
    public int msn() {
        return msn;
    }

    /** The QP failed after a fatal NAK; every packet is dropped. */
    public boolean failed() {
        return failed;
    }

    /** A receive is taken by a SEND (or WRITE with immediate) still in progress. */
    public boolean receiveInProgress() {
        return haveReceive;
    }
}
