package ernic.mesh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.fail;

/** Several mesh nodes in this JVM, each on its own single-thread event loop; closes them all. */
final class Cluster implements AutoCloseable {
    /** How long a test waits for something that must happen (a behaviour bound, not a performance claim). */
    static final Duration WAIT = Duration.ofSeconds(10);

    record Received(int source, byte[] bytes) {
    }

    /** Records what a node receives. */
    static final class Recorder implements MeshListener {
        final ConcurrentLinkedQueue<Received> messages = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Integer> deaths = new ConcurrentLinkedQueue<>();

        @Override
        public void onMessage(int sourceNode, ByteBuf payload) {
            try {
                messages.add(new Received(sourceNode, ByteBufUtil.getBytes(payload)));
            } finally {
                payload.release();
            }
            wake();
        }

        @Override
        public void onNodeState(int nodeId, boolean alive) {
            if (!alive) {
                deaths.add(nodeId);
            }
            wake();
        }

        boolean has(int source, String text) {
            return messages.stream().anyMatch(r -> r.source() == source && new String(r.bytes()).equals(text));
        }
    }

    final String host;
    final MeshConfig base;
    private final IoHandlerFactory ioFactory;
    private final List<EventLoopGroup> loops = new ArrayList<>();
    private final List<MeshNode> nodes = new ArrayList<>();
    MeshNode manager;

    Cluster(String host, MeshConfig base) {
        this(host, base, NioIoHandler.newFactory());
    }

    Cluster(String host, MeshConfig base, IoHandlerFactory ioFactory) {
        this.host = host;
        this.base = base.withBindHost(host);
        this.ioFactory = ioFactory;
    }

    static MeshConfig fast() {
        return MeshConfig.defaults()
                .withHeartbeatInterval(Duration.ofMillis(150))
                .withSendTimeout(Duration.ofMillis(2000))
                .withReconnectDelay(Duration.ofMillis(50));
    }

    /**
     * {@link #fast()} with 64 KiB socket buffers, the write watermarks {@code low} and {@code high} and the send
     * time-out: what a node sends to a peer that stops reading soon waits in the sender's queue.
     */
    static MeshConfig smallBuffers(Duration sendTimeout, int low, int high) {
        return fast()
                .withSendTimeout(sendTimeout)
                .withWriteBufferWaterMarks(low, high)
                .withSocketBufferBytes(64 * 1024);
    }

    /** Waits for the direct connection between the workers {@code a} and {@code b}; then {@code b} stops reading it. */
    static void stallDirect(MeshNode a, MeshNode b) {
        await("direct " + a.nodeId() + "-" + b.nodeId(),
                () -> a.hasDirectConnection(b.nodeId()) && b.hasDirectConnection(a.nodeId()));
        b.setReceiving(a.nodeId(), false);
    }

    /** Two workers joined directly, the receiver not reading what the sender sends it (see {@link #stallDirect}). */
    record Stalled(MeshNode sender, MeshNode receiver) {}

    /** The manager and two workers (the second heard by {@code receiverListeners}), their direct connection stalled. */
    Stalled startStalled(MeshListener... receiverListeners) {
        startManager();
        MeshNode sender = startWorker();
        MeshNode receiver = startWorker(receiverListeners);
        stallDirect(sender, receiver);
        return new Stalled(sender, receiver);
    }

    EventLoopGroup newLoop(String name) {
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(name, true), ioFactory);
        loops.add(g);
        return g;
    }

    EventLoopGroup newLoops(String name, int threads) {
        EventLoopGroup g = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), ioFactory);
        loops.add(g);
        return g;
    }

    MeshNode startManager(MeshConfig cfg, MeshListener... listeners) {
        return startManager(0, cfg, listeners);
    }

    /** A manager on {@code port} (0: any free one); the workers started after it register with it. */
    MeshNode startManager(int port, MeshConfig cfg, MeshListener... listeners) {
        manager = MeshNode.manager(newLoop("mesh-manager"), port, cfg.withBindHost(host)).addListener(SIGNAL);
        for (MeshListener l : listeners) {
            manager.addListener(l);
        }
        nodes.add(manager);
        manager.start().syncUninterruptibly();
        return manager;
    }

    MeshNode startManager(MeshListener... listeners) {
        return startManager(base, listeners);
    }

    /** Starts a worker on a loop of its own and waits until it has an id. */
    MeshNode startWorker(MeshConfig cfg, MeshListener... listeners) {
        MeshNode w = newWorker(newLoop("mesh-worker"), cfg, listeners);
        await("worker registered", () -> w.nodeId() > 0);
        return w;
    }

    MeshNode startWorker(MeshListener... listeners) {
        return startWorker(base, listeners);
    }

    MeshNode newWorker(EventLoopGroup loop, MeshConfig cfg, MeshListener... listeners) {
        MeshNode w = MeshNode.worker(loop, host, manager.localPort(), cfg.withBindHost(host)).addListener(SIGNAL);
        for (MeshListener l : listeners) {
            w.addListener(l);
        }
        nodes.add(w);
        w.start().syncUninterruptibly();
        return w;
    }

    /** Woken by every event of every node of a cluster (see {@link #SIGNAL}). */
    private static final Object EVENTS = new Object();

    /**
     * Tells waiters in {@link #await} that something happened on a node; added to every node a cluster starts.
     * Every event wakes them, as do the ones no listener hears of (a counter, a queue draining) within
     * {@link #RECHECK_MS}.
     */
    static final MeshListener SIGNAL = new MeshListener() {
        @Override
        public void onMessage(int sourceNode, ByteBuf payload) {
            payload.release();
            wake();
        }

        @Override
        public void onRegistered(int nodeId) {
            wake();
        }

        @Override
        public void onTopology(List<NodeInfo> nodes) {
            wake();
        }

        @Override
        public void onNodeState(int nodeId, boolean alive) {
            wake();
        }

        @Override
        public void onGidOwnership(int nodeId, java.util.Set<Gid> gids) {
            wake();
        }

        @Override
        public void onWritable(int nodeId) {
            wake();
        }
    };

    /** The longest a waiter sleeps without an event: for state no listener announces. */
    static final long RECHECK_MS = 10;

    static void wake() {
        synchronized (EVENTS) {
            EVENTS.notifyAll();
        }
    }

    /** Waits until {@code condition} holds, checking it again at each mesh event; fails after {@link #WAIT}. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting for: " + what);
            }
            synchronized (EVENTS) {
                try {
                    EVENTS.wait(RECHECK_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    fail("interrupted");
                }
            }
        }
    }

    /** Runs {@code c} on the node's event loop and returns its result. */
    static <T> T on(MeshNode node, Callable<T> c) {
        try {
            return node.eventLoop().submit(c).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static SendResult send(MeshNode from, int to, String text) {
        return on(from, () -> {
            ByteBuf b = io.netty.buffer.Unpooled.copiedBuffer(text.getBytes());
            SendResult r = from.send(to, b);
            if (r != SendResult.QUEUED) {
                b.release();
            }
            return r;
        });
    }

    /** Every node sees every one of {@code ids} alive. */
    void awaitTopology(List<MeshNode> members, int... ids) {
        for (MeshNode n : members) {
            for (int id : ids) {
                await("node " + n.nodeId() + " sees node " + id + " alive", () -> n.isAlive(id));
            }
        }
    }

    @Override
    public void close() {
        for (MeshNode n : nodes.reversed()) {
            try {
                n.close().await(2, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // its loop may be gone already
            }
        }
        for (EventLoopGroup g : loops) {
            g.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
        for (EventLoopGroup g : loops) {
            g.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
