package ernic.mesh;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.PromiseCombiner;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A node of the server mesh: the manager (node 0) or a worker. It runs entirely on the event loop it is given
 * (the device's), as Netty channels and scheduled tasks; its state is touched only there, so it has no locks.
 *
 * <p>The manager accepts workers, gives them ids in arrival order (never one twice; a returning instance, known
 * by the nonce it sends, keeps its id), broadcasts the topology and fans out GID ownership. Workers connect
 * directly to each other (the lower id connects to the higher); a payload for a node with no direct connection
 * goes by way of the manager. Every connection carries heartbeats, sent ahead of queued data, and is dropped
 * after three silent intervals; one whose peer stops reading is shut down after the send time-out.
 *
 * <p>{@link #send} and the listener callbacks run on the loop. The query methods may be called from any thread
 * (they hop to the loop and wait), except from another loop's thread that this loop waits on.
 */
public final class MeshNode {
    static final Logger log = LoggerFactory.getLogger(MeshNode.class);

    public enum Role { MANAGER, WORKER }

    /** The manager's view of one node. */
    private static final class Entry {
        final int id;
        final long nonce;
        InetSocketAddress address;
        boolean alive;
        long deadSinceNanos;
        MeshLink link;

        Entry(int id, long nonce) {
            this.id = id;
            this.nonce = nonce;
        }
    }

    private final Role role;
    private final EventLoop loop;
    private final MeshConfig config;
    private final Transport transport;
    private final long nonce;
    private final MeshAddress managerAddress;
    private final int listenPort;
    private final long intervalNanos;
    private final long sendTimeoutNanos;
    /**
     * Buffers of every mesh connection and of the messages the application builds ({@link #alloc()}): pooled in
     * 16 MiB chunks, so a message of up to 16 MiB reuses memory already mapped instead of allocating (and
     * faulting in) a fresh buffer per message, as Netty's default allocator does above its pooled sizes.
     */
    private static final ByteBufAllocator POOL = new PooledByteBufAllocator(true, 0, 1, 8192, 11, 0, 0, true);
    private final ByteBufAllocator alloc = POOL;
    private final List<MeshListener> listeners = new CopyOnWriteArrayList<>();

    private int nodeId = -1;
    private boolean started;
    private boolean closed;
    private Channel server;
    private int boundPort;
    private ScheduledFuture<?> ticker;
    private final Set<MeshLink> links = new LinkedHashSet<>();

    // Topology and GID ownership, on both roles.
    private final TreeMap<Integer, NodeInfo> topology = new TreeMap<>();
    private final Map<Integer, Set<Gid>> gidsByNode = new HashMap<>();
    private final Map<Gid, Integer> owners = new HashMap<>();
    private Set<Gid> ownGids = Set.of();

    // Manager.
    private final TreeMap<Integer, Entry> table = new TreeMap<>();
    private int nextId = 1;
    private boolean topologyDirty;
    private final Set<Integer> dirtyGids = new TreeSet<>();
    private boolean broadcastScheduled;

    // Worker.
    private MeshLink uplink;
    private boolean uplinkConnecting;
    private long nextUplinkAttempt;
    private final Map<Integer, MeshLink> direct = new HashMap<>();
    private final Set<Integer> directConnecting = new HashSet<>();
    private final Map<Integer, Long> nextDirectAttempt = new HashMap<>();

    // Counters.
    private final Map<Integer, PeerCounters> peers = new TreeMap<>();
    private long refusedHandshakes;
    private long protocolErrors;
    private long sendTimeouts;
    private long registrationsRefused;
    private long evictions;
    private long relayDropped;
    private long heartbeatsSent;
    private long heartbeatsReceived;
    private long silentConnectionsClosed;
    private long gidRecordsSent;
    private long gidRecordsReceived;

    private MeshNode(Role role, EventLoopGroup group, MeshConfig config, MeshAddress managerAddress, int listenPort) {
        this.role = role;
        this.loop = group.next();
        this.config = config;
        this.transport = Transport.forLoop(loop);
        this.nonce = config.instanceNonce() != 0 ? config.instanceNonce() : randomNonce();
        this.managerAddress = managerAddress;
        this.listenPort = listenPort;
        this.intervalNanos = config.heartbeatInterval().toNanos();
        long timeout = config.sendTimeout().toNanos();
        this.sendTimeoutNanos = role == Role.MANAGER ? timeout / 2 : timeout;
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
        ServerBootstrap b = new ServerBootstrap()
                .group(loop)
                .channel(transport.server())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, alloc)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark())
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        MeshLink link = new MeshLink(MeshNode.this,
                                role == Role.MANAGER ? MeshLink.Kind.DOWNLINK : MeshLink.Kind.DIRECT_IN, -1);
                        initPipeline(ch, link);
                    }
                });
        if (config.socketBufferBytes() > 0) {
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
            b.childOption(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
            b.childOption(ChannelOption.SO_SNDBUF, config.socketBufferBytes());
        }
        InetSocketAddress bind = config.bindHost() == null
                ? new InetSocketAddress(listenPort)
                : new InetSocketAddress(config.bindHost(), listenPort);
        b.bind(bind).addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                log.error("mesh {}: cannot listen on {}", describe(), bind, f.cause());
                p.setFailure(f.cause());
                return;
            }
            server = f.channel();
            boundPort = ((InetSocketAddress) server.localAddress()).getPort();
            long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(intervalNanos, sendTimeoutNanos) / 4);
            ticker = loop.scheduleAtFixedRate(this::tick, tick, tick, TimeUnit.NANOSECONDS);
            if (role == Role.MANAGER) {
                nodeId = 0;
                Entry self = new Entry(0, nonce);
                self.alive = true;
                table.put(0, self);
                applyGids(0, ownGids);
                refreshTopology();
                log.info("mesh manager: listening on {}", server.localAddress());
            } else {
                log.info("mesh worker: listening on {}, manager {}", server.localAddress(), managerAddress);
                nextUplinkAttempt = System.nanoTime();
                connectManager();
            }
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
        if (ticker != null) {
            ticker.cancel(false);
        }
        if (server != null) {
            closing.add(server);
            server.close();
        }
        for (MeshLink l : new ArrayList<>(links)) {
            if (l.channel != null) {
                closing.add(l.channel);
            }
            l.close();
        }
        return closing;
    }

    private WriteBufferWaterMark waterMark() {
        return new WriteBufferWaterMark(config.writeBufferLow(), config.writeBufferHigh());
    }

    private void initPipeline(Channel ch, MeshLink link) {
        ch.pipeline().addLast(
                new LengthFieldBasedFrameDecoder(config.maxFrameLength(), 0, Wire.LENGTH_BYTES, 0, Wire.LENGTH_BYTES),
                link);
        links.add(link);
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
        return send(dst, payload, false, null);
    }

    /**
     * Sends {@code payload} to {@code dst} like {@link #send(int, ByteBuf)}, and lets the sender take it back while it
     * still waits on its connection: {@code recall} is asked when the payload reaches the head of the queue, just
     * before it would be written (see {@link Recall}).
     */
    public SendResult send(int dst, ByteBuf payload, Recall recall) {
        return send(dst, payload, false, recall);
    }

    /**
     * Sends a reply to a request {@code dst} made: like {@link #send}, but a reply has twice the room on its
     * connection (it is queued while the connection holds less than twice the high watermark), since the node
     * cannot wait for the requester to read on. BUSY means the reply should be dropped.
     */
    public SendResult sendReply(int dst, ByteBuf payload) {
        return send(dst, payload, true, null);
    }

    private SendResult send(int dst, ByteBuf payload, boolean reply, Recall recall) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("MeshNode.send must run on the node's event loop");
        }
        int max = maxPayload();
        if (payload.readableBytes() > max) {
            throw new IllegalArgumentException("payload of " + payload.readableBytes() + " bytes, most is " + max);
        }
        if (closed || nodeId < 0 || dst == nodeId) {
            return SendResult.NO_ROUTE;
        }
        MeshLink l = route(dst);
        if (l == null) {
            return SendResult.NO_ROUTE;
        }
        int len = payload.readableBytes();
        if (reply ? l.queuedBytes() + len > 2L * config.writeBufferHigh() : !l.isWritable()) {
            return SendResult.BUSY;
        }
        l.write(Wire.data(alloc, nodeId, dst, payload), recall, payload);
        PeerCounters pc = peer(dst);
        pc.bytesSent += len;
        pc.messagesSent++;
        if (l.kind == MeshLink.Kind.UPLINK && dst != 0) {
            pc.relayedMessages++;
            pc.relayedBytes += len;
        }
        return SendResult.QUEUED;
    }

    /**
     * What {@link #send} to {@code dst} would answer now for a small payload, without sending: lets a caller
     * skip building a message that would only be BUSY. Must run on the node's event loop.
     */
    public SendResult probe(int dst) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("MeshNode.probe must run on the node's event loop");
        }
        MeshLink l = closed || nodeId < 0 || dst == nodeId ? null : route(dst);
        return l == null ? SendResult.NO_ROUTE : l.isWritable() ? SendResult.QUEUED : SendResult.BUSY;
    }

    /** The allocator to build payloads for {@link #send} with (pooled, direct). */
    public ByteBufAllocator alloc() {
        return alloc;
    }

    /** The largest payload {@link #send} takes: what fits a frame of {@link MeshConfig#maxFrameLength()}. */
    public int maxPayload() {
        return config.maxFrameLength() - Wire.DATA_OVERHEAD;
    }

    /** Whether a send to {@code dst} has a route now (it may still be BUSY). */
    public boolean hasRoute(int dst) {
        return onLoop(() -> !closed && nodeId >= 0 && dst != nodeId && route(dst) != null);
    }

    /** Whether the send to {@code dst} would go on a direct connection (not by way of the manager). */
    public boolean hasDirectConnection(int dst) {
        return onLoop(() -> {
            MeshLink d = direct.get(dst);
            return d != null && d.open && d.isActive();
        });
    }

    /**
     * Replaces the set of GIDs this node owns and advertises it. The manager fans the change out to every node.
     */
    public void advertiseGids(Set<Gid> gids) {
        if (gids.size() > Wire.MAX_GIDS_PER_NODE) {
            throw new IllegalArgumentException("at most " + Wire.MAX_GIDS_PER_NODE + " GIDs per node");
        }
        Set<Gid> copy = Collections.unmodifiableSet(new LinkedHashSet<>(gids));
        runOnLoop(() -> {
            ownGids = copy;
            if (nodeId < 0) {
                return;
            }
            applyGids(nodeId, copy);
            if (role == Role.MANAGER) {
                dirtyGids.add(0);
                scheduleBroadcast();
            } else if (uplink != null && uplink.open) {
                uplink.write(Wire.gids(alloc, copy));
            }
        });
    }

    /** {@link #advertiseGids} for raw GIDs, 16 bytes each in network byte order. */
    public void advertiseGidBytes(java.util.Collection<byte[]> gids) {
        Set<Gid> set = new LinkedHashSet<>();
        for (byte[] g : gids) {
            set.add(Gid.of(g));
        }
        advertiseGids(set);
    }

    /** The node that owns {@code gid}, by exact match. */
    public OptionalInt ownerOf(Gid gid) {
        return onLoop(() -> {
            Integer o = owners.get(gid);
            return o == null ? OptionalInt.empty() : OptionalInt.of(o);
        });
    }

    public OptionalInt ownerOf(byte[] gid) {
        return ownerOf(Gid.of(gid));
    }

    /** The GID → node table as this node knows it. */
    public Map<Gid, Integer> gidTable() {
        return onLoop(() -> Map.copyOf(owners));
    }

    /** The topology as this node knows it, by node id. */
    public List<NodeInfo> topology() {
        return onLoop(() -> List.copyOf(topology.values()));
    }

    public boolean isAlive(int node) {
        return onLoop(() -> {
            NodeInfo n = topology.get(node);
            return n != null && n.alive();
        });
    }

    /**
     * Stops ({@code false}) or resumes reading from the connection that carries {@code peer}'s direct traffic
     * (the manager connection for peer 0, or on the manager the worker's connection). Receive-side back-pressure:
     * the peer's sends then queue up on its side and stop at its watermark.
     */
    public void setReceiving(int peer, boolean on) {
        onLoop(() -> {
            MeshLink l = connectionTo(peer);
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
            for (MeshLink l : links) {
                if (l.open) {
                    l.setAppPaused(!on);
                }
            }
            return null;
        });
    }

    /** Bytes queued for sending on the connection that carries traffic to {@code peer} (0 when none). */
    public long queuedBytes(int peer) {
        return onLoop(() -> {
            MeshLink l = route(peer);
            return l == null ? 0L : l.queuedBytes();
        });
    }

    /**
     * Per-peer counters: bytesSent, messagesSent, bytesReceived, messagesReceived, queueDepth, reconnects, relayed,
     * takenBack.
     */
    public Map<Integer, Map<String, Long>> peerCounters() {
        return onLoop(() -> {
            Map<Integer, Map<String, Long>> m = new TreeMap<>();
            for (Map.Entry<Integer, PeerCounters> e : peers.entrySet()) {
                MeshLink l = connectionTo(e.getKey());
                m.put(e.getKey(), e.getValue().snapshot(l == null ? 0 : l.queuedBytes()));
            }
            return m;
        });
    }

    /** Node counters ({@code node.*}) and per-peer counters ({@code peer.<id>.*}) in one flat map. */
    public Map<String, Long> counters() {
        return onLoop(() -> {
            Map<String, Long> m = new LinkedHashMap<>();
            m.put("node.refusedHandshakes", refusedHandshakes);
            m.put("node.protocolErrors", protocolErrors);
            m.put("node.sendTimeouts", sendTimeouts);
            m.put("node.registrationsRefused", registrationsRefused);
            m.put("node.evictions", evictions);
            m.put("node.relayDropped", relayDropped);
            m.put("node.heartbeatsSent", heartbeatsSent);
            m.put("node.heartbeatsReceived", heartbeatsReceived);
            m.put("node.silentConnectionsClosed", silentConnectionsClosed);
            m.put("node.gidRecordsSent", gidRecordsSent);
            m.put("node.gidRecordsReceived", gidRecordsReceived);
            for (Map.Entry<Integer, Map<String, Long>> e : peerCounters().entrySet()) {
                for (Map.Entry<String, Long> c : e.getValue().entrySet()) {
                    m.put("peer." + e.getKey() + "." + c.getKey(), c.getValue());
                }
            }
            return m;
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
            if (uplink != null) {
                uplink.close();
            }
        });
    }

    /** The channel to {@code peer} (direct, the manager's, or on the manager the worker's), for tests. */
    Channel channelTo(int peer) {
        return onLoop(() -> {
            MeshLink l = connectionTo(peer);
            return l == null ? null : l.channel;
        });
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

    String describe() {
        if (role == Role.MANAGER) {
            return "manager";
        }
        return nodeId < 0 ? "worker (unregistered)" : "worker " + nodeId;
    }

    /** A link dropped a message for {@code dst} that its sender took back. */
    void takenBack(int dst) {
        peer(dst).takenBack++;
    }

    private PeerCounters peer(int id) {
        return peers.computeIfAbsent(id, k -> new PeerCounters());
    }

    private MeshLink route(int dst) {
        if (role == Role.MANAGER) {
            Entry e = table.get(dst);
            return e != null && e.link != null && e.link.open && e.link.isActive() ? e.link : null;
        }
        MeshLink up = uplink != null && uplink.open && uplink.isActive() ? uplink : null;
        if (dst == 0) {
            return up;
        }
        NodeInfo n = topology.get(dst);
        if (n == null || !n.alive()) {
            return null;
        }
        MeshLink d = direct.get(dst);
        if (d != null && d.open && d.isActive()) {
            return d;
        }
        return up;
    }

    /** The connection that is {@code peer}'s own (not a relay path). */
    private MeshLink connectionTo(int peer) {
        if (role == Role.MANAGER) {
            Entry e = table.get(peer);
            return e == null ? null : e.link;
        }
        if (peer == 0) {
            return uplink;
        }
        MeshLink d = direct.get(peer);
        return d != null && d.open ? d : null;
    }

    // ---------------------------------------------------------------- health

    private void tick() {
        if (closed) {
            return;
        }
        try {
            health(System.nanoTime());
        } catch (RuntimeException e) {
            // A periodic task that throws is never run again; keep the health check alive.
            log.error("mesh {}: health check failed", describe(), e);
        }
    }

    private void health(long now) {
        for (MeshLink l : new ArrayList<>(links)) {
            if (!l.isActive()) {
                continue;
            }
            if (l.busy() && now - l.lastProgressNanos() > sendTimeoutNanos) {
                sendTimeouts++;
                log.warn("mesh {}: nothing sent to {} ({}) for {} ms with {} bytes queued: shutting the connection down",
                        describe(), peerName(l), l.channel.remoteAddress(), TimeUnit.NANOSECONDS.toMillis(sendTimeoutNanos),
                        l.queuedBytes());
                l.close();
                continue;
            }
            if (!l.open) {
                if (now - l.activeNanos > 3 * intervalNanos) {
                    log.info("mesh {}: {} from {} did not complete its handshake in three intervals: closing",
                            describe(), l.kind, l.channel.remoteAddress());
                    l.close();
                }
                continue;
            }
            long quiet = now - l.lastReadNanos;
            // Silence on a connection this node stopped reading is its own doing, not the peer's.
            if (quiet >= 3 * intervalNanos && !l.readingPaused()) {
                silentConnectionsClosed++;
                log.warn("mesh {}: heard nothing from {} for {} ms: closing the connection", describe(), peerName(l),
                        TimeUnit.NANOSECONDS.toMillis(quiet));
                l.close();
                continue;
            }
            if (quiet >= intervalNanos && now - l.lastHeartbeatNanos >= intervalNanos) {
                heartbeatsSent++;
                l.heartbeat();
            }
        }
        if (role == Role.WORKER) {
            if (uplink == null && !uplinkConnecting && now - nextUplinkAttempt >= 0) {
                connectManager();
            }
            maintainDirect(now);
        }
    }

    private String peerName(MeshLink l) {
        if (l.peerId < 0) {
            return "an unregistered peer";
        }
        return l.peerId == 0 ? "the manager" : "node " + l.peerId;
    }

    // ---------------------------------------------------------------- link events

    void linkActive(MeshLink link) {
        switch (link.kind) {
            case UPLINK -> link.write(Wire.register(alloc, Wire.MAGIC, Wire.VERSION, nodeId, nonce, boundPort));
            case DIRECT_OUT -> link.write(Wire.hello(alloc, Wire.MAGIC, Wire.VERSION, nodeId, nonce, link.expectedPeer));
            default -> {
            }
        }
    }

    void linkWritable(MeshLink link) {
        for (MeshLink w : link.relayWaiters) {
            w.setRelayPaused(false);
        }
        link.relayWaiters.clear();
        if (!link.open) {
            return;
        }
        if (link.kind == MeshLink.Kind.UPLINK) {
            fireWritable(0);
            for (NodeInfo n : topology.values()) {
                if (n.id() != 0 && n.id() != nodeId && n.alive() && !direct.containsKey(n.id())) {
                    fireWritable(n.id());
                }
            }
        } else {
            fireWritable(link.peerId);
        }
    }

    void linkClosed(MeshLink link) {
        links.remove(link);
        for (MeshLink w : link.relayWaiters) {
            w.setRelayPaused(false);
        }
        link.relayWaiters.clear();
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        switch (link.kind) {
            case DOWNLINK -> {
                if (link.open) {
                    Entry e = table.get(link.peerId);
                    if (e != null && e.link == link) {
                        e.link = null;
                        markDead(e, "its connection closed");
                    }
                }
            }
            case UPLINK -> {
                if (uplink == link) {
                    uplink = null;
                    uplinkConnecting = false;
                    nextUplinkAttempt = now + config.reconnectDelay().toNanos();
                    if (link.open) {
                        log.warn("mesh {}: connection to the manager lost; connecting again", describe());
                    }
                }
            }
            case DIRECT_OUT, DIRECT_IN -> {
                int peer = link.open ? link.peerId : link.expectedPeer;
                if (peer >= 0 && direct.get(peer) == link) {
                    direct.remove(peer);
                    if (link.kind == MeshLink.Kind.DIRECT_OUT) {
                        nextDirectAttempt.put(peer, now + config.reconnectDelay().toNanos());
                    }
                    if (link.open) {
                        log.info("mesh {}: direct connection to node {} closed", describe(), peer);
                        fireWritable(peer);
                    }
                }
            }
        }
    }

    void protocolError(MeshLink link, String reason) {
        protocolErrors++;
        log.warn("mesh {}: protocol violation by {} ({}): {}: closing the connection", describe(), peerName(link),
                link.channel.remoteAddress(), reason);
        link.close();
    }

    // ---------------------------------------------------------------- frames

    void onFrame(MeshLink link, ByteBuf f) {
        int start = f.readerIndex();
        int type = f.readUnsignedByte();
        if (!link.open) {
            handshake(link, type, f);
            return;
        }
        switch (type) {
            case Wire.HEARTBEAT -> {
                heartbeatsReceived++;
                link.answer();
            }
            case Wire.HEARTBEAT_ACK -> {
            }
            case Wire.DATA -> onData(link, f, start);
            case Wire.TOPOLOGY -> {
                if (requireKind(link, MeshLink.Kind.UPLINK, type)) {
                    onTopology(f);
                }
            }
            case Wire.GID_UPDATE -> {
                if (requireKind(link, MeshLink.Kind.UPLINK, type)) {
                    onGidUpdate(f);
                }
            }
            case Wire.GIDS -> {
                if (requireKind(link, MeshLink.Kind.DOWNLINK, type)) {
                    Set<Gid> gids = Wire.readGids(f);
                    if (applyGids(link.peerId, gids)) {
                        dirtyGids.add(link.peerId);
                        scheduleBroadcast();
                    }
                }
            }
            case Wire.REFUSE -> onRefused(link, f);
            default -> protocolError(link, "unexpected " + Wire.typeName(type) + " on an open " + link.kind);
        }
    }

    private boolean requireKind(MeshLink link, MeshLink.Kind kind, int type) {
        if (link.kind != kind) {
            protocolError(link, Wire.typeName(type) + " on a " + link.kind + " connection");
            return false;
        }
        return true;
    }

    private void handshake(MeshLink link, int type, ByteBuf f) {
        switch (link.kind) {
            case DOWNLINK -> {
                if (type == Wire.REGISTER) {
                    onRegister(link, f);
                } else {
                    protocolError(link, "expected REGISTER, got " + Wire.typeName(type));
                }
            }
            case DIRECT_IN -> {
                if (type == Wire.HELLO) {
                    onHello(link, f);
                } else {
                    protocolError(link, "expected HELLO, got " + Wire.typeName(type));
                }
            }
            case UPLINK -> {
                if (type == Wire.REGISTER_ACK) {
                    onRegisterAck(link, f);
                } else if (type == Wire.REFUSE) {
                    onRefused(link, f);
                } else {
                    protocolError(link, "expected REGISTER_ACK, got " + Wire.typeName(type));
                }
            }
            case DIRECT_OUT -> {
                if (type == Wire.HELLO_ACK) {
                    onHelloAck(link, f);
                } else if (type == Wire.REFUSE) {
                    onRefused(link, f);
                } else {
                    protocolError(link, "expected HELLO_ACK, got " + Wire.typeName(type));
                }
            }
        }
    }

    private boolean checkMagic(MeshLink link, String what, int magic, int version) {
        if (magic == Wire.MAGIC && version == Wire.VERSION) {
            return true;
        }
        refusedHandshakes++;
        log.warn("mesh {}: refused {} from {}: magic 0x{} version {}, this node speaks magic 0x{} version {}",
                describe(), what, link.channel.remoteAddress(), Integer.toHexString(magic), version,
                Integer.toHexString(Wire.MAGIC), Wire.VERSION);
        link.refuseAndClose(Wire.refuse(alloc, Wire.REFUSE_VERSION,
                "magic/version mismatch: expected 0x" + Integer.toHexString(Wire.MAGIC) + " v" + Wire.VERSION));
        return false;
    }

    private void onRefused(MeshLink link, ByteBuf f) {
        int reason = f.readUnsignedByte();
        String text = f.toString(StandardCharsets.UTF_8);
        if (link.kind == MeshLink.Kind.UPLINK) {
            registrationsRefused++;
        }
        if (link.kind == MeshLink.Kind.UPLINK) {
            log.warn("mesh {}: registration refused by the manager at {} (reason {}): {}", describe(),
                    link.channel.remoteAddress(), reason, text);
        } else {
            log.info("mesh {}: direct connection refused by {} (reason {}): {}", describe(),
                    link.channel.remoteAddress(), reason, text);
        }
        link.close();
    }

    // ---- manager side

    private void onRegister(MeshLink link, ByteBuf f) {
        int magic = f.readInt();
        int version = f.readUnsignedShort();
        if (!checkMagic(link, "registration", magic, version)) {
            return;
        }
        int requested = f.readInt();
        long peerNonce = f.readLong();
        int port = f.readUnsignedShort();
        if (port == 0) {
            protocolError(link, "registration without a listening port");
            return;
        }
        Entry e = null;
        for (Entry x : table.values()) {
            if (x.id != 0 && x.nonce == peerNonce) {
                e = x;
                break;
            }
        }
        if (e == null) {
            if (table.size() >= config.maxNodes()) {
                Entry victim = table.values().stream()
                        .filter(x -> x.id != 0 && !x.alive && x.link == null)
                        .min(Comparator.comparingLong(x -> x.deadSinceNanos))
                        .orElse(null);
                if (victim == null) {
                    registrationsRefused++;
                    log.warn("mesh manager: refused registration from {}: the table holds {} nodes and none is dead",
                            link.channel.remoteAddress(), table.size());
                    link.refuseAndClose(Wire.refuse(alloc, Wire.REFUSE_FULL,
                            "node table full (" + config.maxNodes() + " nodes, none dead)"));
                    return;
                }
                evict(victim);
            }
            e = new Entry(nextId++, peerNonce);
            table.put(e.id, e);
            if (requested > 0) {
                log.info("mesh manager: a new instance asked for id {}; it gets id {}", requested, e.id);
            }
        } else if (e.link != null && e.link != link) {
            MeshLink old = e.link;
            e.link = null;
            old.close();
        }
        InetSocketAddress remote = (InetSocketAddress) link.channel.remoteAddress();
        e.address = new InetSocketAddress(remote.getAddress(), port);
        boolean wasAlive = e.alive;
        e.alive = true;
        e.link = link;
        link.peerId = e.id;
        link.open = true;
        peer(e.id).connected();
        log.info("mesh manager: node {} registered from {}", e.id, e.address);
        link.write(Wire.registerAck(alloc, e.id));
        refreshTopology();
        link.write(Wire.topology(alloc, topology.values()));
        List<Wire.GidRecord> all = new ArrayList<>();
        for (Entry x : table.values()) {
            all.add(gidRecord(x.id));
        }
        link.write(Wire.gidUpdate(alloc, all));
        gidRecordsSent += all.size();
        topologyDirty = true;
        if (!wasAlive) {
            dirtyGids.add(e.id);
            fireNodeState(e.id, true);
        }
        scheduleBroadcast();
    }

    private void evict(Entry victim) {
        table.remove(victim.id);
        evictions++;
        log.info("mesh manager: evicted node {}, dead for {} ms, to make room", victim.id,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - victim.deadSinceNanos));
        applyGids(victim.id, Set.of());
        peers.remove(victim.id);
        dirtyGids.add(victim.id);
        topologyDirty = true;
        scheduleBroadcast();
    }

    private void markDead(Entry e, String why) {
        e.alive = false;
        e.deadSinceNanos = System.nanoTime();
        log.warn("mesh manager: node {} is dead ({})", e.id, why);
        topologyDirty = true;
        dirtyGids.add(e.id);
        fireNodeState(e.id, false);
        scheduleBroadcast();
    }

    private Wire.GidRecord gidRecord(int id) {
        Entry e = table.get(id);
        if (e == null) {
            return new Wire.GidRecord(id, false, true, Set.of());
        }
        return new Wire.GidRecord(id, e.alive, false, gidsByNode.getOrDefault(id, Set.of()));
    }

    private void refreshTopology() {
        topology.clear();
        for (Entry e : table.values()) {
            topology.put(e.id, new NodeInfo(e.id, e.alive, e.address));
        }
    }

    private void scheduleBroadcast() {
        if (!broadcastScheduled && !closed) {
            broadcastScheduled = true;
            loop.execute(this::broadcast);
        }
    }

    /** Sends what changed since the last round: the topology if it changed, and the changed nodes' GID sets. */
    private void broadcast() {
        broadcastScheduled = false;
        if (closed) {
            return;
        }
        refreshTopology();
        boolean topoChanged = topologyDirty;
        topologyDirty = false;
        List<Wire.GidRecord> records = new ArrayList<>();
        for (int id : dirtyGids) {
            records.add(gidRecord(id));
        }
        dirtyGids.clear();
        ByteBuf topo = topoChanged ? Wire.topology(alloc, topology.values()) : null;
        ByteBuf gids = records.isEmpty() ? null : Wire.gidUpdate(alloc, records);
        for (Entry e : table.values()) {
            if (e.link != null && e.link.open) {
                if (topo != null) {
                    e.link.write(topo.retainedDuplicate());
                }
                if (gids != null) {
                    e.link.write(gids.retainedDuplicate());
                    gidRecordsSent += records.size();
                }
            }
        }
        if (topo != null) {
            topo.release();
            fireTopology();
        }
        if (gids != null) {
            gids.release();
        }
    }

    // ---- data

    private void onData(MeshLink link, ByteBuf f, int start) {
        int src = f.readInt();
        int dst = f.readInt();
        switch (link.kind) {
            case DOWNLINK -> {
                if (src != link.peerId) {
                    protocolError(link, "DATA claims source " + src);
                } else if (dst == 0) {
                    deliver(src, f, false);
                } else {
                    relay(link, src, dst, f, start);
                }
            }
            case UPLINK -> {
                if (dst != nodeId) {
                    protocolError(link, "DATA for node " + dst + " delivered to node " + nodeId);
                } else {
                    deliver(src, f, src != 0);
                }
            }
            case DIRECT_IN, DIRECT_OUT -> {
                if (src != link.peerId || dst != nodeId) {
                    protocolError(link, "DATA " + src + "->" + dst + " on the direct connection " + link.peerId
                            + "<->" + nodeId);
                } else {
                    deliver(src, f, false);
                }
            }
        }
    }

    private void deliver(int src, ByteBuf f, boolean relayed) {
        int len = f.readableBytes();
        PeerCounters pc = peer(src);
        pc.bytesReceived += len;
        pc.messagesReceived++;
        if (relayed) {
            pc.relayedMessages++;
            pc.relayedBytes += len;
        }
        ByteBuf payload = f.readRetainedSlice(len);
        try {
            for (MeshListener l : listeners) {
                try {
                    l.onMessage(src, payload.retainedDuplicate());
                } catch (RuntimeException e) {
                    log.warn("mesh {}: listener failed on a message from node {}", describe(), src, e);
                }
            }
        } finally {
            payload.release();
        }
    }

    private void relay(MeshLink from, int src, int dst, ByteBuf f, int start) {
        Entry t = table.get(dst);
        if (t == null || t.link == null || !t.link.open || !t.link.isActive()) {
            relayDropped++;
            log.debug("mesh manager: dropped a message from node {} to node {}: no connection", src, dst);
            return;
        }
        int len = f.readableBytes();
        t.link.write(Wire.reframe(alloc, f.retainedSlice(start, f.writerIndex() - start)));
        PeerCounters pc = peer(dst);
        pc.relayedMessages++;
        pc.relayedBytes += len;
        if (!t.link.isWritable() && !t.link.relayWaiters.contains(from)) {
            // Hold the sender back until the destination drains; the destination's send time-out (half the
            // workers') ends the wait if it has stopped reading.
            from.setRelayPaused(true);
            t.link.relayWaiters.add(from);
        }
    }

    // ---- worker side

    private void onRegisterAck(MeshLink link, ByteBuf f) {
        int magic = f.readInt();
        int version = f.readUnsignedShort();
        if (!checkMagic(link, "registration answer", magic, version)) {
            return;
        }
        int id = f.readInt();
        if (id <= 0) {
            protocolError(link, "assigned id " + id);
            return;
        }
        if (nodeId >= 0 && id != nodeId) {
            log.warn("mesh {}: registered again as node {}: the manager no longer knew this instance", describe(), id);
            for (MeshLink d : new ArrayList<>(direct.values())) {
                d.close();
            }
            direct.clear();
            applyGids(nodeId, Set.of());
        }
        nodeId = id;
        link.open = true;
        link.peerId = 0;
        uplinkConnecting = false;
        peer(0).connected();
        log.info("mesh worker: registered as node {}", id);
        applyGids(id, ownGids);
        link.write(Wire.gids(alloc, ownGids));
        for (MeshListener l : listeners) {
            try {
                l.onRegistered(id);
            } catch (RuntimeException e) {
                log.warn("mesh {}: listener failed", describe(), e);
            }
        }
        fireWritable(0);
    }

    private void onTopology(ByteBuf f) {
        int n = f.readUnsignedShort();
        if (n > config.maxNodes() * 4) {
            throw new IllegalArgumentException("topology of " + n + " nodes");
        }
        TreeMap<Integer, NodeInfo> next = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            NodeInfo info = Wire.readNode(f);
            next.put(info.id(), info);
        }
        Set<Integer> ids = new TreeSet<>(topology.keySet());
        ids.addAll(next.keySet());
        List<int[]> changes = new ArrayList<>();
        for (int id : ids) {
            NodeInfo before = topology.get(id);
            NodeInfo after = next.get(id);
            boolean was = before != null && before.alive();
            boolean is = after != null && after.alive();
            if (was != is) {
                changes.add(new int[] {id, is ? 1 : 0});
            }
        }
        topology.clear();
        topology.putAll(next);
        maintainDirect(System.nanoTime());
        for (int[] c : changes) {
            if (c[0] != nodeId) {
                fireNodeState(c[0], c[1] != 0);
            }
        }
        fireTopology();
    }

    private void onGidUpdate(ByteBuf f) {
        int n = f.readUnsignedShort();
        gidRecordsReceived += n;
        for (int i = 0; i < n; i++) {
            int id = f.readInt();
            int flags = f.readUnsignedByte();
            Set<Gid> gids = Wire.readGids(f);
            if (id == nodeId) {
                continue; // this node's own set is what it advertised
            }
            applyGids(id, (flags & Wire.GID_REMOVED) != 0 ? Set.of() : gids);
        }
    }

    private void onHello(MeshLink link, ByteBuf f) {
        int magic = f.readInt();
        int version = f.readUnsignedShort();
        if (!checkMagic(link, "handshake", magic, version)) {
            return;
        }
        int peer = f.readInt();
        f.readLong(); // the peer's nonce; its identity is the manager's business
        int target = f.readInt();
        if (nodeId < 0 || target != nodeId) {
            log.info("mesh {}: refused a direct connection from node {} meant for node {}", describe(), peer, target);
            link.refuseAndClose(Wire.refuse(alloc, Wire.REFUSE_NOT_ME, "this is node " + nodeId));
            return;
        }
        if (peer <= 0 || peer >= nodeId) {
            protocolError(link, "HELLO from node " + peer + " to node " + nodeId + " (the lower id connects)");
            return;
        }
        if (!config.directPeers().test(peer)) {
            log.info("mesh {}: refused a direct connection from node {}: disabled", describe(), peer);
            link.refuseAndClose(Wire.refuse(alloc, Wire.REFUSE_DIRECT_DISABLED, "direct connections disabled"));
            return;
        }
        MeshLink old = direct.put(peer, link);
        if (old != null && old != link) {
            old.close();
        }
        link.peerId = peer;
        link.open = true;
        peer(peer).connected();
        link.write(Wire.helloAck(alloc, nodeId, nonce));
        log.info("mesh {}: direct connection from node {}", describe(), peer);
        fireWritable(peer);
    }

    private void onHelloAck(MeshLink link, ByteBuf f) {
        int magic = f.readInt();
        int version = f.readUnsignedShort();
        if (!checkMagic(link, "handshake answer", magic, version)) {
            return;
        }
        int id = f.readInt();
        if (id != link.expectedPeer) {
            protocolError(link, "HELLO_ACK from node " + id + ", expected node " + link.expectedPeer);
            return;
        }
        link.peerId = id;
        link.open = true;
        peer(id).connected();
        log.info("mesh {}: direct connection to node {}", describe(), id);
        fireWritable(id);
    }

    private void maintainDirect(long now) {
        if (role != Role.WORKER || nodeId <= 0 || closed) {
            return;
        }
        for (MeshLink d : new ArrayList<>(direct.values())) {
            int id = d.open ? d.peerId : d.expectedPeer;
            NodeInfo n = topology.get(id);
            if (n == null || !n.alive()) {
                direct.remove(id);
                d.close();
            }
        }
        for (NodeInfo n : topology.values()) {
            int id = n.id();
            if (id <= nodeId || !n.alive() || n.address() == null || !config.directPeers().test(id)) {
                continue;
            }
            if (direct.containsKey(id) || directConnecting.contains(id)) {
                continue;
            }
            Long next = nextDirectAttempt.get(id);
            if (next != null && now - next < 0) {
                continue;
            }
            connectDirect(n);
        }
    }

    private void connectDirect(NodeInfo n) {
        int id = n.id();
        directConnecting.add(id);
        connectAny(List.of(n.address()), 0, MeshLink.Kind.DIRECT_OUT, id, link -> {
            directConnecting.remove(id);
            NodeInfo now = topology.get(id);
            if (closed || now == null || !now.alive() || direct.containsKey(id)) {
                link.close();
                return;
            }
            direct.put(id, link);
        }, () -> {
            directConnecting.remove(id);
            nextDirectAttempt.put(id, System.nanoTime() + config.reconnectDelay().toNanos());
            log.debug("mesh {}: cannot connect to node {} at {}", describe(), id, n.address());
        });
    }

    private void connectManager() {
        uplinkConnecting = true;
        resolve(managerAddress, addresses -> {
            if (closed) {
                return;
            }
            if (addresses.isEmpty()) {
                managerUnreachable();
                return;
            }
            connectAny(addresses, 0, MeshLink.Kind.UPLINK, 0, link -> {
                if (closed) {
                    link.close();
                    return;
                }
                uplink = link;
            }, this::managerUnreachable);
        });
    }

    private void managerUnreachable() {
        uplinkConnecting = false;
        nextUplinkAttempt = System.nanoTime() + config.reconnectDelay().toNanos();
        log.debug("mesh {}: cannot reach the manager at {}", describe(), managerAddress);
    }

    /** Resolves off the loop (unless it is a literal) and calls back on the loop; empty when it fails. */
    private void resolve(MeshAddress a, Consumer<List<InetSocketAddress>> then) {
        if (config.resolver() == null && a.isLiteral()) {
            then.accept(lookup(a));
            return;
        }
        CompletableFuture.supplyAsync(() -> lookup(a), config.blockingExecutor())
                .whenComplete((list, err) -> runOnLoop(() -> then.accept(err == null ? list : List.of())));
    }

    private List<InetSocketAddress> lookup(MeshAddress a) {
        try {
            List<InetAddress> ips = config.resolver() != null
                    ? config.resolver().apply(a.host())
                    : Arrays.asList(InetAddress.getAllByName(a.host()));
            List<InetSocketAddress> out = new ArrayList<>();
            for (InetAddress ip : ips) {
                out.add(new InetSocketAddress(ip, a.port()));
            }
            return out;
        } catch (UnknownHostException | RuntimeException e) {
            log.warn("mesh {}: cannot resolve {}: {}", describe(), a.host(), e.toString());
            return List.of();
        }
    }

    /** Tries each address in turn; {@code connected} gets the link of the first that answers. */
    private void connectAny(List<InetSocketAddress> addresses, int i, MeshLink.Kind kind, int peer,
                            Consumer<MeshLink> connected, Runnable failed) {
        if (closed) {
            failed.run();
            return;
        }
        MeshLink link = new MeshLink(this, kind, peer);
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(transport.socket())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) config.connectTimeout().toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, alloc)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark())
                .handler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        initPipeline(ch, link);
                    }
                });
        if (config.socketBufferBytes() > 0) {
            b.option(ChannelOption.SO_SNDBUF, config.socketBufferBytes());
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes());
        }
        InetSocketAddress target = addresses.get(i);
        b.connect(target).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                connected.accept(link);
            } else if (i + 1 < addresses.size()) {
                log.debug("mesh {}: cannot connect to {}: {}; trying the next address", describe(), target,
                        f.cause().toString());
                connectAny(addresses, i + 1, kind, peer, connected, failed);
            } else {
                failed.run();
            }
        });
    }

    // ---------------------------------------------------------------- GIDs and listeners

    /** Replaces {@code id}'s GID set in the local table; true when it changed. */
    private boolean applyGids(int id, Set<Gid> gids) {
        Set<Gid> old = gidsByNode.getOrDefault(id, Set.of());
        if (old.equals(gids)) {
            return false;
        }
        for (Gid g : old) {
            if (owners.get(g) != null && owners.get(g) == id) {
                owners.remove(g);
            }
        }
        if (gids.isEmpty()) {
            gidsByNode.remove(id);
        } else {
            gidsByNode.put(id, Collections.unmodifiableSet(new LinkedHashSet<>(gids)));
        }
        for (Gid g : gids) {
            Integer prev = owners.put(g, id);
            if (prev != null && prev != id) {
                log.warn("mesh {}: GID {} claimed by node {} and node {}; node {} has it now", describe(), g, prev,
                        id, id);
            }
        }
        Set<Gid> view = gidsByNode.getOrDefault(id, Set.of());
        for (MeshListener l : listeners) {
            try {
                l.onGidOwnership(id, view);
            } catch (RuntimeException e) {
                log.warn("mesh {}: listener failed", describe(), e);
            }
        }
        return true;
    }

    private void fireNodeState(int id, boolean alive) {
        for (MeshListener l : listeners) {
            try {
                l.onNodeState(id, alive);
            } catch (RuntimeException e) {
                log.warn("mesh {}: listener failed", describe(), e);
            }
        }
    }

    private void fireTopology() {
        List<NodeInfo> view = List.copyOf(topology.values());
        for (MeshListener l : listeners) {
            try {
                l.onTopology(view);
            } catch (RuntimeException e) {
                log.warn("mesh {}: listener failed", describe(), e);
            }
        }
    }

    private void fireWritable(int id) {
        for (MeshListener l : listeners) {
            try {
                l.onWritable(id);
            } catch (RuntimeException e) {
                log.warn("mesh {}: listener failed", describe(), e);
            }
        }
    }
}
