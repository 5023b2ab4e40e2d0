package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.DefaultChannelProgressivePromise;
import io.netty.channel.PendingWriteQueue;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.Ticker;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One mesh connection: the last handler of its pipeline, after the {@link FrameReader}. Everything here runs on the
 * node's event loop.
 *
 * <p>Send side: data and ordered control frames wait in a {@link PendingWriteQueue} (whose bytes count toward the
 * channel's write watermarks) and go down to the socket while fewer than {@link #IN_FLIGHT_LIMIT} bytes are
 * being written. A heartbeat and an answer to one each have a one-deep slot that is emptied before the queue, so
 * they go ahead of queued data; a second heartbeat while one waits is merged into it. Writes report progress, so
 * the send time-out sees partial writes of large frames. A data frame queued with a {@link Recall} is offered back
 * to its sender when it reaches the head of the queue; a frame the sender takes back is released unsent. Every
 * frame goes with the link's one {@link WriteTracker} as its promise, so a frame costs no promise or listener.
 */
final class MeshLink extends ChannelInboundHandlerAdapter {
    /** Bytes passed down to the socket at once; the rest waits in the queue, behind the priority slots. */
    static final int IN_FLIGHT_LIMIT = 128 * 1024;
    /**
     * A frame this long goes down at once when the connection has nothing else to write, instead of after the
     * sender's task: the socket takes it while the sender builds the next (the pieces of a long RDMA WRITE). One
     * system call per frame costs little next to copying this much.
     */
    static final int WRITE_AT_ONCE = 64 * 1024;

    enum Kind {
        /** A worker's connection to the manager. */
        UPLINK,
        /** The manager's end of a worker's connection. */
        DOWNLINK,
        /** Worker to worker, opened by this (lower id) links. */
        DIRECT_OUT,
        /** Worker to worker, accepted by this (higher id) links. */
        DIRECT_IN
    }

    /** What the health check found a connection needs ({@link #health}). */
    enum Health {
        FINE,
        /** Heard nothing for an interval: a heartbeat was put in its slot. */
        HEARTBEAT_SENT,
        /** Data queued and nothing sent for the send time-out. */
        SEND_TIMED_OUT,
        /** Connected, but the peer did not authenticate in three intervals. */
        AUTH_TIMED_OUT,
        /** Connected, but the handshake did not complete in three intervals. */
        HANDSHAKE_TIMED_OUT,
        /** Heard nothing for three intervals while reading. */
        SILENT
    }

    private final Links links;
    private final Kind kind;
    /** For DIRECT_OUT: the peer it is meant to reach. */
    private final int expectedPeer;
    private final Ticker ticker;

    private ChannelHandlerContext ctx;
    private Channel channel;
    private int peerId = -1;
    /**
     * The peer proved it holds the mesh's secret ({@link AuthHandshake}), or the node has none. Until then the
     * link says nothing and hears nothing.
     */
    private boolean authenticated;
    /** Handshake (registration or HELLO) done. */
    private boolean open;
    private long lastReadNanos;
    private long lastHeartbeatNanos;
    /** When the TCP connection came up (the handshake time-out counts from here). */
    private long activeNanos;
    private long lastProgressNanos;
    private PendingWriteQueue queue;
    /** The promise of every frame this link queues or writes down ({@link WriteTracker}). */
    private WriteTracker tracker;
    /** Each queued frame's {@link #entry}, in queue order (a reply's bytes are counted until it is written). */
    private final IntRing queuedFrames = new IntRing();
    /** Each frame passed down to the channel and not yet written, its {@link #entry}, oldest first. */
    private final IntRing writtenFrames = new IntRing();
    /**
     * Queued frames that can be taken back, in queue order, three entries each: the frame, its {@link Recall} and
     * its payload. Frames without one (control, relayed) have no entry, so the head entry names its frame.
     */
    private final ArrayDeque<Object> recallable = new ArrayDeque<>();
    private long inFlight;
    /** Bytes of replies queued or being written: they have a room of their own ({@link MeshConfig#replyRoom}). */
    private long replyBytes;
    private boolean pumpScheduled;
    /** The pump run after a task that wrote (made once: a method reference per write would be an object each). */
    private final Runnable scheduledPump = () -> {
        pumpScheduled = false;
        pump();
    };
    private boolean heartbeatSlot;
    private boolean answerSlot;
    private boolean appPaused;
    private boolean relayPaused;
    /** Links whose reading the manager paused because a relay to this link found it unwritable. */
    private final List<MeshLink> relayWaiters = new ArrayList<>();

    MeshLink(Links links, Kind kind, int expectedPeer, Ticker ticker) {
        this.links = links;
        this.kind = kind;
        this.expectedPeer = expectedPeer;
        this.ticker = ticker;
        this.lastReadNanos = ticker.nanoTime();
        this.lastHeartbeatNanos = lastReadNanos;
        this.authenticated = !links.authRequired();
    }

    Kind kind() {
        return kind;
    }

    /** For DIRECT_OUT: the peer it is meant to reach; -1 otherwise. */
    int expectedPeer() {
        return expectedPeer;
    }

    /** The peer's id once the handshake is done (the peer it is meant for, for DIRECT_OUT, before); -1 unknown. */
    int peerId() {
        return open || kind != Kind.DIRECT_OUT ? peerId : expectedPeer;
    }

    boolean isOpen() {
        return open;
    }

    /** The handshake is done: the connection carries {@code peer}'s traffic from now on. */
    void opened(int peer) {
        peerId = peer;
        open = true;
    }

    Channel channel() {
        return channel;
    }

    /** The peer's address, for logs. */
    Object remote() {
        return channel == null ? null : channel.remoteAddress();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.channel = ctx.channel();
        this.queue = new PendingWriteQueue(ctx);
        this.tracker = new WriteTracker(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        lastReadNanos = ticker.nanoTime();
        activeNanos = lastReadNanos;
        lastHeartbeatNanos = lastReadNanos;
        if (authenticated) {
            links.linkActive(this);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt != AuthHandshake.AUTHENTICATED) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        // The registration or HELLO gets its own three intervals from here.
        authenticated = true;
        lastReadNanos = ticker.nanoTime();
        activeNanos = lastReadNanos;
        lastHeartbeatNanos = lastReadNanos;
        links.linkActive(this);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (!ctx.channel().isActive()) {
            // Closed (a protocol error in an earlier frame of the same read): the frames the reader still cuts from it
            // are the closed peer's and are dropped unread, so one read cannot log or count thousands of errors.
            frame.release();
            return;
        }
        lastReadNanos = ticker.nanoTime();
        try {
            links.onFrame(this, frame);
        } catch (RuntimeException e) {
            links.protocolError(this, e.toString());
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        queue.removeAndFailAll(new ClosedChannelException());
        // The failed writes are not counted one by one (the tracker ignores failures): the link is finished.
        queuedFrames.clear();
        writtenFrames.clear();
        inFlight = 0;
        replyBytes = 0;
        recallable.clear();
        heartbeatSlot = false;
        answerSlot = false;
        releaseRelayWaiters();
        links.linkClosed(this);
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (channel.isWritable()) {
            releaseRelayWaiters();
            links.linkWritable(this);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) {
            links.protocolError(this, cause.getMessage());
        } else if (cause instanceof IOException) {
            MeshNode.log.debug("mesh {}: {} {}: {}", links.describe(), kind, channel.remoteAddress(), cause.toString());
            ctx.close();
        } else {
            links.warnings().warn("link-failed", "mesh {}: {} {} failed", links.describe(), kind,
                    channel.remoteAddress(), cause);
            ctx.close();
        }
    }

    boolean isActive() {
        return channel != null && channel.isActive();
    }

    boolean isWritable() {
        return channel.isWritable();
    }

    /** Something is queued or being written. */
    boolean busy() {
        return inFlight > 0 || heartbeatSlot || answerSlot || (queue != null && !queue.isEmpty());
    }

    /**
     * Checks the connection at {@code now}: whether to shut it down after {@code sendTimeout} of queued data going
     * nowhere, or close it when its authentication takes three intervals, its handshake three more, or it is silent
     * for three (unless this node
     * stopped reading it: that silence is its own doing). Sends a heartbeat itself after one quiet interval. The
     * caller closes (after logging why).
     */
    Health health(long now, long interval, long sendTimeout) {
        if (!isActive()) {
            return Health.FINE;
        }
        if (busy() && now - lastProgressNanos > sendTimeout) {
            return Health.SEND_TIMED_OUT;
        }
        if (!open) {
            if (now - activeNanos > 3 * interval) {
                return authenticated ? Health.HANDSHAKE_TIMED_OUT : Health.AUTH_TIMED_OUT;
            }
            return Health.FINE;
        }
        long quiet = now - lastReadNanos;
        if (quiet >= 3 * interval && !readingPaused()) {
            return Health.SILENT;
        }
        if (quiet >= interval && now - lastHeartbeatNanos >= interval) {
            heartbeat();
            return Health.HEARTBEAT_SENT;
        }
        return Health.FINE;
    }

    /** Nanoseconds since anything was read, for logs. */
    long quietNanos() {
        return ticker.nanoTime() - lastReadNanos;
    }

    /**
     * A relay from {@code sender} found this link unwritable: {@code sender} stops reading until this one drains
     * (or closes).
     */
    void holdBack(MeshLink sender) {
        if (!relayWaiters.contains(sender)) {
            sender.setRelayPaused(true);
            relayWaiters.add(sender);
        }
    }

    private void releaseRelayWaiters() {
        for (MeshLink w : relayWaiters) {
            w.setRelayPaused(false);
        }
        relayWaiters.clear();
    }

    /** Bytes this connection holds for sending: the queue plus the channel's outbound buffer. */
    long queuedBytes() {
        if (channel == null) {
            return 0;
        }
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return out == null ? 0 : out.totalPendingWriteBytes();
    }

    /** Bytes of replies this connection holds for sending (queued or being written). */
    long replyBytes() {
        return replyBytes;
    }

    /** Encodes {@code frame} and queues it behind earlier ones. */
    void write(Wire.Frame frame) {
        write(frame.encode(channel.alloc()));
    }

    /** Queues a frame behind earlier ones; the link takes it over. */
    void write(ByteBuf frame) {
        write(frame, null, null);
    }

    /**
     * Queues a frame behind earlier ones; the link takes it over. With a {@code recall}, the sender is asked about
     * {@code payload} (the frame's) when it reaches the head of the queue.
     */
    void write(ByteBuf frame, Recall recall, ByteBuf payload) {
        write(frame, recall, payload, false);
    }

    /**
     * Queues a reply frame behind earlier ones (in order with requests); the link takes it over. Its bytes count in
     * {@link #replyBytes} until they are written (or the connection closes).
     */
    void writeReply(ByteBuf frame) {
        write(frame, null, null, true);
    }

    private void write(ByteBuf frame, Recall recall, ByteBuf payload, boolean reply) {
        if (!isActive()) {
            frame.release();
            return;
        }
        boolean idle = !busy();
        if (idle) {
            lastProgressNanos = ticker.nanoTime();
        }
        int size = frame.readableBytes();
        if (reply) {
            replyBytes += size;
        }
        queue.add(frame, tracker);
        queuedFrames.add(entry(size, reply));
        if (recall != null) {
            recallable.add(frame);
            recallable.add(recall);
            recallable.add(payload);
        }
        if (idle && size >= WRITE_AT_ONCE) {
            pump();
            return;
        }
        // Writes made in one task go down together, after it: one flush (one system call) for a burst.
        if (!pumpScheduled) {
            pumpScheduled = true;
            ctx.executor().execute(scheduledPump);
        }
    }

    /** Puts a heartbeat in its slot, ahead of queued data; at most one waits. */
    void heartbeat() {
        if (!isActive() || heartbeatSlot) {
            return;
        }
        if (!busy()) {
            lastProgressNanos = ticker.nanoTime();
        }
        lastHeartbeatNanos = ticker.nanoTime();
        heartbeatSlot = true;
        pump();
    }

    /** Puts the answer to a heartbeat in its slot, ahead of queued data; at most one waits. */
    void answer() {
        if (!isActive() || answerSlot) {
            return;
        }
        if (!busy()) {
            lastProgressNanos = ticker.nanoTime();
        }
        answerSlot = true;
        pump();
    }

    /** Sends one frame and closes, for refusals. Nothing else is queued on a link that refuses. */
    void refuseAndClose(ByteBuf frame) {
        if (!isActive()) {
            frame.release();
            return;
        }
        ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
    }

    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    /** Stops or resumes reading for the application (receive-side back-pressure). */
    void setAppPaused(boolean paused) {
        appPaused = paused;
        applyAutoRead();
    }

    private void setRelayPaused(boolean paused) {
        relayPaused = paused;
        applyAutoRead();
    }

    /** Reading stopped on purpose: silence on this link is then not the peer's fault. */
    boolean readingPaused() {
        return appPaused || relayPaused;
    }

    private void applyAutoRead() {
        if (channel == null) {
            return;
        }
        boolean on = !readingPaused();
        if (channel.config().isAutoRead() != on) {
            channel.config().setAutoRead(on);
            if (on) {
                channel.read();
            }
        }
    }

    private void pump() {
        boolean wrote = false;
        while (isActive() && inFlight < IN_FLIGHT_LIMIT) {
            if (heartbeatSlot) {
                heartbeatSlot = false;
                writeDown(Wire.Heartbeat.REQUEST.encode(channel.alloc()));
            } else if (answerSlot) {
                answerSlot = false;
                writeDown(Wire.Heartbeat.ANSWER.encode(channel.alloc()));
            } else if (!queue.isEmpty()) {
                ByteBuf frame = (ByteBuf) queue.current();
                if (recallable.peekFirst() == frame && takenBack(frame)) {
                    continue;
                }
                int entry = queuedFrames.remove();
                inFlight += size(entry);
                writtenFrames.add(entry);
                queue.removeAndWrite();
            } else {
                break;
            }
            wrote = true;
        }
        if (wrote) {
            ctx.flush();
        }
    }

    /** Asks the sender of the head frame whether it takes it back; if so, drops it unsent. */
    private boolean takenBack(ByteBuf frame) {
        recallable.removeFirst();
        Recall recall = (Recall) recallable.removeFirst();
        ByteBuf payload = (ByteBuf) recallable.removeFirst();
        int dst = Wire.dataDestination(frame);
        boolean back;
        try {
            back = recall.recalled(dst, payload);
        } catch (RuntimeException e) {
            MeshNode.log.warn("mesh {}: a sender's recall failed; the message goes out", links.describe(), e);
            back = false;
        }
        if (back) {
            // Never written, so never in flight (and never a reply): it only leaves the queue, released.
            queue.remove();
            queuedFrames.remove();
            links.takenBack(dst);
        }
        return back;
    }

    private void writeDown(ByteBuf frame) {
        int size = frame.readableBytes();
        inFlight += size;
        writtenFrames.add(entry(size, false));
        ctx.write(frame, tracker);
    }

    /** A frame's size and whether it is a reply, in one int (frames are shorter than 1 GiB). */
    private static int entry(int size, boolean reply) {
        return size << 1 | (reply ? 1 : 0);
    }

    private static int size(int entry) {
        return entry >>> 1;
    }

    /** The oldest frame passed down was written whole: its bytes leave {@link #inFlight}, and more may go. */
    private void frameWritten() {
        if (writtenFrames.isEmpty()) {
            return; // not one of this link's (cannot happen: only its frames carry the tracker)
        }
        int entry = writtenFrames.remove();
        inFlight -= size(entry);
        if ((entry & 1) != 0) {
            replyBytes -= size(entry);
        }
        lastProgressNanos = ticker.nanoTime();
        pump();
    }

    /**
     * The promise of every frame the link writes, one for the link's life: Netty reports each frame's progress and
     * its end to the frame's promise, in the order the frames were written, and this one turns those reports into
     * the link's accounting ({@link #frameWritten}, {@link #lastProgressNanos}) instead of completing. So it is never
     * done, and a write costs no promise and no listener. A failed write means the channel is closing, and
     * {@link #channelInactive} settles the accounting then; so is a frame taken back from the queue (never written)
     * nothing to it.
     */
    private final class WriteTracker extends DefaultChannelProgressivePromise {
        WriteTracker(ChannelHandlerContext ctx) {
            super(ctx.channel(), ctx.executor());
        }

        @Override
        public boolean trySuccess(Void result) {
            frameWritten();
            return true;
        }

        @Override
        public ChannelProgressivePromise setSuccess(Void result) {
            frameWritten();
            return this;
        }

        @Override
        public boolean tryFailure(Throwable cause) {
            return true;
        }

        @Override
        public ChannelProgressivePromise setFailure(Throwable cause) {
            return this;
        }

        @Override
        public boolean tryProgress(long progress, long total) {
            lastProgressNanos = ticker.nanoTime();
            return true;
        }

        @Override
        public ChannelProgressivePromise setProgress(long progress, long total) {
            lastProgressNanos = ticker.nanoTime();
            return this;
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return false; // shared by every frame: nothing may end it
        }
    }
}
