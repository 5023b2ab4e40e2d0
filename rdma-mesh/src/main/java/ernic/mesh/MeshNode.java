package ernic.mesh;

import ernic.counters.CounterRegistry;
import ernic.counters.OncePerCause;
import ernic.counters.Counters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.PromiseCombiner;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * A node of the server mesh: the manager (node 0) or a worker. It runs entirely on the event loop it is given
 * (the device's), as Netty channels and scheduled tasks; its state is touched only there, so it has no locks.
 * Time is the loop's {@link Ticker}.
 *
 * <p>This is the facade: sockets, the health check, sending and counters, alike for both roles. What differs is
 * a {@link Side}: {@link ManagerSide} (the {@link ManagerTable}, relay) or {@link WorkerSide} (registration, the
 * topology, the {@link WorkerDialer}). The {@link Router} picks a message's connection, the {@link GidTable}
 * answers who owns a GID, and {@link Wire} reads and writes every frame.
 *
 * <p>{@link #send} and the listener callbacks run on the loop. The query methods may be called from any thread
 * (they hop to the loop and wait), except from another loop's thread that this loop waits on.
 */
public final class MeshNode {
    static final Logger log = LoggerFactory.getLogger(MeshNode.class);
    /** A warning cause that goes on is summarised once per this interval (docs/reliability.md). */
    static final long SUMMARY_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(10);

    public enum Role { MANAGER, WORKER }

    /**
     * Buffers of every mesh connection and of the messages the application builds ({@link #alloc()}): pooled in
     * 16 MiB chunks, so a message of up to 16 MiB reuses memory already mapped instead of allocating (and
     * faulting in) a fresh buffer per message, as Netty's default allocator does above its pooled sizes.
     */
    private static final ByteBufAllocator POOL = new PooledByteBufAllocator(true, 0, 1, 8192, 11, 0, 0, true);

    private final Role role;
    private final EventLoop loop;
    private final Ticker ticker;
    private final MeshConfig config;
    private final Transport transport;
    private final long nonce;
    private final int listenPort;
    private final long intervalNanos;
    private final long sendTimeoutNanos;
    private final ByteBufAllocator alloc = POOL;
    private final Listeners listeners = new Listeners(this::describe);
    private final GidTable gids = new GidTable(listeners::gidOwnership);
    private final Router router = new Router(id -> side().isAlive(id));
    private final Counters<MeshCounter> counters = new Counters<>(MeshCounter.class);
    private final PeerCounters peers = new PeerCounters();
    private final Side side;
    private final Links links = new Links(this, counters);
    private final MeshAuth auth;
    private final Sockets sockets;
    /** WARN lines of connections that fail again and again (reconnect loops): one per cause, then a summary. */
    private final OncePerCause warnings;

    private int nodeId = -1;
    private boolean started;
    private boolean closed;
    private Channel server;
    private int boundPort;
    private ScheduledFuture<?> healthTask;
    /** The GIDs this node was told (declared); {@link #learned} has those it learned from its guest. */
    private Set<Gid> ownGids = Set.of();
    private final LearnedGids learned;
    private boolean claimScheduled;

    private MeshNode(Role role, EventLoopGroup group, MeshConfig config, MeshAddress managerAddress, int listenPort) {
        this.role = role;
        this.loop = group.next();
        this.ticker = loop.ticker();
        this.config = config;
        this.transport = Transport.forLoop(loop);
        this.nonce = config.instanceNonce() != 0 ? config.instanceNonce() : randomNonce();
        this.listenPort = listenPort;
        this.intervalNanos = config.heartbeatInterval().toNanos();
        this.warnings = new OncePerCause(log, ticker::nanoTime, SUMMARY_INTERVAL_NANOS);
        this.learned = new LearnedGids(counters, ticker::nanoTime, this::claimChanged);
        SideParts parts = new SideParts(new Self(), links, router, gids, peers, listeners, counters, config, ticker,
                warnings);
        this.side = role == Role.MANAGER ? new ManagerSide(parts, alloc, loop)
                : new WorkerSide(parts, new WorkerDialer(parts, new Dial(), this::runOnLoop, managerAddress));
        this.sendTimeoutNanos = side.sendTimeoutNanos(config.sendTimeout().toNanos());
        this.auth = new MeshAuth(config.secret(), counters, this::describe);
        this.sockets = new Sockets(this);
    }

    private static long randomNonce() {
        long n;
        do {
            n = new SecureRandom().nextLong();
        } while (n == 0);
        return n;
    }

    // ---------------------------------------------------------------- creation

    /** The manager, node 0, listening on {@code listenPort} (0 picks a free port). */
    public static MeshNode manager(EventLoopGroup loop, int listenPort) {
        return manager(loop, listenPort, MeshConfig.defaults());
    }

    public static MeshNode manager(EventLoopGroup loop, int listenPort, MeshConfig config) {
        return new MeshNode(Role.MANAGER, loop, config, null, listenPort);
    }

    /** A worker of the manager at {@code managerHost} (name or literal, IPv6 without brackets) and port. */
    public static MeshNode worker(EventLoopGroup loop, String managerHost, int managerPort) {
        return worker(loop, new MeshAddress(managerHost, managerPort), MeshConfig.defaults());
    }

    public static MeshNode worker(EventLoopGroup loop, String managerHost, int managerPort, MeshConfig config) {
        return worker(loop, new MeshAddress(managerHost, managerPort), config);
    }

    /** A worker of the manager at {@code managerHostPort}: {@code host:port}, {@code [::1]:5000}, {@code [fe80::1%eth0]:5000}. */
    public static MeshNode worker(EventLoopGroup loop, String managerHostPort, MeshConfig config) {
        return worker(loop, MeshAddress.parse(managerHostPort), config);
    }

    /** A worker of the manager at {@code manager}, e.g. {@code MeshAddress.parse("[fe80::1%eth0]:5000")}. */
    public static MeshNode worker(EventLoopGroup loop, MeshAddress manager, MeshConfig config) {
        return new MeshNode(Role.WORKER, loop, config, manager, config.listenPort());
    }

    public MeshNode addListener(MeshListener listener) {
        listeners.add(listener);
        return this;
    }

    public MeshNode removeListener(MeshListener listener) {
        listeners.remove(listener);
        return this;
    }

    /** Binds the listening socket (and, on a worker, starts connecting to the manager). */
    public Future<Void> start() {
        Promise<Void> p = loop.newPromise();
        loop.execute(() -> doStart(p));
        return p;
    }

    /** Closes every connection and the listening socket. */
    public Future<Void> close() {
        Promise<Void> p = loop.newPromise();
        try {
            loop.execute(() -> {
                PromiseCombiner all = new PromiseCombiner(loop);
                for (Channel ch : doClose()) {
                    all.add(ch.closeFuture());
                }
                all.finish(p);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            p.setSuccess(null);
        }
        return p;
    }

    private void doStart(Promise<Void> p) {
        if (started) {
            p.setFailure(new IllegalStateException("already started"));
            return;
        }
        started = true;
        InetSocketAddress bind = config.bindHost() == null
                ? new InetSocketAddress(listenPort)
                : new InetSocketAddress(config.bindHost(), listenPort);
        sockets.listen(bind, () -> newLink(side.accepts, -1)).addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                log.error("mesh {}: cannot listen on {}", describe(), bind, f.cause());
                p.setFailure(f.cause());
                return;
            }
            server = f.channel();
            boundPort = ((InetSocketAddress) server.localAddress()).getPort();
            long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(intervalNanos, sendTimeoutNanos) / 4);
            healthTask = loop.scheduleAtFixedRate(this::tick, tick, tick, TimeUnit.NANOSECONDS);
            side.started();
            auth.logStart(boundPort);
            p.setSuccess(null);
        });
    }

    /** Closes everything; returns the channels being closed. */
    private List<Channel> doClose() {
        List<Channel> closing = new ArrayList<>();
        if (closed) {
            return closing;
        }
        closed = true;
        if (healthTask != null) {
            healthTask.cancel(false);
        }
        if (server != null) {
            closing.add(server);
            server.close();
        }
        closing.addAll(links.closeAll());
        return closing;
    }

    private MeshLink newLink(MeshLink.Kind kind, int expectedPeer) {
        return new MeshLink(links, kind, expectedPeer, ticker);
    }

    // ---------------------------------------------------------------- public API

    public Role role() {
        return role;
    }

    public EventLoop eventLoop() {
        return loop;
    }

    /** This instance's identity, sent at registration. */
    public long instanceNonce() {
        return nonce;
    }

    /** This node's id: 0 on the manager, -1 on a worker not yet registered. */
    public int nodeId() {
        return onLoop(() -> nodeId);
    }

    /** The port this node listens on (after {@link #start}). */
    public int localPort() {
        return onLoop(() -> boundPort);
    }

    /**
     * Sends {@code payload} to {@code dst}: on the direct connection if there is one, else by way of the manager.
     * Must run on the node's event loop. The mesh takes the payload over only when it answers
     * {@link SendResult#QUEUED}.
     */
    public SendResult send(int dst, ByteBuf payload) {
        return send(dst, payload, false, null, false);
    }

    /**
     * Sends {@code payload} to {@code dst} like {@link #send(int, ByteBuf)}, and lets the sender take it back while it
     * still waits on its connection: {@code recall} is asked when the payload reaches the head of the queue, just
     * before it would be written (see {@link Recall}).
     */
    public SendResult send(int dst, ByteBuf payload, Recall recall) {
        return send(dst, payload, false, recall, false);
    }

    /**
     * Sends a reply to a request {@code dst} made: like {@link #send}, but replies have a room of their own on the
     * connection, {@link MeshConfig#replyRoom} bytes however many requests it holds (a reply is queued while the
     * replies it holds, this one included, fit in it), since the node cannot wait for the requester to read on.
     * BUSY means the reply should be dropped.
     */
    public SendResult sendReply(int dst, ByteBuf payload) {
        return send(dst, payload, true, null, false);
    }

    /**
     * Sends a later piece of a message whose first piece {@link #send(int, ByteBuf, Recall)} took, behind it: queued
     * however full the connection is (the sender was let in for the whole message and must not be cut off in the
     * middle of it), so never BUSY. The connection's watermarks hold back the sender's next message instead.
     */
    public SendResult sendMore(int dst, ByteBuf payload, Recall recall) {
        return send(dst, payload, false, recall, true);
    }

    private SendResult send(int dst, ByteBuf payload, boolean reply, Recall recall, boolean more) {
        requireLoop("send");
        int max = maxPayload();
        if (payload.readableBytes() > max) {
            throw new IllegalArgumentException("payload of " + payload.readableBytes() + " bytes, most is " + max);
        }
        MeshLink l = routeFromHere(dst);
        if (l == null) {
            return SendResult.NO_ROUTE;
        }
        int len = payload.readableBytes();
        if (reply ? l.replyBytes() + len + Wire.DATA_OVERHEAD > config.replyRoom() : !more && !l.isWritable()) {
            return SendResult.BUSY;
        }
        if (reply) {
            l.writeReply(Wire.data(alloc, nodeId, dst, payload));
        } else {
            l.write(Wire.data(alloc, nodeId, dst, payload), recall, payload);
        }
        Counters<PeerCounter> pc = peers.of(dst);
        pc.add(PeerCounter.BYTES_SENT, len);
        pc.inc(PeerCounter.MESSAGES_SENT);
        if (l == router.uplink() && dst != Router.MANAGER) {
            pc.inc(PeerCounter.RELAYED_MESSAGES);
            pc.add(PeerCounter.RELAYED_BYTES, len);
        }
        return SendResult.QUEUED;
    }

    /**
     * What {@link #send} to {@code dst} would answer now for a small payload, without sending: lets a caller
     * skip building a message that would only be BUSY. Must run on the node's event loop.
     */
    public SendResult probe(int dst) {
        requireLoop("probe");
        MeshLink l = routeFromHere(dst);
        return l == null ? SendResult.NO_ROUTE : l.isWritable() ? SendResult.QUEUED : SendResult.BUSY;
    }

    private MeshLink routeFromHere(int dst) {
        return closed || nodeId < 0 || dst == nodeId ? null : router.route(dst);
    }

    private void requireLoop(String what) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("MeshNode." + what + " must run on the node's event loop");
        }
    }

    /** The allocator of this node's connections (pooled, direct). */
    public ByteBufAllocator alloc() {
        return alloc;
    }

    /**
     * An empty buffer for a payload of up to {@code bytes} to {@link #send} (pooled, direct), with room before
     * it for the frame header: the frame then goes to the socket as one buffer, with nothing allocated around
     * it. Send it once (a second send would find its header room taken).
     */
    public ByteBuf message(int bytes) {
        ByteBuf b = alloc.directBuffer(Wire.DATA_OVERHEAD + bytes);
        return b.setIndex(Wire.DATA_OVERHEAD, Wire.DATA_OVERHEAD);
    }

    /** The largest payload {@link #send} takes: what fits a frame of {@link MeshConfig#maxFrameLength()}. */
    public int maxPayload() {
        return config.maxFrameLength() - Wire.DATA_OVERHEAD;
    }

    /** Whether a send to {@code dst} has a route now (it may still be BUSY). */
    public boolean hasRoute(int dst) {
        return onLoop(() -> routeFromHere(dst) != null);
    }

    /** Whether the send to {@code dst} would go on its own connection (not by way of the manager). */
    public boolean hasDirectConnection(int dst) {
        return onLoop(() -> router.isDirect(dst));
    }

    /**
     * Replaces the set of GIDs this node declares (ERNIC_TCP_GUEST_GIDS and the station MAC's link-local one) and
     * claims them with those it learned. The manager decides who owns what and fans it out to every node (see
     * {@link GidClaims}): until then none of them is this node's.
     */
    public void advertiseGids(Set<Gid> gids) {
        int most = Wire.MAX_GIDS_PER_NODE - Wire.MAX_LEARNED_GIDS;
        if (gids.size() > most) {
            throw new IllegalArgumentException("at most " + most + " declared GIDs per node");
        }
        Set<Gid> copy = Collections.unmodifiableSet(new LinkedHashSet<>(gids));
        runOnLoop(() -> {
            ownGids = copy;
            learned.declared(copy);
            claimChanged();
        });
    }

    /**
     * The guest sent {@code hi:lo} (a GID in two big-endian halves) as its own source address: in a frame it
     * transmitted or a header template it wrote. A new one, if {@link Gid#learnable}, is learned and claimed (at most
     * 64; see docs/mesh.md); a known one is marked used, so it does not age. Returns whether the GID is this node's
     * claim now. On the node's loop only; allocates nothing for a GID already known (the transmit path calls it).
     */
    public boolean learnGid(long hi, long lo) {
        requireLoop("learnGid");
        return learned.seen(hi, lo);
    }

    /**
     * Tells the node which GIDs its guest uses in live QPs and AHs: a learned GID for which {@code inUse} answers
     * true does not age out. Null: none. The predicate runs on the loop, at most once a second per aged GID.
     */
    public void gidsInUse(java.util.function.Predicate<Gid> inUse) {
        runOnLoop(() -> learned.inUse(inUse));
    }

    /** The GIDs this node learned from its guest (a snapshot). */
    public Set<Gid> learnedGids() {
        return onLoop(learned::set);
    }

    /** What this node claims changed: it goes to the manager (or is decided, on the manager) after this task. */
    private void claimChanged() {
        if (!claimScheduled && !closed) {
            claimScheduled = true;
            loop.execute(() -> {
                claimScheduled = false;
                if (!closed && nodeId >= 0) {
                    side.advertised(ownGids, learned.set());
                }
            });
        }
    }

    /** {@link #advertiseGids} for raw GIDs, 16 bytes each in network byte order. */
    public void advertiseGidBytes(Collection<byte[]> gids) {
        Set<Gid> set = new LinkedHashSet<>();
        for (byte[] g : gids) {
            set.add(Gid.of(g));
        }
        advertiseGids(set);
    }

    /** The node that owns {@code gid}, by exact match. */
    public OptionalInt ownerOf(Gid gid) {
        return onLoop(() -> gids.owner(gid));
    }

    public OptionalInt ownerOf(byte[] gid) {
        return ownerOf(Gid.of(gid));
    }

    /** The GID → node table as this node knows it. */
    public Map<Gid, Integer> gidTable() {
        return onLoop(gids::snapshot);
    }

    /** The topology as this node knows it, by node id. */
    public List<NodeInfo> topology() {
        return onLoop(side::topology);
    }

    public boolean isAlive(int node) {
        return onLoop(() -> side.isAlive(node));
    }

    /**
     * Stops ({@code false}) or resumes reading from the connection that carries {@code peer}'s direct traffic
     * (the manager connection for peer 0, or on the manager the worker's connection). Receive-side back-pressure:
     * the peer's sends then queue up on its side and stop at its watermark.
     */
    public void setReceiving(int peer, boolean on) {
        onLoop(() -> {
            MeshLink l = router.connectionTo(peer);
            if (l != null) {
                l.setAppPaused(!on);
            }
            return null;
        });
    }

    /**
     * Stops or resumes reading on every connection this node has now (the receive side is full, whoever sent).
     * Heartbeats still go out, and silence on a connection not being read is not held against the peer.
     */
    public void setReceivingFromAll(boolean on) {
        onLoop(() -> {
            for (MeshLink l : links.all()) {
                if (l.isOpen()) {
                    l.setAppPaused(!on);
                }
            }
            return null;
        });
    }

    /** Bytes queued for sending on the connection that carries traffic to {@code peer} (0 when none). */
    public long queuedBytes(int peer) {
        return onLoop(() -> {
            MeshLink l = router.route(peer);
            return l == null ? 0L : l.queuedBytes();
        });
    }

    /** The node-wide counters, registered under {@code mesh.node.}. Read them on the node's loop. */
    public Counters<MeshCounter> counterSet() {
        return counters;
    }

    /**
     * Registers the node's counters in {@code r}: {@code mesh.node.} (the node) and the family {@code mesh.peer.}
     * labelled {@code peer}. On the node's loop.
     */
    public void registerCounters(CounterRegistry r) {
        r.register(NODE_PREFIX, counters);
        r.registerFamily(PEER_PREFIX, "peer", this::peerCounterSets);
    }

    /** The registry prefixes of the node's counters and of the per-peer family. */
    public static final String NODE_PREFIX = "mesh.node.", PEER_PREFIX = "mesh.peer.";

    /**
     * The per-peer counter sets by peer id (as a string), for a family labelled {@code peer}; the queue depths are
     * set as of now. The live sets: on the node's loop only.
     */
    public Map<String, Counters<PeerCounter>> peerCounterSets() {
        requireLoop("peerCounterSets");
        return peers.sets(router);
    }

    /**
     * Per-peer counters: bytesSent, messagesSent, bytesReceived, messagesReceived, queueDepth, reconnects, relayed,
     * takenBack (a snapshot of {@link #peerCounterSets()}).
     */
    public Map<Integer, Map<String, Long>> peerCounters() {
        return onLoop(() -> {
            Map<Integer, Map<String, Long>> m = new TreeMap<>();
            peerCounterSets().forEach((id, c) -> m.put(Integer.valueOf(id), PeerCounters.view(c)));
            return m;
        });
    }

    /**
     * The node's counters under their registry names ({@code mesh.node.*}; a snapshot). Each peer's are in
     * {@link #peerCounters()}.
     */
    public Map<String, Long> counters() {
        return onLoop(() -> {
            CounterRegistry r = new CounterRegistry();
            r.register(NODE_PREFIX, counters);
            return r.totals();
        });
    }

    @Override
    public String toString() {
        return "MeshNode[" + describe() + "]";
    }

    // ---------------------------------------------------------------- test hooks

    /** Closes the worker's manager connection, as if the network had dropped it. */
    void dropManagerConnection() {
        runOnLoop(() -> {
            if (router.uplink() != null) {
                router.uplink().close();
            }
        });
    }

    /** The connection that carries traffic to {@code peer} now, or null, for tests. */
    MeshLink link(int peer) {
        return onLoop(() -> router.route(peer));
    }

    /** The channel to {@code peer} (direct, the manager's, or on the manager the worker's), for tests. */
    Channel channelTo(int peer) {
        return onLoop(() -> {
            MeshLink l = router.connectionTo(peer);
            return l == null ? null : l.channel();
        });
    }

    // ---------------------------------------------------------------- for the sides

    /** This node as its {@link Side} sees it. */
    private final class Self implements ThisNode {
        @Override
        public int id() {
            return nodeId;
        }

        @Override
        public void setId(int id) {
            nodeId = id;
        }

        @Override
        public long instanceNonce() {
            return nonce;
        }

        @Override
        public int boundPort() {
            return boundPort;
        }

        @Override
        public String describe() {
            return MeshNode.this.describe();
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public Set<Gid> declaredGids() {
            return ownGids;
        }

        @Override
        public Set<Gid> learnedGids() {
            return learned.set();
        }
    }

    /** How a worker's dialer makes its connections: links of this node, on its sockets. */
    private final class Dial implements WorkerDialer.Dial {
        @Override
        public MeshLink newLink(MeshLink.Kind kind, int expectedPeer) {
            return MeshNode.this.newLink(kind, expectedPeer);
        }

        @Override
        public ChannelFuture connect(InetSocketAddress target, MeshLink link) {
            return sockets.connect(target, link);
        }
    }

    // ---------------------------------------------------------------- for Links and Sockets

    Side side() {
        return side;
    }

    Ticker ticker() {
        return ticker;
    }

    OncePerCause warnings() {
        return warnings;
    }

    MeshConfig config() {
        return config;
    }

    Listeners listeners() {
        return listeners;
    }

    Links links() {
        return links;
    }

    MeshAuth auth() {
        return auth;
    }

    PeerCounters peers() {
        return peers;
    }

    boolean isClosed() {
        return closed;
    }

    String describe() {
        if (role == Role.MANAGER) {
            return "manager";
        }
        return nodeId < 0 ? "worker (unregistered)" : "worker " + nodeId;
    }

    // ---------------------------------------------------------------- loop plumbing

    private <T> T onLoop(Callable<T> c) {
        if (loop.inEventLoop()) {
            try {
                return c.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return loop.submit(c).syncUninterruptibly().getNow();
    }

    private void runOnLoop(Runnable r) {
        if (loop.inEventLoop()) {
            r.run();
        } else {
            loop.execute(r);
        }
    }

    // ---------------------------------------------------------------- health

    private void tick() {
        if (closed) {
            return;
        }
        try {
            health(ticker.nanoTime());
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again; keep the health check alive.
            log.error("mesh {}: health check failed", describe(), e);
        }
    }

    private void health(long now) {
        links.health(now, intervalNanos, sendTimeoutNanos);
        side.tick(now);
        learned.tick(now);
    }

}
