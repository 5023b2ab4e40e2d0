package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.mesh.SendResult;
import io.netty.buffer.ByteBuf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static ernic.common.Endian.LE;

/**
 * The responder side of the mesh: a request from a peer's guest is checked against the destination QP (it
 * must exist, be connected to the requester's QP from that node and be ready to receive), applied by the
 * same {@link Responder} a local requester uses, and answered with a reply that echoes its requester
 * fields. A SEND (or WRITE_IMM) that finds no receive posted waits, with the requests behind it for the
 * same QP, for up to 5 s, then fails with RNR-retry-exceeded; when waiting requests pass 64 MiB or 4096
 * messages the node stops reading from its peers, and after half a second of that they fail at once.
 */
final class RemoteResponder {
    static final long FULL_RNR_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long HELD_BYTES_MAX = 64L << 20;
    static final int HELD_MESSAGES_MAX = 4096;

    /** A request waiting on its QP for a receive. */
    record Held(int node, ByteBuf message, long sinceNanos) {
    }

    private final RemotePath path;
    private final RdmaLif lif;
    private final Responder responder;
    private final PeerPort port;
    private final LongSupplier clock;
    private final MemorySegment old = Arena.ofAuto().allocate(8, 8);
    private final Spans source = new Spans();
    /** Reading from the peers is paused (the held requests passed a limit), and since when. */
    private boolean paused;
    private long pausedSinceNanos;
    private final Counters<RemoteCounter> counters;
    /** Bytes of requests waiting for a receive (a gauge: rdma.remote.heldBytes). */
    long heldBytes;
    private int heldMessages;

    RemoteResponder(RemotePath path, RdmaLif lif, Responder responder, Counters<RemoteCounter> counters,
                    PeerPort port, LongSupplier clock) {
        this.path = path;
        this.counters = counters;
        this.lif = lif;
        this.responder = responder;
        this.port = port;
        this.clock = clock;
    }

    void reset() {
        for (QueuePair qp : lif.queuePairs) {
            if (qp != null) {
                releaseHeld(qp);
            }
        }
        resume();
    }

    /** A request from {@code node}; the caller releases {@code m}. */
    void onRequest(int node, ByteBuf m) {
        int op = WireHeader.op(m);
        if (op == WireHeader.UD_SEND) {
            datagram(m);
            return;
        }
        if (WireHeader.piece(m) && op != WireHeader.WRITE) {
            path.bad(node, "a piece of a request opcode " + op + " (only a WRITE comes in pieces)");
            return;
        }
        int dst = WireHeader.u32(m, WireHeader.DST_QP);
        QueuePair qp = lif.queuePairs.get(dst);
        if (qp == null || !qp.connected() || qp.destQpn != WireHeader.u32(m, WireHeader.SRC_QP)
                || qp.node != node || !(qp.state == V1.QPS_RTR || qp.state == V1.QPS_RTS || qp.state == V1.QPS_SQD)) {
            // No QP here takes it: a NIC drops such a packet and the requester's retries run out. A piece is
            // dropped unanswered: the WRITE's last piece answers for it.
            if (!WireHeader.piece(m)) {
                reply(node, m, WireHeader.ACK, V1.STS_RETRY_EXCEEDED, null, 0, 0);
            }
            return;
        }
        if (holds(qp) || apply(qp, node, m) == Responder.RNR) {
            hold(qp, node, m);
        }
    }

    /** Applies a request to this guest and answers it; {@link Responder#RNR} when no receive is posted. */
    private int apply(QueuePair qp, int node, ByteBuf m) {
        int op = WireHeader.op(m);
        int len = WireHeader.payloadLength(m);
        boolean solicited = (WireHeader.flags(m) & WireHeader.FLAG_SOLICITED) != 0;
        switch (op) {
            case WireHeader.SEND, WireHeader.SEND_IMM, WireHeader.SEND_INV -> {
                int st = responder.send(qp, qp.destQpn, WqeOpcode.ofMesh(op).code, WireHeader.u32(m, WireHeader.IMM), path.payload(m, len),
                        solicited);
                if (st == Responder.RNR) {
                    return st;
                }
                reply(node, m, WireHeader.ACK, st, null, 0, 0);
            }
            case WireHeader.WRITE, WireHeader.WRITE_IMM -> {
                int st = responder.write(qp, qp.destQpn, WqeOpcode.ofMesh(op).immediate, WireHeader.u32(m, WireHeader.IMM),
                        WireHeader.u32(m, WireHeader.RKEY), WireHeader.u64(m, WireHeader.VA), path.payload(m, len),
                        solicited);
                if (st == Responder.RNR) {
                    return st;
                }
                if (st != V1.STS_OK || !WireHeader.piece(m)) {
                    reply(node, m, WireHeader.ACK, st, null, 0, 0); // a failed piece answers for its WRITE
                }
            }
            case WireHeader.READ -> {
                long want = WireHeader.u64(m, WireHeader.LENGTH);
                if (want < 0 || want > WireHeader.MAX_PAYLOAD || len != 0) {
                    reply(node, m, WireHeader.READ_RESP, V1.STS_REMOTE_INV_REQ_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                int st = responder.read(qp, WireHeader.u32(m, WireHeader.RKEY), WireHeader.u64(m, WireHeader.VA), want,
                        source.clear());
                reply(node, m, WireHeader.READ_RESP, st, st == V1.STS_OK ? source : null, st == V1.STS_OK ? (int) want : 0, 0);
            }
            case WireHeader.ATOMIC_CS, WireHeader.ATOMIC_FA -> {
                int st = responder.atomic(qp, op == WireHeader.ATOMIC_CS, WireHeader.u32(m, WireHeader.RKEY),
                        WireHeader.u64(m, WireHeader.VA), WireHeader.u64(m, WireHeader.COMPARE),
                        WireHeader.u64(m, WireHeader.SWAP_ADD), old);
                reply(node, m, WireHeader.ATOMIC_RESP, st, null, 0, st == V1.STS_OK ? LE.u64(old, 0) : 0);
            }
            default -> path.bad(node, "request opcode " + op);
        }
        return V1.STS_OK;
    }

    /** Answers {@code request}: its requester fields echoed, a status, and for a READ the data. */
    private void reply(int node, ByteBuf request, int op, int status, Spans data, int len, long was) {
        ByteBuf r = port.message(WireHeader.SIZE + len);
        WireHeader.start(r, op, 0, WireHeader.u32(request, WireHeader.SRC_QP), WireHeader.u32(request,
                WireHeader.DST_QP), WireHeader.u32(request, WireHeader.GENERATION), WireHeader.u32(request,
                WireHeader.SLOT), WireHeader.u64(request, WireHeader.SEQ));
        WireHeader.putStatus(r, status);
        WireHeader.put64(r, WireHeader.LENGTH, op == WireHeader.READ_RESP ? WireHeader.u64(request, WireHeader.LENGTH)
                : len);
        WireHeader.put64(r, WireHeader.SWAP_ADD, was);
        if (data != null && !path.fill(r, data, len)) {
            WireHeader.putStatus(r, V1.STS_REMOTE_ACC_ERR); // fill() left the payload empty
        }
        if (port.sendReply(node, r) == SendResult.QUEUED) {
            counters.inc(RemoteCounter.REPLIES_SENT);
        } else {
            r.release();
            counters.inc(RemoteCounter.REPLIES_DROPPED); // the requester's WQE times out
        }
    }

    /** A datagram from a peer: delivered like a local one, or dropped. */
    private void datagram(ByteBuf m) {
        int len = WireHeader.payloadLength(m);
        int f = WireHeader.flags(m);
        int flags = WireHeader.u32(m, WireHeader.SRC_QP) & 0xff_ffff;
        int vlan = 0;
        if ((f & WireHeader.FLAG_IPV4) != 0) {
            flags |= V1.Cqe.RECV_IS_IPV4;
        }
        if ((f & WireHeader.FLAG_VLAN) != 0) {
            flags |= V1.Cqe.RECV_IS_VLAN;
            vlan = WireHeader.u32(m, WireHeader.VLAN) & 0xffff;
        }
        WqeOpcode sent = WqeOpcode.of(WireHeader.u32(m, WireHeader.COMPARE)); // the sender's
        boolean imm = sent != null && sent.immediate;
        responder.datagram(WireHeader.u32(m, WireHeader.DST_QP) & 0xff_ffff, WireHeader.u32(m, WireHeader.QKEY),
                flags, imm, WireHeader.u32(m, WireHeader.IMM), path.payload(m, len), WireHeader.u64(m, WireHeader.SMAC),
                vlan, (f & WireHeader.FLAG_SOLICITED) != 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Receiver not ready

    boolean holds(QueuePair qp) {
        return qp.held != null && !qp.held.isEmpty();
    }

    /**
     * Keeps a copy of {@code m} (the caller releases {@code m}): a received message is a slice of the
     * connection's receive buffer, which it would otherwise keep whole for as long as it waits.
     */
    private void hold(QueuePair qp, int node, ByteBuf m) {
        if (qp.held == null) {
            qp.held = new ArrayDeque<>();
        }
        if (qp.held.isEmpty()) {
            counters.inc(RemoteCounter.RNR_WAITS);
        }
        m = port.message(m.readableBytes()).writeBytes(m, m.readerIndex(), m.readableBytes());
        long now = clock.getAsLong();
        qp.held.add(new Held(node, m, now));
        heldBytes += m.readableBytes();
        heldMessages++;
        path.watch(qp);
        if ((heldBytes > HELD_BYTES_MAX || heldMessages > HELD_MESSAGES_MAX) && !paused) {
            // A flag, not pausedSinceNanos == 0: the clock may read 0 (a mock clock does), and the pause still starts.
            paused = true;
            pausedSinceNanos = now;
            counters.inc(RemoteCounter.READ_PAUSES);
            port.setReceivingFromAll(false);
        }
    }

    /** Receives were posted on {@code qp}: the requests waiting for them go on, in order. */
    void receivesPosted(QueuePair qp) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            Held h = held.poll(); // out of the queue while it runs: a receive that fails flushes the rest
            if (apply(qp, h.node(), h.message()) == Responder.RNR) {
                held.addFirst(h);
                break;
            }
            unhold(h);
        }
        resumeIfRoom();
    }

    private void unhold(Held h) {
        heldBytes -= h.message().readableBytes();
        heldMessages--;
        h.message().release();
    }

    /** Every request waiting on {@code qp} fails with {@code status}. */
    void failHeld(QueuePair qp, int status) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            Held h = held.poll();
            if (!WireHeader.piece(h.message())) { // a piece goes unanswered: its WRITE's last piece answers for it
                if (status == V1.STS_RNR_RETRY_EXCEEDED) {
                    counters.inc(RemoteCounter.RNR_FAILURES);
                }
                reply(h.node(), h.message(), WireHeader.ACK, status, null, 0, 0);
            }
            unhold(h);
        }
        resumeIfRoom();
    }

    void releaseHeld(QueuePair qp) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            unhold(held.poll());
        }
        resumeIfRoom();
    }

    private void resumeIfRoom() {
        if (paused && heldBytes <= HELD_BYTES_MAX && heldMessages <= HELD_MESSAGES_MAX) {
            resume();
        }
    }

    void resume() {
        if (paused) {
            paused = false;
            port.setReceivingFromAll(true);
        }
    }

    /** Whether reading has been paused for long enough that waiting requests fail at once. */
    boolean tick(long now) {
        return paused && now - pausedSinceNanos >= FULL_RNR_TIMEOUT_NANOS;
    }

    /** Receiver not ready: 5 s for the oldest waiting request of {@code qp}, none at all when {@code full}. */
    void expire(QueuePair qp, long now, boolean full) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty() && (full || now - held.peek().sinceNanos() >= Requester.RNR_TIMEOUT_NANOS)) {
            Held h = held.poll();
            counters.inc(RemoteCounter.RNR_FAILURES);
            reply(h.node(), h.message(), WireHeader.ACK, V1.STS_RNR_RETRY_EXCEEDED, null, 0, 0);
            unhold(h);
            receivesPosted(qp); // what was behind it may go now
        }
    }
}
