package ernic.vfiouser.server;

import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.vfiouser.transport.FdServerChannel;
import ernic.vfiouser.transport.ListeningSocket;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.MessageEncoder;
import ernic.vfiouser.wire.MessageFramer;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A vfio-user server for one device on one UNIX socket. One event-loop thread (the device thread)
 * runs the listening socket, the client connection and the device. One client is served at a time:
 * while it is connected the listener accepts nobody, and the next client is accepted after it goes.
 */
public final class VfioUserServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VfioUserServer.class);

    /**
     * @param socketMode        permission bits of the socket file (0600, or 0660 for group access)
     * @param maxDataXferSize   the largest data transfer in one message (spec default 1 MiB)
     * @param maxMsgFds         the most fds the client may send in one message
     * @param maxDmaMaps        the most DMA mappings
     * @param busyPollMicros    how long the device thread keeps polling its sockets after its last work before it
     *                          sleeps in epoll ({@link BusyPoll}); 0: it sleeps at once
     */
    public record Options(String socketPath, int socketMode, int maxDataXferSize, int maxMsgFds, int maxDmaMaps,
                          int busyPollMicros) {
        /** The longest busy poll accepted: beyond a millisecond the thread is a spinning CPU, not a latency saver. */
        public static final int MAX_BUSY_POLL_MICROS = 1000;

        public Options {
            if (busyPollMicros < 0 || busyPollMicros > MAX_BUSY_POLL_MICROS) {
                throw new IllegalArgumentException("--busy-poll-us " + busyPollMicros + ": expected 0 to "
                        + MAX_BUSY_POLL_MICROS + " (microseconds)");
            }
        }

        public static Options defaults(String socketPath) {
            return new Options(socketPath, 0600, 1 << 20, 16, 65535, 0);
        }

        public Options withMaxDataXferSize(int bytes) {
            return new Options(socketPath, socketMode, bytes, maxMsgFds, maxDmaMaps, busyPollMicros);
        }

        public Options withSocketMode(int mode) {
            return new Options(socketPath, mode, maxDataXferSize, maxMsgFds, maxDmaMaps, busyPollMicros);
        }

        public Options withBusyPollMicros(int micros) {
            return new Options(socketPath, socketMode, maxDataXferSize, maxMsgFds, maxDmaMaps, micros);
        }

        /** Largest whole message: the data plus room for the header and the largest fixed part before it. */
        int maxMessageSize() {
            return maxDataXferSize + Header.SIZE + 64;
        }
    }

    private final VfioUserDevice device;
    private final Options options;
    private final EventLoopGroup group;
    private final boolean ownsGroup;
    /** Device loop only: read elsewhere through {@link #count}. */
    private final Counters<VfioCounter> counters = new Counters<>(VfioCounter.class);
    private volatile String lastClientVersionJson;
    private final Refusals refusals = new Refusals(LoggerFactory.getLogger("ernic.vfiouser.refusals"));
    private final AtomicReference<Connection> current = new AtomicReference<>();
    private final AtomicReference<Channel> client = new AtomicReference<>();
    private Channel listener;
    /** A socket opened before the server, which its listener takes over; null: the listener opens its own. */
    private final ListeningSocket socket;

    private VfioUserServer(VfioUserDevice device, Options options, EventLoopGroup group, boolean ownsGroup,
                           ListeningSocket socket) {
        this.device = device;
        this.options = options;
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.socket = socket;
    }

    /** A new single-thread epoll event loop: the device thread. */
    public static EventLoopGroup newDeviceLoop(String name) {
        return newDeviceLoop(name, 0);
    }

    /**
     * A new single-thread epoll event loop that polls for {@code busyPollMicros} after its last work before it
     * sleeps ({@link BusyPoll}; 0: Netty's own strategy, which sleeps at once).
     */
    public static EventLoopGroup newDeviceLoop(String name, int busyPollMicros) {
        Epoll.ensureAvailability();
        IoHandlerFactory handlers = busyPollMicros == 0 ? EpollIoHandler.newFactory()
                : EpollIoHandler.newFactory(0, () -> new BusyPoll(TimeUnit.MICROSECONDS.toNanos(busyPollMicros),
                        Ticker.systemTicker()));
        return new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(name, true), handlers);
    }

    /** Starts a server on its own device thread. */
    public static VfioUserServer start(VfioUserDevice device, Options options) throws IOException {
        return start(device, options, newDeviceLoop("ernic-device", options.busyPollMicros()), true);
    }

    /** Starts a server on {@code group}'s (single) event loop, which the caller owns. */
    public static VfioUserServer start(VfioUserDevice device, Options options, EventLoopGroup group) throws IOException {
        return start(device, options, group, false, null);
    }

    /**
     * Starts a server on {@code group}'s (single) event loop, which the caller owns, on a socket the caller opened
     * at {@code options}' path before (a client may be waiting in its backlog); the server takes the socket over.
     */
    public static VfioUserServer start(VfioUserDevice device, Options options, EventLoopGroup group,
                                       ListeningSocket socket) throws IOException {
        return start(device, options, group, false, socket);
    }

    private static VfioUserServer start(VfioUserDevice device, Options options, EventLoopGroup group, boolean owns)
            throws IOException {
        return start(device, options, group, owns, null);
    }

    private static VfioUserServer start(VfioUserDevice device, Options options, EventLoopGroup group, boolean owns,
                                        ListeningSocket socket) throws IOException {
        VfioUserServer s = new VfioUserServer(device, options, group, owns, socket);
        try {
            s.bind();
        } catch (IOException | RuntimeException e) {
            if (socket != null) {
                socket.close(); // unless the listener took it over, which then closed it
            }
            if (owns) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
            throw e;
        }
        return s;
    }

    private void bind() throws IOException {
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channelFactory(() -> socket != null ? new FdServerChannel(socket)
                        : new FdServerChannel(options.socketMode()))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        accepted(ch);
                    }
                });
        try {
            listener = b.bind(new DomainSocketAddress(options.socketPath())).sync().channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while binding " + options.socketPath(), e);
        } catch (Exception e) {
            throw e instanceof IOException io ? io : new IOException("cannot listen on " + options.socketPath()
                    + ": " + e.getMessage(), e);
        }
        LOG.info("vfio-user server listening on {}", options.socketPath());
    }

    private void accepted(Channel ch) {
        counters.inc(VfioCounter.CONNECTIONS);
        // One client at a time: stop accepting until this one goes.
        listener.config().setAutoRead(false);
        Connection c = new Connection(device, options, counters, refusals, json -> lastClientVersionJson = json);
        current.set(c);
        client.set(ch);
        ch.pipeline().addLast("framer", new MessageFramer(options.maxMessageSize(), c));
        ch.pipeline().addLast("encoder", MessageEncoder.INSTANCE);
        ch.pipeline().addLast("connection", c);
        ch.closeFuture().addListener(f -> {
            current.compareAndSet(c, null);
            client.compareAndSet(ch, null);
            if (listener.isOpen()) {
                listener.config().setAutoRead(true);
                listener.read();
            }
        });
        LOG.info("vfio-user client connected");
    }

    public EventLoop eventLoop() {
        return group.next();
    }

    /** The server's counters, to register under {@code vfio.}; device loop only (plain longs). */
    public Counters<VfioCounter> counters() {
        return counters;
    }

    /**
     * One counter from any thread: read on the device loop (at once when called there), or directly
     * once the loop has ended and nothing counts any more.
     */
    public long count(VfioCounter c) {
        EventLoop loop = eventLoop();
        if (loop.inEventLoop() || loop.isTerminated()) {
            return counters.get(c);
        }
        try {
            return loop.submit(() -> counters.get(c)).syncUninterruptibly().getNow();
        } catch (RejectedExecutionException e) {
            return counters.get(c); // the loop is ending: nothing counts any more
        }
    }

    /** The JSON the last client proposed in VERSION, or null. Any thread. */
    public String lastClientVersionJson() {
        return lastClientVersionJson;
    }

    public Refusals refusals() {
        return refusals;
    }

    /**
     * Registers the server's counters in {@code r}: {@code vfio.} ({@link VfioCounter}) and the refusals of the
     * protocol layer by cause, {@code vfio.refused} labelled {@code cause}. Device loop.
     */
    public void registerCounters(CounterRegistry r) {
        r.register("vfio.", counters);
        refusals.registerIn(r, "vfio.refused");
    }

    /** The connection being served, or null. */
    public Connection connection() {
        return current.get();
    }

    public String socketPath() {
        return options.socketPath();
    }

    @Override
    public void close() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
        }
        Channel ch = client.get();
        if (ch != null) {
            // Closing the client's channel runs the connection's cleanup (device detach, unmaps) on the
            // device thread; wait for it, so the caller may then close what the device uses.
            ch.close().syncUninterruptibly();
        }
        if (ownsGroup) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
