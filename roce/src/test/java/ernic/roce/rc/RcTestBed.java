package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.IbOpcode;
import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A requester and a responder with test stand-ins for the device: a send side with its messages as byte arrays,
 * a receive side with one memory region, a receive queue and completion lists. Each side's packets are captured
 * (headers copied, payload bytes gathered) in a list; the test decides what is delivered.
 */
final class RcTestBed {
    static final int REQUESTER_QP = 0x11, RESPONDER_QP = 0x22;
    static final long BASE_VA = 0x1_0000_0000L;
    /** A region with every remote access; another over the same bytes that may only be read. */
    static final int MR_RKEY = 0x1234, READ_ONLY_RKEY = 0x5678;

    /** One captured packet: a copy of its headers and its payload bytes. */
    record Packet(TransportHeader h, byte[] data) {
        IbOpcode op() {
            return IbOpcode.of(h.opcode);
        }

        @Override
        public String toString() {
            return op() + " psn=" + h.psn + " len=" + data.length + (h.ackReq ? " ackreq" : "")
                    + (op().has(IbOpcode.Header.AETH) ? " syn=0x" + Integer.toHexString(h.syndrome) : "");
        }
    }

    /** A completion on the send side. */
    record Completion(long wrId, RcStatus status) {
    }

    /** A completion on the receive side, with the bytes that arrived in its buffer. */
    record Received(RcStatus status, long length, boolean withImm, int imm, boolean withInv, int invRkey,
                    byte[] data, boolean solicited) {
    }

    static TransportHeader copy(TransportHeader h) {
        TransportHeader c = new TransportHeader();
        c.opcode = h.opcode;
        c.solicited = h.solicited;
        c.ackReq = h.ackReq;
        c.pkey = h.pkey;
        c.destQp = h.destQp;
        c.psn = h.psn;
        c.qkey = h.qkey;
        c.srcQp = h.srcQp;
        c.va = h.va;
        c.rkey = h.rkey;
        c.dmaLength = h.dmaLength;
        c.swapAdd = h.swapAdd;
        c.compare = h.compare;
        c.syndrome = h.syndrome;
        c.msn = h.msn;
        c.origData = h.origData;
        c.imm = h.imm;
        c.invRkey = h.invRkey;
        return c;
    }

    /** The send side's host: messages to gather from, READ buffers, atomic results, completions. */
    final class SendSide implements RcRequesterHost {
        final Map<Long, byte[]> messages = new HashMap<>();
        final Map<Long, byte[]> readBuffers = new HashMap<>();
        final Map<Long, Long> atomicResults = new HashMap<>();
        final List<Completion> completions = new ArrayList<>();

        @Override
        public void gather(long wrId, long offset, MemorySegment dst, long dstOffset, int length) {
            MemorySegment.copy(MemorySegment.ofArray(messages.get(wrId)), offset, dst, dstOffset, length);
        }

        @Override
        public void scatter(long wrId, long offset, MemorySegment src, long srcOffset, int length) {
            MemorySegment.copy(src, srcOffset, MemorySegment.ofArray(readBuffers.get(wrId)), offset, length);
        }

        @Override
        public void atomicResult(long wrId, long original) {
            if (atomicResults.put(wrId, original) != null) {
                throw new AssertionError("two results for atomic " + wrId);
            }
        }

        @Override
        public void completed(long wrId, RcStatus status) {
            completions.add(new Completion(wrId, status));
        }
    }

    /** The receive side's host: one memory region (two rkeys), a receive queue, completions. */
    final class ReceiveSide implements RcResponderHost {
        final byte[] memory;
        final ArrayDeque<Integer> postedReceives = new ArrayDeque<>();
        final List<Received> received = new ArrayList<>();
        final Set<Integer> invalidatable = new HashSet<>();
        final List<Integer> invalidated = new ArrayList<>();
        byte[] current;
        long bytesWritten;
        int atomicsExecuted;
        RcStatus failure;

        ReceiveSide(int size) {
            memory = new byte[size];
        }

        @Override
        public boolean checkAccess(int rkey, long va, long length, int access) {
            int granted = rkey == MR_RKEY ? REMOTE_READ | REMOTE_WRITE | REMOTE_ATOMIC
                    : rkey == READ_ONLY_RKEY ? REMOTE_READ : 0;
            long off = va - BASE_VA;
            return (access & granted) == access && va >= BASE_VA && length >= 0 && length <= memory.length
                    && off <= memory.length - length;
        }

        @Override
        public void write(int rkey, long va, MemorySegment src, long srcOffset, int length) {
            MemorySegment.copy(src, srcOffset, MemorySegment.ofArray(memory), va - BASE_VA, length);
            bytesWritten += length;
        }

        @Override
        public long atomic(int rkey, long va, boolean compareSwap, long swapAdd, long compare) {
            atomicsExecuted++;
            MemorySegment m = MemorySegment.ofArray(memory);
            long at = va - BASE_VA;
            long old = m.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
            if (compareSwap) {
                if (old == compare) {
                    m.set(ValueLayout.JAVA_LONG_UNALIGNED, at, swapAdd);
                }
            } else {
                m.set(ValueLayout.JAVA_LONG_UNALIGNED, at, old + swapAdd);
            }
            return old;
        }

        @Override
        public boolean takeReceive() {
            Integer capacity = postedReceives.poll();
            if (capacity == null) {
                return false;
            }
            current = new byte[capacity];
            return true;
        }

        @Override
        public long receiveCapacity() {
            return current.length;
        }

        @Override
        public void receive(long offset, MemorySegment src, long srcOffset, int length) {
            MemorySegment.copy(src, srcOffset, MemorySegment.ofArray(current), offset, length);
        }

        @Override
        public boolean invalidate(int rkey) {
            if (!invalidatable.remove(rkey)) {
                return false;
            }
            invalidated.add(rkey);
            return true;
        }

        @Override
        public void receiveCompleted(RcStatus status, long length, boolean withImm, int imm, boolean withInv,
                                     int invRkey, boolean solicited) {
            byte[] data = current == null ? new byte[0]
                    : Arrays.copyOf(current, (int) Math.min(current.length, length));
            received.add(new Received(status, length, withImm, imm, withInv, invRkey, data, solicited));
            current = null;
        }

        @Override
        public void failed(RcStatus cause) {
            if (failure != null) {
                throw new AssertionError("failed twice");
            }
            failure = cause;
        }

        long longAt(long va) {
            return MemorySegment.ofArray(memory).get(ValueLayout.JAVA_LONG_UNALIGNED, va - BASE_VA);
        }
    }

    final RcAttributes attr;
    final SendSide sendSide = new SendSide();
    final ReceiveSide receiveSide;
    /** Packets the requester sent, and the responder sent, in order. */
    final List<Packet> toResponder = new ArrayList<>(), toRequester = new ArrayList<>();
    final RcRequester requester;
    final RcResponder responder;
    /** What both engines count (requester and responder counters are distinct constants). */
    final Counters<RcCounter> counters = new Counters<>(RcCounter.class);
    long now;

    RcTestBed(RcAttributes attr, int initialPsn, int memorySize) {
        this.attr = attr;
        this.receiveSide = new ReceiveSide(memorySize);
        this.requester = new RcRequester(attr, RESPONDER_QP, initialPsn,
                (h, p) -> toResponder.add(new Packet(copy(h), bytes(p))), sendSide, counters);
        this.responder = new RcResponder(attr, REQUESTER_QP, initialPsn,
                (h, p) -> toRequester.add(new Packet(copy(h), bytes(p))), receiveSide, counters);
    }

    RcTestBed(RcAttributes attr) {
        this(attr, 0, 1 << 16);
    }

    long count(RcCounter c) {
        return counters.get(c);
    }

    /** The payload's bytes, as a device's sink would gather them. */
    private byte[] bytes(RcPayload p) {
        byte[] b = new byte[p.length];
        MemorySegment dst = MemorySegment.ofArray(b);
        switch (p.kind) {
            case MESSAGE -> sendSide.gather(p.wrId, p.offset, dst, 0, p.length);
            case MEMORY -> {
                if (!receiveSide.checkAccess(p.rkey, p.va, p.length, RcResponderHost.REMOTE_READ)) {
                    throw new AssertionError("READ response from memory not checked: " + p.va);
                }
                MemorySegment.copy(MemorySegment.ofArray(receiveSide.memory), p.va - BASE_VA, dst, 0, p.length);
            }
            case NONE -> {
            }
        }
        return b;
    }

    /** Posts a message whose bytes (for SENDs and WRITEs) are {@code data}; a READ gets a buffer of its length. */
    void post(long wrId, RcOp op, byte[] data, long va, int rkey, int immOrInv, long swapAdd, long compare) {
        post(wrId, op, 0, data, va, rkey, immOrInv, swapAdd, compare);
    }

    /** {@link #post} with {@link ConnectedRequester} flags (SOLICITED, FENCE). */
    void post(long wrId, RcOp op, int flags, byte[] data, long va, int rkey, int immOrInv, long swapAdd,
              long compare) {
        int length = data.length;
        sendSide.messages.put(wrId, data);
        if (op == RcOp.RDMA_READ) {
            sendSide.readBuffers.put(wrId, new byte[length]);
        }
        if (!requester.post(wrId, op, flags, length, va, rkey, immOrInv, swapAdd, compare)) {
            throw new AssertionError("send queue full");
        }
    }

    void postSend(long wrId, int length) {
        post(wrId, RcOp.SEND, pattern(wrId, length), 0, 0, 0, 0, 0);
    }

    /** One SEND of each length, in order, with wr ids 1, 2, 3 ... */
    void postSends(int... lengths) {
        for (int i = 0; i < lengths.length; i++) {
            postSend(i + 1, lengths[i]);
        }
    }

    void postWrite(long wrId, int length, long va) {
        post(wrId, RcOp.RDMA_WRITE, pattern(wrId, length), va, MR_RKEY, 0, 0, 0);
    }

    void postRead(long wrId, int length, long va) {
        post(wrId, RcOp.RDMA_READ, new byte[length], va, MR_RKEY, 0, 0, 0);
    }

    /** Bytes that differ from message to message and from offset to offset. */
    static byte[] pattern(long seed, int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed * 31 + i * 7 + (i >>> 8));
        }
        return b;
    }

    /** Transmits everything the requester may send now; returns the packets it sent. */
    List<Packet> poll() {
        int from = toResponder.size();
        requester.poll(now, Integer.MAX_VALUE);
        return new ArrayList<>(toResponder.subList(from, toResponder.size()));
    }

    /** Hands {@code p} to the responder; returns what it answered. */
    List<Packet> toResponder(Packet p) {
        int from = toRequester.size();
        responder.receive(p.h(), MemorySegment.ofArray(p.data()), 0, p.data().length, now);
        return new ArrayList<>(toRequester.subList(from, toRequester.size()));
    }

    void toRequester(Packet p) {
        requester.receive(p.h(), MemorySegment.ofArray(p.data()), 0, p.data().length, now);
    }

    /** Delivers every packet in {@code packets} to the responder and all its answers to the requester. */
    void exchange(List<Packet> packets) {
        for (Packet p : packets) {
            for (Packet a : toResponder(p)) {
                toRequester(a);
            }
        }
    }

    /** An ACKNOWLEDGE from the responder with {@code syndrome} for {@code psn}. */
    static Packet ack(int syndrome, int psn) {
        TransportHeader h = new TransportHeader();
        h.opcode = IbOpcode.RC_ACKNOWLEDGE.code;
        h.destQp = REQUESTER_QP;
        h.psn = psn;
        h.syndrome = syndrome;
        return new Packet(h, new byte[0]);
    }

    static Packet response(IbOpcode op, int psn, byte[] data) {
        TransportHeader h = new TransportHeader();
        h.opcode = op.code;
        h.destQp = REQUESTER_QP;
        h.psn = psn;
        h.syndrome = TransportHeader.AETH_ACK;
        return new Packet(h, data);
    }

    /** A request packet built by hand, as a hostile or broken peer could send it. */
    static Packet request(IbOpcode op, int psn, boolean ackReq, byte[] data) {
        TransportHeader h = new TransportHeader();
        h.opcode = op.code;
        h.destQp = RESPONDER_QP;
        h.psn = psn;
        h.ackReq = ackReq;
        return new Packet(h, data);
    }
}
