package ernic.ionic.rdma;

import ernic.mesh.Gid;
import ernic.mesh.MeshListener;
import ernic.mesh.MeshNode;
import ernic.mesh.Recall;
import ernic.mesh.SendResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The data path across the mesh: a QP whose peer is another server's guest. Runs on the device thread,
 * which is also the mesh node's event loop, so a message from a peer is applied to guest memory as it is
 * read and nothing is locked.
 *
 * <p>Requester: a WQE's payload is gathered out of guest memory into a message ({@link WireHeader}) and
 * handed to the mesh; the WQE then waits in the QP's {@link Outstanding} slots until the peer answers, and
 * completions are posted in SQ order. A connection above its watermark answers BUSY and the SQ stops there,
 * as a NIC out of transmit credits holds its queue, until the mesh says it is writable again; so does a READ
 * that would have more than 32 MiB of replies outstanding to one node. A WQE no connection can carry
 * completes with retry-exceeded at once; one whose answer never comes, after 30 s. Datagrams complete when
 * they are handed to the mesh. When a QP is flushed or its requests time out, those still queued on their
 * connection are taken back, so none reaches the peer after its WQE has completed; one being written
 * arrives (its reply is stale). A destroyed QP's requests still go out.
 *
 * <p>Responder: a request is checked against the destination QP (it must exist, be connected to the
 * requester's QP and be ready to receive), rkeys are resolved in this server's MR table, and the answer
 * goes back as a reply. A SEND (or WRITE_IMM) that finds no receive posted waits, with the requests behind it
 * for the same QP, for up to 5 s, then fails with RNR-retry-exceeded; when waiting requests pass 64 MiB or
 * 4096 messages the node stops reading from its peers, and after half a second of that they fail at once.
 */
final class RemotePath implements MeshListener {
    private static final Logger log = LoggerFactory.getLogger(RemotePath.class);

    static final long REPLY_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final long RNR_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    static final long FULL_RNR_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long HELD_BYTES_MAX = 64L << 20;
    static final int HELD_MESSAGES_MAX = 4096;
    static final long READ_REPLIES_MAX = 32L << 20;
    static final long TICK_MILLIS = 100;
    /** An SQ slot whose answer has not come yet. */
    static final int PENDING = Integer.MIN_VALUE;
    /** What issue() answers when the SQ must stop and try this WQE again later. */
    static final int BLOCKED = -2;

    /** The remote work of one SQ, by slot: opcode, status (PENDING until answered), sequence number, bytes. */
    static final class Outstanding {
        final int[] op, status;
        final long[] seq, bytes, sinceNanos;
        /** READ data a slot's request asked of its node's 32 MiB budget (0 when none). */
        final long[] readAsked;
        /** The next SQ slot to complete; the WQEs from here to the SQ's consumer index were issued. */
        int done;
        long nextSeq = 1;
        /**
         * Requests numbered below this were given up (flushed or timed out). A flush or a time-out gives up
         * every request issued so far, and later ones are numbered higher, so this one number tells which
         * queued requests to take back.
         */
        long givenUpBelow = 1;

        Outstanding(int depth) {
            op = new int[depth];
            status = new int[depth];
            seq = new long[depth];
            bytes = new long[depth];
            sinceNanos = new long[depth];
            readAsked = new long[depth];
        }
    }

    /** A request waiting on its QP for a receive. */
    record Held(int node, ByteBuf message, long sinceNanos) {
    }

    private final RdmaLif lif;
    private final DataPath data;
    private final RdmaCounters counters;
    private final MeshNode mesh;
    private final ByteBufAllocator alloc;
    private final List<QueuePair> watched = new ArrayList<>();
    private final List<QueuePair> blocked = new ArrayList<>();
    private final Map<Integer, long[]> readReplies = new HashMap<>();
    private ScheduledFuture<?> ticker;
    private long heldBytes;
    private int heldMessages;
    private long pausedSinceNanos;
    private boolean retryScheduled;

    /**
     * For each QP id, the generation and {@link Outstanding#givenUpBelow} of the last QP of that id destroyed:
     * its requests given up before it went are still taken back, the rest still go out.
     */
    private final int[] goneGeneration;
    private final long[] goneGivenUpBelow;
    /** The one question the mesh asks of every queued request (no allocation per send). */
    private final Recall takeBack = this::takeBack;

    private long requestsSent, repliesReceived, requestsReceived, repliesSent, repliesDropped, staleReplies,
            noRoute, timeouts, rnrWaits, rnrFailures, badMessages, readPauses, takenBack;

    RemotePath(RdmaLif lif, DataPath data, RdmaCounters counters, MeshNode mesh) {
        this.lif = lif;
        this.data = data;
        this.counters = counters;
        this.mesh = mesh;
        this.alloc = mesh.alloc();
        this.goneGeneration = new int[lif.qpCount];
        this.goneGivenUpBelow = new long[lif.qpCount];
        mesh.addListener(this);
        ticker = mesh.eventLoop().scheduleAtFixedRate(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    void close() {
        reset();
        mesh.removeListener(this);
        if (ticker != null) {
            ticker.cancel(false);
            ticker = null;
        }
    }

    /** Device or LIF reset: every waiting request released, nothing completed (the queues are gone). */
    void reset() {
        for (QueuePair qp : watched) {
            releaseHeld(qp);
            qp.watched = false;
        }
        watched.clear();
        blocked.clear();
        readReplies.clear();
        resume();
    }

    /** Power-on: the remote path's totals back to zero. */
    void clearCounters() {
        requestsSent = repliesReceived = requestsReceived = repliesSent = repliesDropped = staleReplies = noRoute =
                timeouts = rnrWaits = rnrFailures = badMessages = readPauses = takenBack = 0;
    }

    void counters(Map<String, Long> m) {
        m.put("rdma.remote.requestsSent", requestsSent);
        m.put("rdma.remote.repliesReceived", repliesReceived);
        m.put("rdma.remote.requestsReceived", requestsReceived);
        m.put("rdma.remote.repliesSent", repliesSent);
        m.put("rdma.remote.repliesDropped", repliesDropped);
        m.put("rdma.remote.staleReplies", staleReplies);
        m.put("rdma.remote.noRoute", noRoute);
        m.put("rdma.remote.timeouts", timeouts);
        m.put("rdma.remote.rnrWaits", rnrWaits);
        m.put("rdma.remote.rnrFailures", rnrFailures);
        m.put("rdma.remote.badMessages", badMessages);
        m.put("rdma.remote.readPauses", readPauses);
        m.put("rdma.remote.takenBack", takenBack);
        m.put("rdma.remote.heldBytes", heldBytes);
    }

    // ---------------------------------------------------------------------------------------------
    // Routing

    /** No node owns the GID. */
    static final int UNOWNED = -2;

    /**
     * The node an address vector's destination lives on: -1 for this node (also when the destination is
     * the source GID itself, whatever the table says), {@link #UNOWNED}, or another node's id.
     */
    int route(AddressHandle av) {
        if (av == null) {
            return UNOWNED;
        }
        if (java.util.Arrays.equals(av.sgid, av.dgid)) {
            return -1;
        }
        OptionalInt owner = mesh.ownerOf(Gid.of(av.dgid));
        if (owner.isEmpty()) {
            return UNOWNED;
        }
        return owner.getAsInt() == mesh.nodeId() ? -1 : owner.getAsInt();
    }

    /** Records where a connected QP's peer is (at MODIFY_QP with an address vector). */
    void place(QueuePair qp, int node) {
        qp.node = node;
        if (node >= 0 && qp.sq != null && qp.outstanding == null) {
            qp.outstanding = new Outstanding(qp.sq.mask() + 1);
            qp.outstanding.done = qp.sq.cons;
        }
    }

    @Override
    public void onGidOwnership(int nodeId, Set<Gid> gids) {
        // A node restarted with a new id, or a GID moved: follow it.
        for (QueuePair qp : lif.qps) {
            if (qp != null && qp.connected() && qp.av != null) {
                int r = route(qp.av);
                if (r != UNOWNED) {
                    place(qp, r);
                }
            }
        }
        for (AddressHandle ah : lif.ahs) {
            if (ah != null) {
                ah.node = Math.max(-1, route(ah)); // no owner: treated as local
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Requester

    /** Runs a remote QP's send queue: issues what it can, then completes what is answered, in order. */
    void runSq(QueuePair qp) {
        WorkQueue sq = qp.sq;
        Outstanding out = qp.outstanding;
        while (!sq.empty()) {
            int index = sq.cons; // the driver never posts over a WQE it has no completion for
            if (mesh.probe(qp.node) == SendResult.BUSY) {
                block(qp); // no message built only to be refused; onWritable runs this SQ again
                break;
            }
            long at = sq.slot(index);
            int stride = sq.stride();
            if (at < 0 || !data.dma.read(at, data.wqeBuf, 0, stride)) {
                data.refusals.refuse("rdma-sq-read", "QP " + qp.id + " SQ slot " + index + " unreadable");
                break;
            }
            data.wqe.wrap(data.wqeBuf, 0);
            int op = data.wqe.op();
            data.moved = 0;
            int status;
            try {
                status = issue(qp, op, stride, index);
            } catch (RuntimeException e) {
                data.refusals.refuse("rdma-sq-internal", "QP " + qp.id + " WQE failed: " + e);
                status = V1.STS_LOCAL_QP_OPER_ERR;
            }
            if (status == BLOCKED) {
                block(qp);
                break;
            }
            out.op[index] = op;
            out.status[index] = status;
            out.bytes[index] = data.moved;
            sq.cons = (index + 1) & sq.mask();
        }
        complete(qp);
    }

    private void block(QueuePair qp) {
        if (!blocked.contains(qp)) {
            blocked.add(qp);
        }
    }

    /** Posts the completions of answered WQEs, oldest first, stopping at the first still pending. */
    private void complete(QueuePair qp) {
        Outstanding out = qp.outstanding;
        WorkQueue sq = qp.sq;
        while (out.done != sq.cons && out.status[out.done] != PENDING) {
            int i = out.done;
            data.finish(qp, i, out.op[i], out.status[i], out.bytes[i]);
            out.done = (i + 1) & sq.mask();
        }
    }

    /** Issues one WQE: PENDING once a request is on its way, BLOCKED, or its final status. */
    private int issue(QueuePair qp, int op, int stride, int index) {
        V1.Wqe w = data.wqe;
        int solicited = (w.flags() & V1.Wqe.FLAG_SOL) != 0 ? WireHeader.FLAG_SOLICITED : 0;
        switch (op) {
            case V1.Wqe.OP_SEND, V1.Wqe.OP_SEND_IMM, V1.Wqe.OP_SEND_INV, V1.Wqe.OP_RDMA_WRITE,
                 V1.Wqe.OP_RDMA_WRITE_IMM -> {
                Spans src = data.src.clear();
                int st = data.gather(qp, stride, src);
                if (st != V1.STS_OK) {
                    return st;
                }
                if (src.total > WireHeader.MAX_PAYLOAD) {
                    return V1.STS_LOCAL_LEN_ERR;
                }
                int len = (int) src.total;
                int wop = switch (op) {
                    case V1.Wqe.OP_SEND -> WireHeader.SEND;
                    case V1.Wqe.OP_SEND_IMM -> WireHeader.SEND_IMM;
                    case V1.Wqe.OP_SEND_INV -> WireHeader.SEND_INV;
                    case V1.Wqe.OP_RDMA_WRITE -> WireHeader.WRITE;
                    default -> WireHeader.WRITE_IMM;
                };
                ByteBuf m = request(qp, wop, solicited, index, len);
                if (op == V1.Wqe.OP_RDMA_WRITE || op == V1.Wqe.OP_RDMA_WRITE_IMM) {
                    WireHeader.put32(m, WireHeader.RKEY, w.rkey());
                    WireHeader.put64(m, WireHeader.VA, w.remoteVa());
                }
                if (op != V1.Wqe.OP_SEND && op != V1.Wqe.OP_RDMA_WRITE) {
                    WireHeader.put32(m, WireHeader.IMM, w.immDataKey());
                }
                if (!fill(m, src, len)) {
                    m.release();
                    return V1.STS_LOCAL_PROT_ERR;
                }
                data.moved = len;
                return transmit(qp, m, index, 0);
            }
            case V1.Wqe.OP_RDMA_READ -> {
                int n = w.numSgeKey(), sgl = DataPath.sgl(w);
                if (sgl + (long) n * V1.Wqe.SGE_SIZE > stride) {
                    return V1.STS_LOCAL_QP_OPER_ERR;
                }
                long total = 0;
                for (int i = 0; i < n; i++) {
                    total += w.sgeLen(sgl, i);
                }
                if (total > WireHeader.MAX_PAYLOAD) {
                    return V1.STS_LOCAL_LEN_ERR;
                }
                int st = data.scatterList(qp, w, stride, total, data.dst.clear());
                if (st != V1.STS_OK) {
                    return st;
                }
                long[] asked = readReplies.computeIfAbsent(qp.node, k -> new long[1]);
                if (asked[0] > 0 && asked[0] + total > READ_REPLIES_MAX) {
                    return BLOCKED; // waits for earlier replies, which unblock it
                }
                ByteBuf m = request(qp, WireHeader.READ, 0, index, 0);
                WireHeader.put32(m, WireHeader.RKEY, w.rkey());
                WireHeader.put64(m, WireHeader.VA, w.remoteVa());
                WireHeader.put64(m, WireHeader.LENGTH, total);
                return transmit(qp, m, index, total);
            }
            case V1.Wqe.OP_ATOMIC_CS, V1.Wqe.OP_ATOMIC_FA -> {
                int st = data.resolveAtomicResult(qp); // the local SGE must be able to take the old value
                if (st != V1.STS_OK) {
                    return st;
                }
                ByteBuf m = request(qp, op == V1.Wqe.OP_ATOMIC_CS ? WireHeader.ATOMIC_CS : WireHeader.ATOMIC_FA, 0,
                        index, 0);
                WireHeader.put32(m, WireHeader.RKEY, w.rkey());
                WireHeader.put64(m, WireHeader.VA, w.remoteVa());
                WireHeader.put64(m, WireHeader.COMPARE, w.compare());
                WireHeader.put64(m, WireHeader.SWAP_ADD, w.swapAdd());
                data.moved = 8;
                return transmit(qp, m, index, 0);
            }
            default -> {
                return data.execute(qp, op, stride); // local work (LOCAL_INV, REG_MR) or a bad opcode
            }
        }
    }

    /** A request message of {@code payload} bytes with the requester's fields filled in. */
    private ByteBuf request(QueuePair qp, int op, int flags, int slot, int payload) {
        ByteBuf m = alloc.directBuffer(WireHeader.SIZE + payload);
        WireHeader.start(m, op, flags, qp.id, qp.destQpn, qp.generation, slot, qp.outstanding.nextSeq);
        WireHeader.put64(m, WireHeader.LENGTH, payload);
        return m;
    }

    /** Appends {@code len} bytes gathered from {@code src} to the message. */
    private boolean fill(ByteBuf m, Spans src, int len) {
        int at = m.writerIndex();
        m.ensureWritable(len);
        Spans dst = data.dst.clear();
        if (len > 0) {
            dst.addLocal(MemorySegment.ofBuffer(m.nioBuffer(at, len)), 0, len);
        }
        if (!data.copy(src, dst, len)) {
            return false;
        }
        m.writerIndex(at + len);
        return true;
    }

    /** Hands a request to the mesh, which asks {@link #takeBack} before it writes it. */
    private int transmit(QueuePair qp, ByteBuf m, int slot, long readBytes) {
        SendResult r = mesh.send(qp.node, m, takeBack);
        switch (r) {
            case QUEUED -> {
                Outstanding out = qp.outstanding;
                out.seq[slot] = out.nextSeq++;
                out.sinceNanos[slot] = System.nanoTime();
                out.readAsked[slot] = readBytes;
                requestsSent++;
                if (readBytes > 0) {
                    readReplies.computeIfAbsent(qp.node, k -> new long[1])[0] += readBytes;
                }
                watch(qp);
                return PENDING;
            }
            case BUSY -> {
                m.release();
                return BLOCKED;
            }
            default -> {
                m.release();
                noRoute++;
                return V1.STS_RETRY_EXCEEDED;
            }
        }
    }

    /**
     * Whether a request still queued for {@code node} is taken back: yes when its QP (the same one, by
     * generation, live or destroyed) gave it up. Requests of a QP destroyed while they were unanswered, or
     * of one this path no longer knows, go out. Only this path's own requests come here.
     */
    private boolean takeBack(int node, ByteBuf m) {
        int qid = WireHeader.u32(m, WireHeader.SRC_QP);
        if (qid < 0 || qid >= lif.qpCount) {
            return false;
        }
        int generation = WireHeader.u32(m, WireHeader.GENERATION);
        QueuePair qp = lif.qps[qid];
        long givenUpBelow;
        if (qp != null && qp.generation == generation && qp.outstanding != null) {
            givenUpBelow = qp.outstanding.givenUpBelow;
        } else if (goneGeneration[qid] == generation) {
            givenUpBelow = goneGivenUpBelow[qid];
        } else {
            return false;
        }
        if (WireHeader.u64(m, WireHeader.SEQ) >= givenUpBelow) {
            return false;
        }
        takenBack++;
        if (WireHeader.op(m) == WireHeader.READ) {
            readDone(node, WireHeader.u64(m, WireHeader.LENGTH)); // its reply will not come
        }
        return true;
    }

    /**
     * A READ of {@code bytes} to {@code node} asks no more of its budget: answered, taken back or timed out.
     * A READ that timed out and is then answered late, or taken back from the queue, gives its share back
     * twice; the floor at 0 bounds that, and it only follows a peer that did not answer for 30 s.
     */
    private void readDone(int node, long bytes) {
        long[] asked = readReplies.get(node);
        if (asked != null && bytes > 0) {
            asked[0] = Math.max(0, asked[0] - bytes);
            retryBlocked();
        }
    }

    /** A remote datagram: sent with its GRH, completed at once (a send completion does not mean delivery). */
    int sendUd(QueuePair qp, AddressHandle ah, Spans payload, int destQpn, int qkey) {
        V1.Wqe w = data.wqe;
        if (payload.total > WireHeader.MAX_PAYLOAD) {
            return V1.STS_LOCAL_LEN_ERR;
        }
        int len = (int) payload.total;
        int flags = ((w.flags() & V1.Wqe.FLAG_SOL) != 0 ? WireHeader.FLAG_SOLICITED : 0)
                | (ah.ipv4 ? WireHeader.FLAG_IPV4 : 0) | (ah.vlan >= 0 ? WireHeader.FLAG_VLAN : 0);
        ByteBuf m = alloc.directBuffer(WireHeader.SIZE + len);
        WireHeader.start(m, WireHeader.UD_SEND, flags, qp.id, destQpn, qp.generation, 0, 0);
        WireHeader.put32(m, WireHeader.QKEY, qkey);
        WireHeader.put32(m, WireHeader.IMM, w.op() == V1.Wqe.OP_SEND_IMM ? w.immDataKey() : 0);
        WireHeader.put32(m, WireHeader.VLAN, Math.max(ah.vlan, 0));
        WireHeader.put64(m, WireHeader.SMAC, ah.smac);
        WireHeader.put64(m, WireHeader.LENGTH, len);
        WireHeader.put32(m, WireHeader.COMPARE, w.op()); // the sender's opcode, for the receive completion
        if (!fill(m, payload, len)) {
            m.release();
            return V1.STS_LOCAL_PROT_ERR;
        }
        SendResult r = mesh.send(ah.node, m);
        if (r == SendResult.BUSY) {
            m.release();
            block(qp);
            return BLOCKED;
        }
        if (r == SendResult.NO_ROUTE) {
            m.release();
            noRoute++;
        } else {
            requestsSent++;
        }
        return V1.STS_OK; // a datagram with no route is lost, not an error of the sender
    }

    /** An answer for one of this node's requests. */
    private void onReply(int node, ByteBuf m) {
        repliesReceived++;
        int qid = WireHeader.u32(m, WireHeader.SRC_QP);
        QueuePair qp = qid >= 0 && qid < lif.qpCount ? lif.qps[qid] : null;
        int slot = WireHeader.u32(m, WireHeader.SLOT);
        long seq = WireHeader.u64(m, WireHeader.SEQ);
        Outstanding out = qp == null ? null : qp.outstanding;
        int op = WireHeader.op(m);
        if (op == WireHeader.READ_RESP) {
            readDone(node, WireHeader.u64(m, WireHeader.LENGTH));
        }
        if (out == null || qp.generation != WireHeader.u32(m, WireHeader.GENERATION) || slot < 0
                || slot >= out.status.length || out.status[slot] != PENDING || out.seq[slot] != seq
                || !issued(qp, slot)) {
            staleReplies++; // for a destroyed QP, a flushed, reset or timed-out WQE: ignored
            retryBlocked();
            return;
        }
        int status = WireHeader.status(m);
        if (status > V1.STS_RNR_RETRY_EXCEEDED) {
            status = V1.STS_BAD_RESP_ERR;
        }
        if (status == V1.STS_OK && op == WireHeader.READ_RESP) {
            status = landRead(qp, slot, m);
        } else if (status == V1.STS_OK && op == WireHeader.ATOMIC_RESP) {
            status = landAtomic(qp, slot, WireHeader.u64(m, WireHeader.SWAP_ADD));
        }
        out.status[slot] = status;
        complete(qp);
        retryBlocked();
    }

    /** Whether {@code slot} is in the QP's window of issued, not yet completed WQEs [done, SQ consumer index). */
    private static boolean issued(QueuePair qp, int slot) {
        int mask = qp.sq.mask(), done = qp.outstanding.done;
        return ((slot - done) & mask) < ((qp.sq.cons - done) & mask);
    }

    /** Scatters a READ's data into the WQE's local SGEs (the WQE is read again from the SQ ring). */
    private int landRead(QueuePair qp, int slot, ByteBuf m) {
        int len = WireHeader.payloadLength(m);
        if (!rereadWqe(qp, slot) || len != WireHeader.u64(m, WireHeader.LENGTH)) {
            return V1.STS_BAD_RESP_ERR;
        }
        int stride = qp.sq.stride();
        Spans dst = data.dst.clear();
        int st = data.scatterList(qp, data.wqe, stride, len, dst);
        if (st != V1.STS_OK) {
            return st;
        }
        if (!data.copy(payload(m, len), dst, len)) {
            return V1.STS_LOCAL_PROT_ERR;
        }
        qp.outstanding.bytes[slot] = len;
        return V1.STS_OK;
    }

    private int landAtomic(QueuePair qp, int slot, long old) {
        if (!rereadWqe(qp, slot)) {
            return V1.STS_BAD_RESP_ERR;
        }
        int st = data.resolveAtomicResult(qp);
        if (st != V1.STS_OK) {
            return st;
        }
        data.word(old);
        return data.wordIo(data.spanMem, data.spanOff, true) ? V1.STS_OK : V1.STS_LOCAL_PROT_ERR;
    }

    private boolean rereadWqe(QueuePair qp, int slot) {
        long at = qp.sq.slot(slot);
        if (at < 0 || !data.dma.read(at, data.wqeBuf, 0, qp.sq.stride())) {
            return false;
        }
        data.wqe.wrap(data.wqeBuf, 0);
        return true;
    }

    /** SQs stopped on a busy connection or the READ budget try again (from the loop, not inside a send). */
    private void retryBlocked() {
        if (blocked.isEmpty() || retryScheduled) {
            return;
        }
        retryScheduled = true;
        mesh.eventLoop().execute(() -> {
            retryScheduled = false;
            List<QueuePair> again = List.copyOf(blocked);
            blocked.clear();
            for (QueuePair qp : again) {
                if (lif.qps[qp.id] == qp) {
                    data.runSq(qp);
                }
            }
        });
    }

    @Override
    public void onWritable(int nodeId) {
        retryBlocked();
    }

    /**
     * A node died or came back: SQs stopped on its connection go on (to another route, or to no route). A dead
     * node answers none of the READs asked of it, so their shares of its budget go.
     */
    @Override
    public void onNodeState(int nodeId, boolean alive) {
        if (!alive) {
            readReplies.remove(nodeId);
        }
        retryBlocked();
    }

    /** The QP is flushed (moved to ERROR): answers still to come are ignored; its waiting requests fail. */
    void flush(QueuePair qp) {
        blocked.remove(qp);
        if (qp.outstanding != null && qp.sq != null) {
            qp.outstanding.done = qp.sq.cons;
            qp.outstanding.givenUpBelow = qp.outstanding.nextSeq; // what is still queued is taken back
        }
        failHeld(qp, V1.STS_RETRY_EXCEEDED);
    }

    /**
     * The QP is destroyed (or reset): nothing more is completed for it; requests waiting on it are dropped.
     * Its own requests still queued go out, unless it gave them up before.
     */
    void forget(QueuePair qp) {
        if (qp.outstanding != null) {
            goneGeneration[qp.id] = qp.generation;
            goneGivenUpBelow[qp.id] = qp.outstanding.givenUpBelow;
        }
        blocked.remove(qp);
        releaseHeld(qp);
        if (qp.watched) {
            watched.remove(qp);
            qp.watched = false;
        }
    }

    private void watch(QueuePair qp) {
        if (!qp.watched) {
            qp.watched = true;
            watched.add(qp);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Responder

    @Override
    public void onMessage(int sourceNode, ByteBuf m) {
        try {
            if (m.readableBytes() < WireHeader.SIZE || !WireHeader.known(WireHeader.op(m))) {
                bad(sourceNode, "a message of " + m.readableBytes() + " bytes that is not an ionic request or reply");
                return;
            }
            int op = WireHeader.op(m);
            if (WireHeader.isReply(op)) {
                onReply(sourceNode, m);
                return;
            }
            requestsReceived++;
            if (op == WireHeader.UD_SEND) {
                deliverUd(m);
                return;
            }
            int dst = WireHeader.u32(m, WireHeader.DST_QP);
            QueuePair qp = dst >= 0 && dst < lif.qpCount ? lif.qps[dst] : null;
            if (qp == null || !qp.connected() || qp.destQpn != WireHeader.u32(m, WireHeader.SRC_QP)
                    || qp.node != sourceNode || !(qp.state == V1.QPS_RTR || qp.state == V1.QPS_RTS
                    || qp.state == V1.QPS_SQD)) {
                // No QP here takes it: a NIC drops such a packet and the requester's retries run out.
                reply(sourceNode, m, WireHeader.ACK, V1.STS_RETRY_EXCEEDED, null, 0, 0);
                return;
            }
            if (qp.held != null && !qp.held.isEmpty() || apply(qp, sourceNode, m) == BLOCKED) {
                hold(qp, sourceNode, m);
            }
        } finally {
            m.release();
        }
    }

    private void bad(int node, String what) {
        badMessages++;
        data.refusals.refuse("rdma-remote-message", "node " + node + " sent " + what);
    }

    /** Applies a request to this guest and answers it; BLOCKED when it needs a receive and none is posted. */
    private int apply(QueuePair qp, int node, ByteBuf m) {
        int op = WireHeader.op(m);
        int len = WireHeader.payloadLength(m);
        switch (op) {
            case WireHeader.SEND, WireHeader.SEND_IMM, WireHeader.SEND_INV -> {
                if (qp.rq == null) {
                    reply(node, m, WireHeader.ACK, V1.STS_REMOTE_INV_REQ_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                if (qp.rq.empty()) {
                    return BLOCKED;
                }
                data.takeReceive(qp);
                int recvSt = data.scatterList(qp, data.rqe, qp.rq.stride(), len, data.dst.clear());
                if (recvSt == V1.STS_OK && !data.copy(payload(m, len), data.dst, len)) {
                    recvSt = V1.STS_LOCAL_PROT_ERR;
                }
                int imm = op == WireHeader.SEND ? 0 : WireHeader.u32(m, WireHeader.IMM);
                if (op == WireHeader.SEND_INV && recvSt == V1.STS_OK) {
                    data.invalidate(imm);
                }
                int recvOp = switch (op) {
                    case WireHeader.SEND_IMM -> V1.Cqe.RECV_OP_SEND_IMM;
                    case WireHeader.SEND_INV -> V1.Cqe.RECV_OP_SEND_INV;
                    default -> V1.Cqe.RECV_OP_SEND;
                };
                data.receiveCompletion(qp, qp.destQpn | recvOp << 24, imm, len, recvSt, 0, 0,
                        (WireHeader.flags(m) & WireHeader.FLAG_SOLICITED) != 0);
                reply(node, m, WireHeader.ACK, DataPath.requesterStatus(recvSt), null, 0, 0);
            }
            case WireHeader.WRITE, WireHeader.WRITE_IMM -> {
                boolean imm = op == WireHeader.WRITE_IMM;
                if (imm && qp.rq == null) {
                    reply(node, m, WireHeader.ACK, V1.STS_REMOTE_INV_REQ_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                if (imm && qp.rq.empty()) {
                    return BLOCKED;
                }
                int st = data.resolve(qp, WireHeader.u32(m, WireHeader.RKEY), WireHeader.u64(m, WireHeader.VA), len,
                        V1.MRF_REMOTE_WRITE, true);
                if (st == V1.STS_OK && data.addResolved(data.dst.clear(), len)
                        && !data.copy(payload(m, len), data.dst, len)) {
                    st = V1.STS_REMOTE_ACC_ERR;
                }
                if (st == V1.STS_OK) {
                    counters.add(qp, RdmaCounters.Device.RX_REMOTE_REQS, 1);
                    if (imm) {
                        data.takeReceive(qp);
                        data.receiveCompletion(qp, qp.destQpn | V1.Cqe.RECV_OP_RDMA_IMM << 24,
                                WireHeader.u32(m, WireHeader.IMM), len, V1.STS_OK, 0, 0,
                                (WireHeader.flags(m) & WireHeader.FLAG_SOLICITED) != 0);
                    }
                }
                reply(node, m, WireHeader.ACK, st, null, 0, 0);
            }
            case WireHeader.READ -> {
                long want = WireHeader.u64(m, WireHeader.LENGTH);
                if (want < 0 || want > WireHeader.MAX_PAYLOAD || len != 0) {
                    reply(node, m, WireHeader.READ_RESP, V1.STS_REMOTE_INV_REQ_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                int st = data.resolve(qp, WireHeader.u32(m, WireHeader.RKEY), WireHeader.u64(m, WireHeader.VA), want,
                        V1.MRF_REMOTE_READ, true);
                if (st != V1.STS_OK || !data.addResolved(data.src.clear(), want)) {
                    reply(node, m, WireHeader.READ_RESP, st != V1.STS_OK ? st : V1.STS_REMOTE_ACC_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                counters.add(qp, RdmaCounters.Device.RX_REMOTE_REQS, 1);
                reply(node, m, WireHeader.READ_RESP, V1.STS_OK, data.src, (int) want, 0);
            }
            case WireHeader.ATOMIC_CS, WireHeader.ATOMIC_FA -> {
                long va = WireHeader.u64(m, WireHeader.VA);
                if ((va & 7) != 0) {
                    reply(node, m, WireHeader.ATOMIC_RESP, V1.STS_REMOTE_INV_REQ_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                int st = data.resolve(qp, WireHeader.u32(m, WireHeader.RKEY), va, 8, V1.MRF_REMOTE_ATOMIC, true);
                if (st != V1.STS_OK) {
                    reply(node, m, WireHeader.ATOMIC_RESP, st, null, 0, 0);
                    return V1.STS_OK;
                }
                PageTable mem = data.spanMem;
                long off = data.spanOff;
                if (!data.wordIo(mem, off, false)) {
                    reply(node, m, WireHeader.ATOMIC_RESP, V1.STS_REMOTE_ACC_ERR, null, 0, 0);
                    return V1.STS_OK;
                }
                long old = data.word();
                long cmp = WireHeader.u64(m, WireHeader.COMPARE), arg = WireHeader.u64(m, WireHeader.SWAP_ADD);
                long next = op == WireHeader.ATOMIC_CS ? (old == cmp ? arg : old) : old + arg;
                data.word(next);
                st = data.wordIo(mem, off, true) ? V1.STS_OK : V1.STS_REMOTE_ACC_ERR;
                if (st == V1.STS_OK) {
                    counters.add(qp, RdmaCounters.Device.RX_REMOTE_REQS, 1);
                }
                reply(node, m, WireHeader.ATOMIC_RESP, st, null, 0, old);
            }
            default -> bad(node, "request opcode " + op);
        }
        return V1.STS_OK;
    }

    /** The payload of a message as a span list the data path copies from. */
    private Spans payload(ByteBuf m, int len) {
        Spans s = data.src.clear();
        if (len > 0) {
            s.addLocal(MemorySegment.ofBuffer(m.nioBuffer(m.readerIndex() + WireHeader.SIZE, len)), 0, len);
        }
        return s;
    }

    /** Answers {@code request}: its requester fields echoed, a status, and for a READ the data. */
    private void reply(int node, ByteBuf request, int op, int status, Spans data, int len, long old) {
        ByteBuf r = alloc.directBuffer(WireHeader.SIZE + len);
        WireHeader.start(r, op, 0, WireHeader.u32(request, WireHeader.SRC_QP), WireHeader.u32(request,
                WireHeader.DST_QP), WireHeader.u32(request, WireHeader.GENERATION), WireHeader.u32(request,
                WireHeader.SLOT), WireHeader.u64(request, WireHeader.SEQ));
        WireHeader.putStatus(r, status);
        WireHeader.put64(r, WireHeader.LENGTH, op == WireHeader.READ_RESP ? WireHeader.u64(request, WireHeader.LENGTH)
                : len);
        WireHeader.put64(r, WireHeader.SWAP_ADD, old);
        if (data != null && !fill(r, data, len)) {
            WireHeader.putStatus(r, V1.STS_REMOTE_ACC_ERR); // fill() left the payload empty
        }
        if (mesh.sendReply(node, r) == SendResult.QUEUED) {
            repliesSent++;
        } else {
            r.release();
            repliesDropped++; // the requester's WQE times out
        }
    }

    /** A datagram from a peer: delivered like a local one, or dropped. */
    private void deliverUd(ByteBuf m) {
        int len = WireHeader.payloadLength(m);
        int dst = WireHeader.u32(m, WireHeader.DST_QP) & 0xff_ffff;
        QueuePair dest = dst < lif.qpCount ? lif.qps[dst] : null;
        if (len < DataPath.GRH_SIZE || dest == null || !dest.datagram() || dest.qkey != WireHeader.u32(m, WireHeader.QKEY)
                || !data.takeReceive(dest)) {
            data.udDropped();
            return;
        }
        int recvSt = data.scatterList(dest, data.rqe, dest.rq.stride(), len, data.dst.clear());
        if (recvSt == V1.STS_OK && !data.copy(payload(m, len), data.dst, len)) {
            recvSt = V1.STS_LOCAL_PROT_ERR;
        }
        int f = WireHeader.flags(m);
        int flags = WireHeader.u32(m, WireHeader.SRC_QP) & 0xff_ffff;
        if ((f & WireHeader.FLAG_IPV4) != 0) {
            flags |= V1.Cqe.RECV_IS_IPV4;
        }
        int vlan = 0;
        if ((f & WireHeader.FLAG_VLAN) != 0) {
            flags |= V1.Cqe.RECV_IS_VLAN;
            vlan = WireHeader.u32(m, WireHeader.VLAN) & 0xffff;
        }
        boolean imm = WireHeader.u32(m, WireHeader.COMPARE) == V1.Wqe.OP_SEND_IMM;
        int op = imm ? V1.Cqe.RECV_OP_SEND_IMM : V1.Cqe.RECV_OP_SEND;
        data.receiveCompletion(dest, flags | op << 24, imm ? WireHeader.u32(m, WireHeader.IMM) : 0, len, recvSt,
                WireHeader.u64(m, WireHeader.SMAC), vlan, (f & WireHeader.FLAG_SOLICITED) != 0);
    }

    // ---------------------------------------------------------------------------------------------
    // Receiver not ready

    /**
     * Keeps a copy of {@code m} (the caller releases {@code m}): a received message is a slice of the
     * connection's receive buffer, which it would otherwise keep whole for as long as it waits.
     */
    private void hold(QueuePair qp, int node, ByteBuf m) {
        if (qp.held == null) {
            qp.held = new ArrayDeque<>();
        }
        if (qp.held.isEmpty()) {
            rnrWaits++;
        }
        m = alloc.directBuffer(m.readableBytes()).writeBytes(m, m.readerIndex(), m.readableBytes());
        qp.held.add(new Held(node, m, System.nanoTime()));
        heldBytes += m.readableBytes();
        heldMessages++;
        watch(qp);
        if ((heldBytes > HELD_BYTES_MAX || heldMessages > HELD_MESSAGES_MAX) && pausedSinceNanos == 0) {
            pausedSinceNanos = System.nanoTime();
            readPauses++;
            mesh.setReceivingFromAll(false);
        }
    }

    /** Receives were posted on {@code qp}: the requests waiting for them go on, in order. */
    void receivesPosted(QueuePair qp) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            Held h = held.peek();
            if (apply(qp, h.node(), h.message()) == BLOCKED) {
                break;
            }
            unhold(held.poll());
        }
        resumeIfRoom();
    }

    private void unhold(Held h) {
        heldBytes -= h.message().readableBytes();
        heldMessages--;
        h.message().release();
    }

    /** Every request waiting on {@code qp} fails with {@code status}. */
    private void failHeld(QueuePair qp, int status) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            Held h = held.poll();
            if (status == V1.STS_RNR_RETRY_EXCEEDED) {
                rnrFailures++;
            }
            reply(h.node(), h.message(), WireHeader.ACK, status, null, 0, 0);
            unhold(h);
        }
        resumeIfRoom();
    }

    private void releaseHeld(QueuePair qp) {
        ArrayDeque<Held> held = qp.held;
        while (held != null && !held.isEmpty()) {
            unhold(held.poll());
        }
        resumeIfRoom();
    }

    private void resumeIfRoom() {
        if (pausedSinceNanos != 0 && heldBytes <= HELD_BYTES_MAX && heldMessages <= HELD_MESSAGES_MAX) {
            resume();
        }
    }

    private void resume() {
        if (pausedSinceNanos != 0) {
            pausedSinceNanos = 0;
            mesh.setReceivingFromAll(true);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Time-outs

    private void tick() {
        long now = System.nanoTime();
        boolean full = pausedSinceNanos != 0 && now - pausedSinceNanos >= FULL_RNR_TIMEOUT_NANOS;
        for (QueuePair qp : List.copyOf(watched)) {
            if (lif.qps[qp.id] != qp) {
                forget(qp);
                continue;
            }
            // Receiver not ready: 5 s for the oldest waiting request, none at all when the queue is full.
            ArrayDeque<Held> held = qp.held;
            while (held != null && !held.isEmpty() && (full || now - held.peek().sinceNanos() >= RNR_TIMEOUT_NANOS)) {
                Held h = held.poll();
                rnrFailures++;
                reply(h.node(), h.message(), WireHeader.ACK, V1.STS_RNR_RETRY_EXCEEDED, null, 0, 0);
                unhold(h);
                receivesPosted(qp); // what was behind it may go now
            }
            // Lost peer: the oldest unanswered request gives up after 30 s, and the ones behind it with it.
            Outstanding out = qp.outstanding;
            if (out != null && qp.sq != null) {
                boolean expired = false;
                for (int i = out.done; i != qp.sq.cons; i = (i + 1) & qp.sq.mask()) {
                    if (out.status[i] == PENDING && (expired || now - out.sinceNanos[i] >= REPLY_TIMEOUT_NANOS)) {
                        expired = true;
                        out.status[i] = V1.STS_RETRY_EXCEEDED;
                        timeouts++;
                        readDone(qp.node, out.readAsked[i]);
                        out.readAsked[i] = 0;
                    }
                }
                if (expired) {
                    out.givenUpBelow = out.nextSeq; // all issued so far: those still queued are taken back
                    log.warn("QP {}: no answer from node {} for 30 s; its requests complete with retry-exceeded",
                            qp.id, qp.node);
                    complete(qp);
                }
            }
            boolean idle = (held == null || held.isEmpty()) && (out == null || out.done == qp.sq.cons);
            if (idle) {
                qp.watched = false;
                watched.remove(qp);
            }
        }
        if (full) {
            resume();
        }
        retryBlocked(); // a safety net: a route can change without a writability event
    }
}
