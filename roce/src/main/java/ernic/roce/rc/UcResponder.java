package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of one UC QP (IBTA vol. 1, 9.8; rdma_rxe's responder for UC): SENDs into the posted receive,
 * RDMA WRITEs into memory by rkey, nothing acknowledged. A message is taken whole or not at all: after a PSN gap
 * the rest of the message in progress is dropped, and taking resumes at the next FIRST or ONLY, whatever its PSN.
 * A FIRST or ONLY in the middle of a message (its LAST was lost) starts a new message. A message that cannot be
 * taken (no receive posted, a SEND longer than its receive, a bad length, a WRITE its rkey does not allow) is
 * dropped in silence and counted; the QP goes on. A receive a dropped SEND had begun to fill is kept for the next
 * message, as rdma_rxe does (its completion is never written).
 *
 * <p>Single-threaded; nothing is allocated after construction.
 */
public final class UcResponder implements ConnectedResponder {
    private final int pmtu;
    private final RcResponderHost host;
    private final Counters<RcCounter> counters;

    /** The PSN the next packet of the message in progress must carry. */
    private int epsn;
    /** The message in progress lost a packet: drop until the next FIRST or ONLY. */
    private boolean dropping;
    /** The message in progress. */
    private final Inbound in = new Inbound();
    /** A receive was taken and not completed (kept across a dropped message). */
    private boolean haveReceive;

    /** @param initialPsn the first expected PSN (rq_psn) */
    public UcResponder(RcAttributes attr, int initialPsn, RcResponderHost host, Counters<RcCounter> counters) {
        this.pmtu = attr.pathMtu();
        this.host = host;
        this.counters = counters;
        this.epsn = initialPsn & Psn.MASK;
    }

    @Override
    public void receive(TransportHeader r, MemorySegment data, long offset, int length, long now) {
        IbOpcode o = Inbound.request(r, IbOpcode.UC, counters);
        if (o == null) {
            return;
        }
        int p = r.psn & Psn.MASK;
        if (taken(o, r, p, data, offset, length)) {
            counters.inc(RcCounter.RESP_PACKETS);
            epsn = Psn.add(p, 1);
        }
    }

    /** A UC request packet at PSN {@code p}: taken into its message, or dropped with it (false). */
    private boolean taken(IbOpcode o, TransportHeader r, int p, MemorySegment data, long offset, int length) {
        if (dropping || p != epsn) {
            if (!o.first()) {
                return dropped(RcCounter.UC_DROP_OUT_OF_SEQUENCE);
            }
            dropping = false;
        }
        if (o.first() && in.kind != Inbound.NONE) {
            drop(); // its LAST never came: the new message starts here
            dropping = false;
        }
        if (!in.inOrder(o)) {
            return dropped(RcCounter.UC_DROP_OPCODE_SEQUENCE);
        }
        if (!Inbound.lengthFits(o, length, pmtu)) {
            return dropped(RcCounter.UC_DROP_BAD_LENGTH);
        }
        return Inbound.isSend(o) ? send(o, r, data, offset, length) : write(o, r, data, offset, length);
    }

    /** A SEND packet; false when its message was dropped. */
    private boolean send(IbOpcode o, TransportHeader r, MemorySegment data, long offset, int length) {
        if (o.first()) {
            if (!haveReceive && !host.takeReceive()) {
                return dropped(RcCounter.UC_DROP_NO_RECEIVE);
            }
            haveReceive = true;
            in.receiveOffset = 0;
        }
        if (!in.receiveFits(host, length)) {
            return dropped(RcCounter.UC_DROP_RECEIVE_TOO_SHORT);
        }
        in.receive(host, o, data, offset, length);
        if (!o.last()) {
            return true;
        }
        haveReceive = false;
        host.receiveCompleted(RcStatus.SUCCESS, in.receiveOffset, o.immediate(), r.imm, false, 0, r.solicited);
        return true;
    }

    /** An RDMA WRITE packet; false when its message was dropped. */
    private boolean write(IbOpcode o, TransportHeader r, MemorySegment data, long offset, int length) {
        if (o.first()) {
            in.startWrite(r);
            if (in.length > Integer.MAX_VALUE) {
                return dropped(RcCounter.UC_DROP_BAD_LENGTH);
            }
            if (in.length > 0 && !Inbound.accessible(host, in.rkey, in.va, in.length, RcResponderHost.REMOTE_WRITE)) {
                return dropped(RcCounter.UC_DROP_ACCESS);
            }
        }
        if (!in.writeFits(o, length)) {
            return dropped(RcCounter.UC_DROP_BAD_LENGTH);
        }
        if (o.immediate() && !haveReceive && !host.takeReceive()) {
            return dropped(RcCounter.UC_DROP_NO_RECEIVE);
        }
        in.write(host, o, data, offset, length);
        if (!o.last()) {
            return true;
        }
        if (o.immediate()) {
            haveReceive = false;
            host.receiveCompleted(RcStatus.SUCCESS, in.length, true, r.imm, false, 0, r.solicited);
        }
        return true;
    }

    /** Drops the message of this packet for {@code cause}: false, the packet was not taken. */
    private boolean dropped(RcCounter cause) {
        counters.inc(cause);
        drop();
        return false;
    }

    /** The message of this packet is given up; packets are dropped until the next FIRST or ONLY. */
    private void drop() {
        if (in.kind != Inbound.NONE || !dropping) {
            counters.inc(RcCounter.UC_MESSAGES_DROPPED); // once per message, not per packet dropped after it
        }
        in.kind = Inbound.NONE;
        dropping = true;
    }

    /** The PSN the next packet of a message in progress must carry. */
    public int expectedPsn() {
        return epsn;
    }

    /** A receive is held for the next SEND (taken by one that was dropped, or in progress). */
    public boolean receiveHeld() {
        return haveReceive;
    }
}
