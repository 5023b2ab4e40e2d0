package ernic.mesh;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntPredicate;

/**
 * Settings of a mesh node. Immutable; the {@code with*} methods return a changed copy.
 *
 * @param heartbeatInterval  this node's health-check interval: it sends a heartbeat on a connection it has
 *                           heard nothing on for one interval, and drops a connection silent for three
 * @param sendTimeout        ERNIC_TCP_SEND_TIMEOUT_MS: a connection with data queued that sends nothing for this
 *                           long is shut down. This is the workers' value; a manager uses half of it.
 * @param reconnectDelay     wait between connection attempts (to the manager, or to a peer)
 * @param connectTimeout     TCP connect timeout per address
 * @param maxNodes           size of the manager's node table, the manager included
 * @param writeBufferLow     low write watermark of each connection, in bytes
 * @param writeBufferHigh    high write watermark: above it {@link MeshNode#send} answers BUSY
 * @param socketBufferBytes  SO_SNDBUF/SO_RCVBUF of mesh sockets, 0 for the system default
 * @param maxFrameLength     largest frame accepted from a peer (header included)
 * @param listenPort         the port this node accepts on (a worker's 0 picks a free one)
 * @param bindHost           address to listen on, null for every address of both families
 * @param directPeers        which peers a worker may have a direct connection with (test hook); others go by
 *                           the manager
 * @param instanceNonce      identity of this instance, sent at registration; 0 picks a random one
 * @param blockingExecutor   where host names are resolved (never on the event loop)
 * @param resolver           name resolution, run on {@code blockingExecutor}; null for the system resolver
 * @param secret             the mesh's shared secret: every connection authenticates with it before anything else
 *                           (see {@link MeshSecret}); null for an unauthenticated mesh
 */
public record MeshConfig(
        Duration heartbeatInterval,
        Duration sendTimeout,
        Duration reconnectDelay,
        Duration connectTimeout,
        int maxNodes,
        int writeBufferLow,
        int writeBufferHigh,
        int socketBufferBytes,
        int maxFrameLength,
        int listenPort,
        String bindHost,
        IntPredicate directPeers,
        long instanceNonce,
        Executor blockingExecutor,
        Function<String, List<InetAddress>> resolver,
        MeshSecret secret) {

    public static final int MAX_NODES = 64;
    public static final int MAX_PAYLOAD = 16 << 20;
    /** The least room for replies on a connection, whatever its watermarks ({@link #replyRoom}). */
    public static final long REPLY_ROOM_MIN = 64L << 20;

    public MeshConfig {
        Objects.requireNonNull(heartbeatInterval);
        Objects.requireNonNull(sendTimeout);
        Objects.requireNonNull(reconnectDelay);
        Objects.requireNonNull(connectTimeout);
        Objects.requireNonNull(directPeers);
        Objects.requireNonNull(blockingExecutor);
        if (heartbeatInterval.toMillis() < 1 || sendTimeout.toMillis() < 2) {
            throw new IllegalArgumentException("intervals must be at least a millisecond");
        }
        if (maxNodes < 2) {
            throw new IllegalArgumentException("maxNodes < 2");
        }
        if (writeBufferLow < 1 || writeBufferHigh < writeBufferLow) {
            throw new IllegalArgumentException("bad write watermarks " + writeBufferLow + "/" + writeBufferHigh);
        }
        if (maxFrameLength < 64) {
            throw new IllegalArgumentException("maxFrameLength too small");
        }
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("listenPort out of range");
        }
    }

    /**
     * The bytes of replies a connection queues for its peer, apart from its requests: twice the high watermark, and
     * at least {@link #REPLY_ROOM_MIN} (64 MiB, what the default watermarks give). The floor is there because what a
     * node owes a peer in replies is decided by what the peer asked (a requester bounds the READ data it waits for,
     * 32 MiB per node in ionic-device), not by this node's send budget: a small budget must not drop replies.
     */
    public long replyRoom() {
        return Math.max(REPLY_ROOM_MIN, 2L * writeBufferHigh);
    }

    public static MeshConfig defaults() {
        return new MeshConfig(Duration.ofSeconds(1), Duration.ofMillis(10_000), Duration.ofMillis(500),
                Duration.ofSeconds(3), MAX_NODES, 16 << 20, 32 << 20, 0, MAX_PAYLOAD + 4096, 0, null,
                id -> true, 0, ForkJoinPool.commonPool(), null, null);
    }

    /** The send timeout from ERNIC_TCP_SEND_TIMEOUT_MS when it is set to a positive number. */
    public MeshConfig withSendTimeoutFromEnvironment() {
        String v = System.getenv("ERNIC_TCP_SEND_TIMEOUT_MS");
        if (v == null || v.isBlank()) {
            return this;
        }
        long ms = Long.parseLong(v.trim());
        return ms > 1 ? withSendTimeout(Duration.ofMillis(ms)) : this;
    }

    public MeshConfig withHeartbeatInterval(Duration d) {
        return with(c -> c.heartbeatInterval = d);
    }

    public MeshConfig withSendTimeout(Duration d) {
        return with(c -> c.sendTimeout = d);
    }

    public MeshConfig withReconnectDelay(Duration d) {
        return with(c -> c.reconnectDelay = d);
    }

    public MeshConfig withMaxNodes(int n) {
        return with(c -> c.maxNodes = n);
    }

    public MeshConfig withWriteBufferWaterMarks(int low, int high) {
        return with(c -> {
            c.writeBufferLow = low;
            c.writeBufferHigh = high;
        });
    }

    public MeshConfig withSocketBufferBytes(int bytes) {
        return with(c -> c.socketBufferBytes = bytes);
    }

    public MeshConfig withListenPort(int port) {
        return with(c -> c.listenPort = port);
    }

    public MeshConfig withBindHost(String host) {
        return with(c -> c.bindHost = host);
    }

    public MeshConfig withDirectPeers(IntPredicate filter) {
        return with(c -> c.directPeers = filter);
    }

    public MeshConfig withInstanceNonce(long nonce) {
        return with(c -> c.instanceNonce = nonce);
    }

    public MeshConfig withResolver(Function<String, List<InetAddress>> r) {
        return with(c -> c.resolver = r);
    }

    /** The shared secret every connection authenticates with; null turns authentication off. */
    public MeshConfig withSecret(MeshSecret s) {
        return with(c -> c.secret = s);
    }

    public MeshConfig withMaxFrameLength(int n) {
        return with(c -> c.maxFrameLength = n);
    }

    /** A copy with what {@code change} sets on a {@link Change} that starts as this config's settings. */
    private MeshConfig with(Consumer<Change> change) {
        Change c = new Change(this);
        change.accept(c);
        return c.config();
    }

    /** The settings of a config being changed: one place that lists them all, in the record's order. */
    private static final class Change {
        Duration heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout;
        int maxNodes, writeBufferLow, writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort;
        String bindHost;
        IntPredicate directPeers;
        long instanceNonce;
        Executor blockingExecutor;
        Function<String, List<InetAddress>> resolver;
        MeshSecret secret;

        Change(MeshConfig from) {
            heartbeatInterval = from.heartbeatInterval;
            sendTimeout = from.sendTimeout;
            reconnectDelay = from.reconnectDelay;
            connectTimeout = from.connectTimeout;
            maxNodes = from.maxNodes;
            writeBufferLow = from.writeBufferLow;
            writeBufferHigh = from.writeBufferHigh;
            socketBufferBytes = from.socketBufferBytes;
            maxFrameLength = from.maxFrameLength;
            listenPort = from.listenPort;
            bindHost = from.bindHost;
            directPeers = from.directPeers;
            instanceNonce = from.instanceNonce;
            blockingExecutor = from.blockingExecutor;
            resolver = from.resolver;
            secret = from.secret;
        }

        MeshConfig config() {
            return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes,
                    writeBufferLow, writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost,
                    directPeers, instanceNonce, blockingExecutor, resolver, secret);
        }
    }
}
