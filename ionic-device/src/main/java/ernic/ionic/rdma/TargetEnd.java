package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.ionic.target.nvmeof.CmResponder;
import ernic.ionic.target.nvmeof.HostQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The end of a guest QP the NVMe-oF target's CM connected: a SEND on it is a command capsule for its
 * {@link HostQueue}; the target's response capsules go into the QP's next posted receive, as SENDs (or
 * SEND_INV) from the controller-side QP (0xc0xxxx). A response that finds no receive is held and goes at the
 * QP's next RQ doorbell, as a peer's retry would. The target moves data only through HostMemory. Device
 * thread only; the capsule buffer and the hold ring are made once, when the connection is bound.
 */
final class TargetEnd implements End, ernic.ionic.target.nvmeof.Responder {
    /** The largest capsule the target accepts: the SQE and the in-capsule data it offers (IOCCSZ). */
    static final int MAX_CAPSULE = 64 + 8192;
    static final int CQE_SIZE = 16;

    final QueuePair qp;
    final CmResponder.Connection connection;
    private final NvmeofAttachment attachment;
    private final KeyedMemory memory;
    private final Responder responder;
    private final Counters<PathCounter> path;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment capsule = arena.allocate(MAX_CAPSULE, 8);
    private final Spans into = new Spans(), response = new Spans();
    /** The capsule buffer cut to the last capsule's length: capsules mostly repeat a few sizes. */
    private MemorySegment slice;
    private long sliceLength = -1;
    /** Responses waiting for a receive, oldest first: a ring of CQEs with their invalidation. */
    private final MemorySegment held;
    private final boolean[] heldInvalidate;
    private final int[] heldRkey;
    private int heldHead, heldCount;
    private HostQueue queue;
    private boolean bound = true;

    TargetEnd(NvmeofAttachment attachment, QueuePair qp, CmResponder.Connection connection, KeyedMemory memory,
              Responder responder, Counters<PathCounter> path) {
        this.attachment = attachment;
        this.qp = qp;
        this.connection = connection;
        this.memory = memory;
        this.responder = responder;
        this.path = path;
        // Responses outstanding never exceed the commands the host may have in flight (its SQ size), plus
        // the overflow answers of a host that sends more: twice that bounds a well-behaved host with room.
        int slots = 2 * (connection.hsqsize + 1);
        this.held = arena.allocate((long) slots * CQE_SIZE, 8);
        this.heldInvalidate = new boolean[slots];
        this.heldRkey = new int[slots];
    }

    void open(HostQueue queue) {
        this.queue = queue;
    }

    /** The connection ended (DREQ/DREP, REJ, the QP destroyed, a reset): the QP goes back to its own path. */
    void unbind() {
        if (!bound) {
            return;
        }
        bound = false;
        if (qp.end == this) {
            qp.end = null;
        }
        heldCount = 0;
        queue.close();
    }

    // ---------------------------------------------------------------------------------------------
    // End: what the guest's QP sends

    @Override
    public int send(Request r) {
        long len = r.payload.total;
        if (len > MAX_CAPSULE) {
            return V1.STS_REMOTE_INV_REQ_ERR; // longer than the receive buffer the target posted
        }
        into.clear().addLocal(capsule, 0, len);
        if (!memory.copy(r.payload, into, len)) {
            return V1.STS_LOCAL_PROT_ERR;
        }
        r.moved = len;
        path.inc(PathCounter.TARGET_CAPSULES);
        if (len != sliceLength) {
            slice = capsule.asSlice(0, len);
            sliceLength = len;
        }
        queue.capsule(slice);
        return V1.STS_OK;
    }

    /** The target posts no buffers for the host's RDMA operations: a remote access error, as a real one answers. */
    @Override
    public int write(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int read(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int atomic(Request r) {
        return V1.STS_REMOTE_ACC_ERR;
    }

    @Override
    public int datagram(Request r) {
        return V1.STS_LOCAL_QP_OPER_ERR; // an RC QP sends no datagrams
    }

    // ---------------------------------------------------------------------------------------------
    // Responder: what the target sends back

    @Override
    public void respond(MemorySegment cqe, boolean invalidate, int rkey) {
        if (!bound || !receiving()) {
            path.inc(PathCounter.TARGET_DROPPED);
            return;
        }
        if (heldCount == 0 && deliver(cqe, 0, invalidate, rkey)) {
            return;
        }
        if (heldCount == heldInvalidate.length) {
            path.inc(PathCounter.TARGET_DROPPED);
            return;
        }
        int at = (heldHead + heldCount) % heldInvalidate.length;
        MemorySegment.copy(cqe, 0, held, (long) at * CQE_SIZE, CQE_SIZE);
        heldInvalidate[at] = invalidate;
        heldRkey[at] = rkey;
        heldCount++;
        path.inc(PathCounter.TARGET_RESPONSES_HELD);
    }

    @Override
    public void disconnect() {
        if (bound) {
            attachment.disconnect(this);
        }
    }

    /** The QP's RQ doorbell: held responses go into the new receives, oldest first. */
    void receivesPosted() {
        while (heldCount > 0 && bound && receiving()) {
            if (!deliver(held, (long) heldHead * CQE_SIZE, heldInvalidate[heldHead], heldRkey[heldHead])) {
                return;
            }
            heldHead = (heldHead + 1) % heldInvalidate.length;
            heldCount--;
        }
    }

    /** The guest's QP takes receives (RTR or later, not in ERROR). */
    private boolean receiving() {
        return qp.state == V1.QPS_RTR || qp.state == V1.QPS_RTS || qp.state == V1.QPS_SQD;
    }

    /** One response capsule into the QP's next receive; false when none is posted (receiver not ready). */
    private boolean deliver(MemorySegment from, long offset, boolean invalidate, int rkey) {
        response.clear().addLocal(from, offset, CQE_SIZE);
        int st = responder.send(qp, connection.targetQpn, invalidate ? V1.Wqe.OP_SEND_INV : V1.Wqe.OP_SEND,
                invalidate ? rkey : 0, response, false);
        if (st == Responder.RNR) {
            return false;
        }
        path.inc(PathCounter.TARGET_RESPONSES);
        return true; // another status: the receive failed and the QP is in ERROR now, as on a wire
    }
}
