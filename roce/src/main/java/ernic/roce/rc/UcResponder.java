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
    private static final int NONE = 0, IN_SEND = 1, IN_WRITE = 2;

    private final int pmtu;
    private final RcResponderHost host;
    private final Counters<RcCounter> counters;

    /** The PSN the next packet of the message in progress must carry. */
    private int epsn;
    /** The message in progress lost a packet: drop until the next FIRST or ONLY. */
    private boolean dropping;
    private int inMessage = NONE;
    /** A receive was taken and not completed (kept across a dropped message). */
    private boolean haveReceive;
    private long receiveOffset;
    private int writeRkey;
    private long writeVa, writeRemaining, writeLength;

    /** @param initialPsn the first expected PSN (rq_psn) */
    public UcResponder(RcAttributes attr, int initialPsn, RcResponderHost host, Counters<RcCounter> counters) {
        this.pmtu = attr.pathMtu();
        this.host = host;
        this.counters = counters;
        this.epsn = initialPsn & Psn.MASK;
    }

    @Override
    public void receive(TransportHeader r, MemorySegment data, long offset, int length, long now) {
        IbOpcode o = IbOpcode.of(r.opcode);
        if (o == null || o.transport != IbOpcode.UC || !o.request) {
            counters.inc(RcCounter.RESP_DROP_NOT_REQUEST);
            return;
        }
        int p = r.psn & Psn.MASK;
        if (dropping || p != epsn) {
            if (!o.first()) {
                counters.inc(RcCounter.UC_DROP_OUT_OF_SEQUENCE);
                drop();
                return;
            }
            dropping = false;
        }
        if (o.first() && inMessage != NONE) {
            drop(); // its LAST never came: the new message starts here
            dropping = false;
        }
        if (!o.first() && inMessage != (isSend(o) ? IN_SEND : IN_WRITE)) {
            counters.inc(RcCounter.UC_DROP_OPCODE_SEQUENCE);
            drop();
            return;
        }
        if (length < 0 || length > pmtu || !o.payload && length != 0
                || (o.position == IbOpcode.Position.FIRST || o.position == IbOpcode.Position.MIDDLE) && length != pmtu
                || o.position == IbOpcode.Position.LAST && length == 0) {
            counters.inc(RcCounter.UC_DROP_BAD_LENGTH);
            drop();
            return;
        }
        if (isSend(o) ? send(o, r, data, offset, length) : write(o, r, data, offset, length)) {
            counters.inc(RcCounter.RESP_PACKETS);
            epsn = Psn.add(p, 1);
        }
    }

    private static boolean isSend(IbOpcode o) {
        return o.operation <= 0x05;
    }

    /** A SEND packet; false when its message was dropped. */
    private boolean send(IbOpcode o, TransportHeader r, MemorySegment data, long offset, int length) {
        if (o.first()) {
            if (!haveReceive && !host.takeReceive()) {
                counters.inc(RcCounter.UC_DROP_NO_RECEIVE);
                drop();
                return false;
            }
            haveReceive = true;
            receiveOffset = 0;
        }
        if (receiveOffset + length > host.receiveCapacity()) {
            counters.inc(RcCounter.UC_DROP_RECEIVE_TOO_SHORT);
            drop();
            return false;
        }
        if (length > 0) {
            host.receive(receiveOffset, data, offset, length);
        }
        receiveOffset += length;
        if (!o.last()) {
            inMessage = IN_SEND;
            return true;
        }
        inMessage = NONE;
        haveReceive = false;
        host.receiveCompleted(RcStatus.SUCCESS, receiveOffset, o.immediate(), r.imm, false, 0);
        return true;
    }

    /** An RDMA WRITE packet; false when its message was dropped. */
    private boolean write(IbOpcode o, TransportHeader r, MemorySegment data, long offset, int length) {
        int rkey = writeRkey;
        long va = writeVa, remaining = writeRemaining, total = writeLength;
        if (o.first()) {
            total = remaining = Integer.toUnsignedLong(r.dmaLength);
            rkey = r.rkey;
            va = r.va;
            if (total > Integer.MAX_VALUE) {
                counters.inc(RcCounter.UC_DROP_BAD_LENGTH);
                drop();
                return false;
            }
            if (total > 0 && (rkey == 0 || Long.compareUnsigned(va + total, va) <= 0
                    || !host.checkAccess(rkey, va, total, RcResponderHost.REMOTE_WRITE))) {
                counters.inc(RcCounter.UC_DROP_ACCESS);
                drop();
                return false;
            }
        }
        if (length > remaining || o.last() && length != remaining) {
            counters.inc(RcCounter.UC_DROP_BAD_LENGTH);
            drop();
            return false;
        }
        if (o.immediate() && !haveReceive && !host.takeReceive()) {
            counters.inc(RcCounter.UC_DROP_NO_RECEIVE);
            drop();
            return false;
        }
        if (length > 0) {
            host.write(rkey, va, data, offset, length);
        }
        writeRkey = rkey;
        writeVa = va + length;
        writeRemaining = remaining - length;
        writeLength = total;
        if (!o.last()) {
            inMessage = IN_WRITE;
            return true;
        }
        inMessage = NONE;
        if (o.immediate()) {
            haveReceive = false;
            host.receiveCompleted(RcStatus.SUCCESS, total, true, r.imm, false, 0);
        }
        return true;
    }

    /** The message of this packet is given up; packets are dropped until the next FIRST or ONLY. */
    private void drop() {
        if (inMessage != NONE || !dropping) {
            counters.inc(RcCounter.UC_MESSAGES_DROPPED); // once per message, not per packet dropped after it
        }
        inMessage = NONE;
        receiveOffset = 0;
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
