package ernic.ionic.rdma;

import ernic.counters.Counters;
import ernic.mesh.Gid;
import ernic.mesh.MeshListener;
import ernic.mesh.Recall;
import ernic.mesh.SendResult;
import ernic.vfiouser.server.Refusals;
import ernic.vfiouser.sys.NativeMemory;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The end for a QP whose peer is another server's guest, reached through a {@link PeerPort}. Runs on the
 * device thread, which is also the mesh's event loop, so a message from a peer is applied as it is read
 * and nothing is locked.
 *
 * <p>Requester side (this class): a WQE's payload is gathered into a message ({@link WireHeader}) and
 * handed to the port; the WQE then waits in its QP's {@link Outstanding} slots until the peer answers.
 * A connection above its watermark answers BUSY and the SQ stops there, as a NIC out of transmit credits
 * holds its queue, until the mesh says it is writable again; so does a READ that would have more than
 * 32 MiB of replies outstanding to one node. A WQE no connection can carry completes with retry-exceeded
 * at once; one whose answer never comes, after 30 s. Datagrams complete when they are handed to the mesh.
 * When a QP is flushed or its requests time out, those still queued on their connection are taken back,
 * so none reaches the peer after its WQE has completed; one being written arrives (its reply is stale).
 * A destroyed QP's requests still go out. The peer's side of a request is {@link RemoteResponder}.
 */
final class RemotePath implements End, MeshListener {
    private static final Logger log = LoggerFactory.getLogger(RemotePath.class);

    static final long REPLY_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final long READ_REPLIES_MAX = 32L << 20;
    /**
     * WRITEs longer than this go in pieces of this size ({@link WireHeader#FLAG_MORE}). 4 MiB: up to there a WRITE
     * goes whole, which measured less CPU per byte and more bandwidth at 1 and 4 MiB than 256 KiB pieces, with no
     * loss of latency on loopback (docs/performance.md, section 3).
     */
    static final int WRITE_PIECE = 4 << 20;
    /** No node owns the GID. */
    static final int UNOWNED = -2;

    private final RdmaLif lif;
    private final KeyedMemory memory;
    private final Requester requester;
    private final Refusals refusals;
    private final PeerPort port;
    private final LongSupplier clock;
    final RemoteResponder responder;
    private final List<QueuePair> watched = new ArrayList<>();
    private final Map<Integer, long[]> readReplies = new HashMap<>();
    private final Spans received = new Spans(), out = new Spans();
    private boolean retryScheduled;
    private boolean ownersRetryScheduled;
    private final Runnable retryTask = this::runRetry;

    /**
     * For each QP id, the generation and {@link Outstanding#givenUpBelow} of the last QP of that id destroyed:
     * its requests given up before it went are still taken back, the rest still go out.
     */
    private final int[] goneGeneration;
    private final long[] goneGivenUpBelow;
    /** The one question the mesh asks of every queued request (no allocation per send). */
    private final Recall takeBack = this::takeBack;

    final Counters<RemoteCounter> counters;

    RemotePath(RdmaLif lif, KeyedMemory memory, Requester requester, Responder local, Refusals refusals,
               Counters<RemoteCounter> counters, PeerPort port, LongSupplier clock) {
        this.lif = lif;
        this.counters = counters;
        this.refusals = refusals;
        this.memory = memory;
        this.requester = requester;
        this.port = port;
        this.clock = clock;
        this.goneGeneration = new int[lif.queuePairs.count()];
        this.goneGivenUpBelow = new long[lif.queuePairs.count()];
        this.responder = new RemoteResponder(this, lif, local, counters, port, clock);
        port.listen(this);
        port.gidsInUse(this::usesSourceGid);
    }

    void close() {
        reset();
        port.listen(null);
        port.gidsInUse(null);
    }

    /** Device or LIF reset: every waiting request released, nothing completed (the queues are gone). */
    void reset() {
        for (QueuePair qp : watched) {
            qp.watched = false;
        }
        watched.clear();
        readReplies.clear();
        responder.reset();
    }

    // ---------------------------------------------------------------------------------------------
    // Routing

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
        OptionalInt owner = port.ownerOf(Gid.of(av.dgid));
        if (owner.isEmpty()) {
            return UNOWNED;
        }
        return owner.getAsInt() == port.nodeId() ? -1 : owner.getAsInt();
    }

    /** Records where a connected QP's peer is (at MODIFY_QP with an address vector). */
    void place(QueuePair qp, int node) {
        qp.node = node;
    }

    // ---------------------------------------------------------------------------------------------
    // GIDs the guest uses as its own

    /** The guest transmitted a frame from {@code hi:lo} (its own source address): the mesh may learn it. */
    void sourceSeen(long hi, long lo) {
        port.learnGid(hi, lo);
    }

    /**
     * The source GID of a header template the guest wrote (CREATE_AH, MODIFY_QP): what it sends RDMA from, so the
     * mesh may learn it. Taken from the template before anything rewrites it; no allocation.
     */
    void templateSource(AddressHandle av) {
        port.learnGid(ernic.common.IpAddress.high(av.sgid), ernic.common.IpAddress.low(av.sgid));
    }

    /** Whether a live QP or AH of the guest has {@code gid} as its source GID: a learned GID in use does not age. */
    boolean usesSourceGid(Gid gid) {
        byte[] raw = gid.toBytes();
        for (QueuePair qp : lif.queuePairs) {
            if (qp != null && qp.av != null && java.util.Arrays.equals(qp.av.sgid, raw)) {
                return true;
            }
        }
        for (AddressHandle ah : lif.addressHandles) {
            if (ah != null && java.util.Arrays.equals(ah.sgid, raw)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void onGidOwnership(int nodeId, Set<Gid> gids) {
        // A MODIFY_QP waiting for an owner tries again, after this event (the update may hold more records).
        if (!ownersRetryScheduled) {
            ownersRetryScheduled = true;
            port.loop().execute(() -> {
                ownersRetryScheduled = false;
                lif.retryWaitingAdmin();
            });
        }
        // A node restarted with a new id, or a GID moved: follow it.
        for (QueuePair qp : lif.queuePairs) {
            if (qp != null && qp.connected() && qp.av != null) {
                int r = route(qp.av);
                if (r != UNOWNED) {
                    place(qp, r);
                }
            }
        }
        for (AddressHandle ah : lif.addressHandles) {
            if (ah != null) {
                ah.node = Math.max(-1, route(ah)); // no owner: treated as local
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Requester side: the End

    @Override
    public int send(Request r) {
        return carry(r, r.opcode.mesh);
    }

    @Override
    public int write(Request r) {
        return carry(r, r.opcode.mesh);
    }

    /**
     * A request with the WQE's payload (SEND or WRITE). A WRITE (without immediate data) longer than
     * {@link #WRITE_PIECE} goes as pieces ({@link WireHeader#FLAG_MORE}), each sent as soon as it is gathered, so
     * that the peer places one while the next is on its way instead of waiting for the whole payload.
     */
    private int carry(Request r, int op) {
        if (r.payload.total > WireHeader.MAX_PAYLOAD) {
            return V1.STS_LOCAL_LEN_ERR;
        }
        if (port.probe(r.qp.node) == SendResult.BUSY) {
            return Requester.WAIT_ROOM; // no message built only to be refused; onWritable runs this SQ again
        }
        int len = (int) r.payload.total;
        boolean write = op == WireHeader.WRITE || op == WireHeader.WRITE_IMM;
        int at = 0;
        // A WRITE_IMM goes whole: the responder reports the length of the message with the immediate in its receive.
        for (; op == WireHeader.WRITE && len - at > WRITE_PIECE; at += WRITE_PIECE) {
            ByteBuf piece = request(r, WireHeader.WRITE, WireHeader.FLAG_MORE, WRITE_PIECE);
            WireHeader.put32(piece, WireHeader.RKEY, r.wqe.rkey());
            WireHeader.put64(piece, WireHeader.VA, r.wqe.remoteVa() + at);
            if (!fill(piece, r.payload, at, WRITE_PIECE)) {
                piece.release();
                return abandon(r.qp, at > 0, V1.STS_LOCAL_PROT_ERR);
            }
            SendResult sent = at == 0 ? port.send(r.qp.node, piece, takeBack)
                    : port.sendMore(r.qp.node, piece, takeBack);
            if (sent != SendResult.QUEUED) {
                piece.release();
                if (sent == SendResult.BUSY) {
                    return Requester.WAIT_ROOM; // only the first piece can be refused: nothing went
                }
                counters.inc(RemoteCounter.NO_ROUTE);
                return abandon(r.qp, at > 0, V1.STS_RETRY_EXCEEDED);
            }
            counters.inc(RemoteCounter.PIECES_SENT);
        }
        ByteBuf m = request(r, op, r.solicited() ? WireHeader.FLAG_SOLICITED : 0, len - at);
        if (write) {
            WireHeader.put32(m, WireHeader.RKEY, r.wqe.rkey());
            WireHeader.put64(m, WireHeader.VA, r.wqe.remoteVa() + at);
        }
        if (op != WireHeader.SEND && op != WireHeader.WRITE) {
            WireHeader.put32(m, WireHeader.IMM, r.wqe.immDataKey());
        }
        if (!fill(m, r.payload, at, len - at)) {
            m.release();
            return abandon(r.qp, at > 0, V1.STS_LOCAL_PROT_ERR);
        }
        r.moved = len;
        return transmit(r.qp, m, r.slot, 0, at > 0);
    }

    /**
     * A WQE fails after some of its pieces were queued: its sequence number is used up, so that when the QP is
     * flushed for the error (which gives up everything numbered below the next one) the pieces are taken back.
     */
    private static int abandon(QueuePair qp, boolean piecesQueued, int status) {
        if (piecesQueued) {
            qp.outstanding.nextSeq++;
        }
        return status;
    }

    @Override
    public int read(Request r) {
        long total = r.length;
        if (total > WireHeader.MAX_PAYLOAD) {
            return V1.STS_LOCAL_LEN_ERR;
        }
        if (port.probe(r.qp.node) == SendResult.BUSY) {
            return Requester.WAIT_ROOM;
        }
        long[] asked = readReplies.computeIfAbsent(r.qp.node, k -> new long[1]);
        if (asked[0] > 0 && asked[0] + total > READ_REPLIES_MAX) {
            return Requester.WAIT_ROOM; // waits for earlier replies, which run the SQ again
        }
        ByteBuf m = request(r, WireHeader.READ, 0, 0);
        WireHeader.put32(m, WireHeader.RKEY, r.wqe.rkey());
        WireHeader.put64(m, WireHeader.VA, r.wqe.remoteVa());
        WireHeader.put64(m, WireHeader.LENGTH, total);
        return transmit(r.qp, m, r.slot, total, false);
    }

    @Override
    public int atomic(Request r) {
        if (port.probe(r.qp.node) == SendResult.BUSY) {
            return Requester.WAIT_ROOM;
        }
        ByteBuf m = request(r, r.opcode.mesh, 0, 0);
        WireHeader.put32(m, WireHeader.RKEY, r.wqe.rkey());
        WireHeader.put64(m, WireHeader.VA, r.wqe.remoteVa());
        WireHeader.put64(m, WireHeader.COMPARE, r.wqe.compare());
        WireHeader.put64(m, WireHeader.SWAP_ADD, r.wqe.swapAdd());
        r.moved = 8;
        return transmit(r.qp, m, r.slot, 0, false);
    }

    /** A remote datagram: sent with its GRH, completed at once (a send completion does not mean delivery). */
    @Override
    public int datagram(Request r) {
        AddressHandle ah = r.ah;
        if (r.payload.total > WireHeader.MAX_PAYLOAD) {
            return V1.STS_LOCAL_LEN_ERR;
        }
        int len = (int) r.payload.total;
        int flags = (r.solicited() ? WireHeader.FLAG_SOLICITED : 0)
                | (ah.ipv4 ? WireHeader.FLAG_IPV4 : 0) | (ah.vlan >= 0 ? WireHeader.FLAG_VLAN : 0);
        ByteBuf m = port.message(WireHeader.SIZE + len);
        WireHeader.start(m, WireHeader.UD_SEND, flags, r.qp.id, r.destQpn, r.qp.generation, 0, 0);
        WireHeader.put32(m, WireHeader.QKEY, r.qkey);
        WireHeader.put32(m, WireHeader.IMM, r.opcode.immediate ? r.wqe.immDataKey() : 0);
        WireHeader.put32(m, WireHeader.VLAN, Math.max(ah.vlan, 0));
        WireHeader.put64(m, WireHeader.SMAC, ah.smac);
        WireHeader.put64(m, WireHeader.LENGTH, len);
        WireHeader.put32(m, WireHeader.COMPARE, r.wqe.op()); // the sender's opcode, for the receive completion
        if (!fill(m, r.payload, len)) {
            m.release();
            return V1.STS_LOCAL_PROT_ERR;
        }
        r.moved = len - Grh.SIZE;
        SendResult sent = port.send(ah.node, m, null);
        if (sent == SendResult.BUSY) {
            m.release();
            return Requester.WAIT_ROOM;
        }
        if (sent == SendResult.NO_ROUTE) {
            m.release();
            counters.inc(RemoteCounter.NO_ROUTE);
        } else {
            counters.inc(RemoteCounter.REQUESTS_SENT);
        }
        return V1.STS_OK; // a datagram with no route is lost, not an error of the sender
    }

    /** A request message of {@code payload} bytes with the requester's fields filled in. */
    private ByteBuf request(Request r, int op, int flags, int payload) {
        ByteBuf m = port.message(WireHeader.SIZE + payload);
        QueuePair qp = r.qp;
        WireHeader.start(m, op, flags, qp.id, qp.destQpn, qp.generation, r.slot, qp.outstanding.nextSeq);
        WireHeader.put64(m, WireHeader.LENGTH, payload);
        return m;
    }

    /** Appends {@code len} bytes gathered from {@code src} to the message. */
    boolean fill(ByteBuf m, Spans src, int len) {
        return fill(m, src, 0, len);
    }

    /** Appends {@code len} bytes gathered from {@code src}, from its offset {@code from}, to the message. */
    private boolean fill(ByteBuf m, Spans src, long from, int len) {
        int at = m.writerIndex();
        m.ensureWritable(len);
        Spans dst = out.clear();
        if (len > 0 && m.hasMemoryAddress()) {
            dst.addLocal(NativeMemory.ALL, m.memoryAddress() + at, len); // no view object per message
        } else if (len > 0) {
            dst.addLocal(MemorySegment.ofBuffer(m.nioBuffer(at, len)), 0, len);
        }
        if (!memory.copy(src, from, dst, len)) {
            return false;
        }
        m.writerIndex(at + len);
        return true;
    }

    /**
     * The payload of a message as spans to copy from, over its buffers where they lie (no merge); a direct buffer
     * by its address, so the usual message makes no view object.
     */
    Spans payload(ByteBuf m, int len) {
        Spans s = received.clear();
        int at = m.readerIndex() + WireHeader.SIZE;
        if (len > 0 && m.hasMemoryAddress()) {
            s.addLocal(NativeMemory.ALL, m.memoryAddress() + at, len);
        } else if (len > 0 && m.nioBufferCount() == 1) {
            s.addLocal(MemorySegment.ofBuffer(m.nioBuffer(at, len)), 0, len);
        } else if (len > 0) {
            ByteBuffer[] parts = m.nioBuffers(at, len);
            if (parts.length > Spans.MAX) {
                parts = new ByteBuffer[] {m.nioBuffer(at, len)}; // too many pieces: one merged view
            }
            for (ByteBuffer b : parts) {
                s.addLocal(MemorySegment.ofBuffer(b), 0, b.remaining());
            }
        }
        return s;
    }

    /**
     * Hands a request to the port, which asks {@link #takeBack} before it writes it; {@code last}: the last piece
     * of a WRITE whose other pieces are queued, queued behind them whatever the connection holds.
     */
    private int transmit(QueuePair qp, ByteBuf m, int slot, long readBytes, boolean last) {
        SendResult r = last ? port.sendMore(qp.node, m, takeBack) : port.send(qp.node, m, takeBack);
        switch (r) {
            case QUEUED -> {
                Outstanding o = qp.outstanding;
                o.seq[slot] = o.nextSeq++;
                o.sinceNanos[slot] = clock.getAsLong();
                o.readAsked[slot] = readBytes;
                counters.inc(RemoteCounter.REQUESTS_SENT);
                if (readBytes > 0) {
                    readReplies.computeIfAbsent(qp.node, k -> new long[1])[0] += readBytes;
                }
                watch(qp);
                return Requester.PENDING;
            }
            case BUSY -> {
                m.release();
                return Requester.WAIT_ROOM;
            }
            default -> {
                m.release();
                counters.inc(RemoteCounter.NO_ROUTE);
                return abandon(qp, last, V1.STS_RETRY_EXCEEDED);
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
        if (!lif.queuePairs.inRange(qid)) {
            return false;
        }
        int generation = WireHeader.u32(m, WireHeader.GENERATION);
        QueuePair qp = lif.queuePairs.get(qid);
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
        counters.inc(RemoteCounter.TAKEN_BACK);
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
            retry();
        }
    }

    /** An answer for one of this node's requests. */
    private void onReply(int node, ByteBuf m) {
        counters.inc(RemoteCounter.REPLIES_RECEIVED);
        int qid = WireHeader.u32(m, WireHeader.SRC_QP);
        QueuePair qp = lif.queuePairs.get(qid);
        int slot = WireHeader.u32(m, WireHeader.SLOT);
        long seq = WireHeader.u64(m, WireHeader.SEQ);
        Outstanding o = qp == null ? null : qp.outstanding;
        int op = WireHeader.op(m);
        if (op == WireHeader.READ_RESP) {
            readDone(node, WireHeader.u64(m, WireHeader.LENGTH));
        }
        if (o == null || qp.generation != WireHeader.u32(m, WireHeader.GENERATION) || !o.issued(slot, qp.sq)
                || o.status[slot] != Requester.PENDING || o.seq[slot] != seq) {
            counters.inc(RemoteCounter.STALE_REPLIES); // for a destroyed QP, a flushed, reset or timed-out WQE: ignored
            retry();
            return;
        }
        int status = WireHeader.status(m);
        if (status > V1.STS_RNR_RETRY_EXCEEDED) {
            status = V1.STS_BAD_RESP_ERR;
        }
        RdmaTrace trace = requester.trace;
        if (trace != null) {
            int len = WireHeader.payloadLength(m);
            trace.replied(qp, slot, status, op == WireHeader.READ_RESP ? payload(m, len) : null, len,
                    WireHeader.u64(m, WireHeader.SWAP_ADD));
        }
        if (status == V1.STS_OK && op == WireHeader.READ_RESP) {
            int len = WireHeader.payloadLength(m);
            status = len != WireHeader.u64(m, WireHeader.LENGTH) ? V1.STS_BAD_RESP_ERR
                    : requester.landRead(qp, slot, payload(m, len), len);
        } else if (status == V1.STS_OK && op == WireHeader.ATOMIC_RESP) {
            status = requester.landAtomic(qp, slot, WireHeader.u64(m, WireHeader.SWAP_ADD));
        }
        requester.answered(qp, slot, status);
        retry();
    }

    /** SQs stopped on a busy connection or the READ budget try again (from the loop, not inside a send). */
    void retry() {
        if (!requester.waitingForRoom() || retryScheduled) {
            return;
        }
        retryScheduled = true;
        port.loop().execute(retryTask);
    }

    private void runRetry() {
        retryScheduled = false;
        requester.retry();
    }

    @Override
    public void onWritable(int nodeId) {
        retry();
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
        retry();
    }

    /** The QP is flushed (moved to ERROR): answers still to come are ignored; its waiting requests fail. */
    void flush(QueuePair qp) {
        if (qp.outstanding != null && qp.sq != null) {
            qp.outstanding.givenUpBelow = qp.outstanding.nextSeq; // what is still queued is taken back
        }
        responder.failHeld(qp, V1.STS_RETRY_EXCEEDED);
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
        responder.releaseHeld(qp);
        if (qp.watched) {
            watched.remove(qp);
            qp.watched = false;
        }
    }

    void watch(QueuePair qp) {
        if (!qp.watched) {
            qp.watched = true;
            watched.add(qp);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Messages from peers

    @Override
    public void onMessage(int sourceNode, ByteBuf m) {
        try {
            if (m.readableBytes() < WireHeader.SIZE || !WireHeader.known(WireHeader.op(m))) {
                bad(sourceNode, "a message of " + m.readableBytes() + " bytes that is not an ionic request or reply");
                return;
            }
            if (WireHeader.isReply(WireHeader.op(m))) {
                onReply(sourceNode, m);
            } else {
                counters.inc(WireHeader.piece(m) ? RemoteCounter.PIECES_RECEIVED : RemoteCounter.REQUESTS_RECEIVED);
                responder.onRequest(sourceNode, m);
            }
        } finally {
            m.release();
        }
    }

    void bad(int node, String what) {
        counters.inc(RemoteCounter.BAD_MESSAGES);
        refusals.refuse("rdma-remote-message", "node " + node + " sent " + what);
    }

    // ---------------------------------------------------------------------------------------------
    // Time-outs

    /** The RDMA tick: held requests past their time, and requests whose answer has not come in 30 s. */
    void tick(long now) {
        boolean full = responder.tick(now);
        for (QueuePair qp : List.copyOf(watched)) {
            if (lif.queuePairs.get(qp.id) != qp) {
                forget(qp);
                continue;
            }
            responder.expire(qp, now, full);
            // Lost peer: the oldest unanswered request gives up after 30 s, and the ones behind it with it.
            Outstanding o = qp.outstanding;
            if (o != null && qp.sq != null) {
                boolean expired = false;
                for (int i = o.done; i != qp.sq.cons; i = (i + 1) & qp.sq.mask()) {
                    if (o.status[i] == Requester.PENDING && (expired || now - o.sinceNanos[i] >= REPLY_TIMEOUT_NANOS)) {
                        expired = true;
                        o.status[i] = V1.STS_RETRY_EXCEEDED;
                        counters.inc(RemoteCounter.TIMEOUTS);
                        readDone(qp.node, o.readAsked[i]);
                        o.readAsked[i] = 0;
                    }
                }
                if (expired) {
                    o.givenUpBelow = o.nextSeq; // all issued so far: those still queued are taken back
                    log.warn("QP {}: no answer from node {} for 30 s; its requests complete with retry-exceeded",
                            qp.id, qp.node);
                    requester.complete(qp);
                }
            }
            boolean idle = !responder.holds(qp) && (o == null || o.done == qp.sq.cons);
            if (idle) {
                qp.watched = false;
                watched.remove(qp);
            }
        }
        if (full) {
            refusals.refuse("rdma-remote-held-full", "requests waiting for a receive passed 64 MiB or 4096 messages"
                    + " for 0.5 s: those still waiting fail with RNR-retry-exceeded at once");
            responder.resume();
        }
        retry(); // a safety net: a route can change without a writability event
    }
}
