package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/**
 * The SEND or RDMA WRITE message a connected responder (RC or UC) is taking, and the rules its packets share: which
 * opcode may come next (vol. 1, 9.8.3.1), which payload length each position allows, and where a WRITE's next bytes
 * go (its RETH's rkey and address, what is left of its length). What a broken rule costs is the transport's: a NAK
 * on RC, a dropped message on UC.
 */
final class Inbound {
    static final int NONE = 0, SEND = 1, WRITE = 2;

    /** The kind of the message in progress, or NONE between messages. */
    int kind = NONE;
    /** A SEND: bytes placed in its receive so far. */
    long receiveOffset;
    /** A WRITE: the rkey, the next address, the bytes left, and its whole length. */
    int rkey;
    long va, remaining, length;

    /**
     * The opcode of {@code r} when it is a request of {@code transport}; anything else a responder drops, counted
     * here as {@link RcCounter#RESP_DROP_NOT_REQUEST}, and gets null.
     */
    static IbOpcode request(TransportHeader r, int transport, Counters<RcCounter> counters) {
        IbOpcode o = IbOpcode.of(r.opcode);
        if (o != null && o.transport == transport && o.request) {
            return o;
        }
        counters.inc(RcCounter.RESP_DROP_NOT_REQUEST);
        return null;
    }

    /** No rkey 0 from the wire, no range that wraps past 2^64, then the host's check of the region. */
    static boolean accessible(RcResponderHost host, int rkey, long va, long length, int access) {
        return rkey != 0 && Long.compareUnsigned(va + length, va) > 0 && host.checkAccess(rkey, va, length, access);
    }

    /** A SEND opcode (with immediate, with invalidate), as opposed to an RDMA WRITE one. */
    static boolean isSend(IbOpcode o) {
        int op = o.operation;
        return op <= 0x05 || op == 0x16 || op == 0x17;
    }

    /** A payload length the opcode allows at path MTU {@code pmtu}: a FIRST or MIDDLE full, a LAST not empty. */
    static boolean lengthFits(IbOpcode o, int length, int pmtu) {
        return length >= 0 && length <= pmtu && (o.payload || length == 0)
                && (o.position != IbOpcode.Position.FIRST && o.position != IbOpcode.Position.MIDDLE || length == pmtu)
                && (o.position != IbOpcode.Position.LAST || length != 0);
    }

    /** A FIRST or ONLY between messages, a MIDDLE or LAST of the message in progress. */
    boolean inOrder(IbOpcode o) {
        return switch (kind) {
            case SEND -> isSend(o) && !o.first();
            case WRITE -> !isSend(o) && o.payload && !o.first();
            default -> o.first();
        };
    }

    /** Whether a SEND packet of {@code bytes} fits what is left of the receive it fills. */
    boolean receiveFits(RcResponderHost host, int bytes) {
        return receiveOffset + bytes <= host.receiveCapacity();
    }

    /** Places a SEND packet's {@code bytes} in the receive after the ones before; its LAST or ONLY ends the message. */
    void receive(RcResponderHost host, IbOpcode o, MemorySegment data, long offset, int bytes) {
        if (bytes > 0) {
            host.receive(receiveOffset, data, offset, bytes);
        }
        receiveOffset += bytes;
        kind = o.last() ? NONE : SEND;
    }

    /** A WRITE's FIRST or ONLY: where its bytes go, from its RETH. */
    void startWrite(TransportHeader r) {
        rkey = r.rkey;
        va = r.va;
        remaining = length = Integer.toUnsignedLong(r.dmaLength);
    }

    /** Whether a WRITE packet of {@code bytes} fits what is left (its LAST or ONLY must end the length exactly). */
    boolean writeFits(IbOpcode o, int bytes) {
        return bytes <= remaining && (!o.last() || bytes == remaining);
    }

    /** Writes a WRITE packet's {@code bytes} through {@code host} and moves past them; its LAST or ONLY ends it. */
    void write(RcResponderHost host, IbOpcode o, MemorySegment data, long offset, int bytes) {
        if (bytes > 0) {
            host.write(rkey, va, data, offset, bytes);
        }
        va += bytes;
        remaining -= bytes;
        kind = o.last() ? NONE : WRITE;
    }
}
