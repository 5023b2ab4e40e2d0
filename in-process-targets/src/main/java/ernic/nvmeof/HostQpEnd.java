package ernic.nvmeof;

import ernic.attach.ConnectedEnd;
import ernic.attach.GuestQps;
import ernic.attach.Payload;
import ernic.attach.WcStatus;
import ernic.counters.Counters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The end of a guest QP the target's CM connected: a SEND on it is a command capsule for its {@link HostQueue};
 * the target's response capsules go into the QP's next posted receive, as SENDs (or SEND_INV) from the
 * controller-side QP (0xc0xxxx). A response that finds no receive is held and goes at the QP's next RQ doorbell,
 * as a peer's retry would. Device thread only; the capsule buffer and the hold ring are made once, when the
 * connection is bound.
 */
final class HostQpEnd implements ConnectedEnd, HostConnection {
    /** The largest capsule the target accepts: the SQE and the in-capsule data it offers (IOCCSZ). */
    static final int MAX_CAPSULE = 64 + 8192;
    static final int CQE_SIZE = 16;

    final CmResponder.Connection connection;
    private final NvmeofAttachment attachment;
    private final GuestQps qps;
    private final Counters<PathCounter> path;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment capsule = arena.allocate(MAX_CAPSULE, 8);
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

    HostQpEnd(NvmeofAttachment attachment, GuestQps qps, CmResponder.Connection connection,
              Counters<PathCounter> path) {
        this.attachment = attachment;
        this.qps = qps;
        this.connection = connection;
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
        qps.unbind(connection.hostQpn, this);
        heldCount = 0;
        queue.close();
    }

    // ---------------------------------------------------------------------------------------------
    // ConnectedEnd: what the guest's QP sends

    @Override
    public WcStatus send(Payload p) {
        long len = p.length();
        if (len > MAX_CAPSULE) {
            return WcStatus.REMOTE_INVALID_REQUEST_ERROR; // longer than the receive buffer the target posted
        }
        if (len != sliceLength) {
            slice = capsule.asSlice(0, len);
            sliceLength = len;
        }
        if (!p.copyTo(slice)) {
            return WcStatus.LOCAL_PROTECTION_ERROR;
        }
        path.inc(PathCounter.CAPSULES);
        queue.capsule(slice);
        return WcStatus.SUCCESS;
    }

    // ---------------------------------------------------------------------------------------------
    // HostConnection: what the target sends back

    @Override
    public void respond(MemorySegment cqe, boolean invalidate, int rkey) {
        if (!bound || !qps.receiving(connection.hostQpn)) {
            path.inc(PathCounter.DROPPED);
            return;
        }
        if (heldCount == 0 && deliver(cqe, 0, invalidate, rkey)) {
            return;
        }
        if (heldCount == heldInvalidate.length) {
            path.inc(PathCounter.DROPPED);
            return;
        }
        int at = (heldHead + heldCount) % heldInvalidate.length;
        MemorySegment.copy(cqe, 0, held, (long) at * CQE_SIZE, CQE_SIZE);
        heldInvalidate[at] = invalidate;
        heldRkey[at] = rkey;
        heldCount++;
        path.inc(PathCounter.RESPONSES_HELD);
    }

    @Override
    public void disconnect() {
        if (bound) {
            attachment.disconnect(this);
        }
    }

    /** The QP's RQ doorbell: held responses go into the new receives, oldest first. */
    void receivesPosted() {
        while (heldCount > 0 && bound && qps.receiving(connection.hostQpn)) {
            if (!deliver(held, (long) heldHead * CQE_SIZE, heldInvalidate[heldHead], heldRkey[heldHead])) {
                return;
            }
            heldHead = (heldHead + 1) % heldInvalidate.length;
            heldCount--;
        }
    }

    /** One response capsule into the QP's next receive; false when none is posted (receiver not ready). */
    private boolean deliver(MemorySegment from, long offset, boolean invalidate, int rkey) {
        GuestQps.Delivery d = qps.send(connection.hostQpn, connection.targetQpn, from, offset, CQE_SIZE, invalidate,
                rkey);
        if (d == GuestQps.Delivery.NO_RECEIVE) {
            return false;
        }
        path.inc(PathCounter.RESPONSES);
        return true; // FAILED: the receive failed and the QP is in ERROR now, as on a wire
    }
}
