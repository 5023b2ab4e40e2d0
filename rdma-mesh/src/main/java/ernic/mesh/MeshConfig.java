package ernic.mesh;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
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
        return new MeshConfig(d, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withSendTimeout(Duration d) {
        return new MeshConfig(heartbeatInterval, d, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withReconnectDelay(Duration d) {
        return new MeshConfig(heartbeatInterval, sendTimeout, d, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withMaxNodes(int n) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, n, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withWriteBufferWaterMarks(int low, int high) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, low, high,
                socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce, blockingExecutor,
                resolver, secret);
    }

    public MeshConfig withSocketBufferBytes(int bytes) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, bytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withListenPort(int port) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, port, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withBindHost(String host) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, host, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withDirectPeers(IntPredicate filter) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, filter, instanceNonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withInstanceNonce(long nonce) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, nonce,
                blockingExecutor, resolver, secret);
    }

    public MeshConfig withResolver(Function<String, List<InetAddress>> r) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, r, secret);
    }

    /** The shared secret every connection authenticates with; null turns authentication off. */
    public MeshConfig withSecret(MeshSecret s) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, maxFrameLength, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, s);
    }

    public MeshConfig withMaxFrameLength(int n) {
        return new MeshConfig(heartbeatInterval, sendTimeout, reconnectDelay, connectTimeout, maxNodes, writeBufferLow,
                writeBufferHigh, socketBufferBytes, n, listenPort, bindHost, directPeers, instanceNonce,
                blockingExecutor, resolver, secret);
    }
}
