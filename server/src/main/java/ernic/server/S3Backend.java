package ernic.server;

import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.IonicDevice;
import ernic.ionic.eth.FrameClaimer;
import ernic.ionic.target.s3.FrameSink;
import ernic.ionic.target.s3.HttpCounter;
import ernic.ionic.target.s3.IpEndpoint;
import ernic.ionic.target.s3.NetCounter;
import ernic.ionic.target.s3.S3Counter;
import ernic.ionic.target.s3.S3Options;
import ernic.ionic.target.s3.S3Store;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * {@code --backend s3[:...]}: the in-process S3 store as a host on the guest's Ethernet segment. The guest's
 * transmitted frames to the store's address are claimed before the TAP, the store's frames are queued into
 * the guest's receive path, token transfers reach guest memory through the RDMA side's {@code HostMemory}.
 * Everything runs on the device thread; a power-on reset of the device drops the store's connections (the
 * guest's stack is gone too), the objects stay.
 */
final class S3Backend {
    private static final Logger log = LoggerFactory.getLogger(S3Backend.class);
    /** The TCP timers' resolution: the shortest retransmission time-out is 200 ms. */
    static final long TICK_MILLIS = 50;

    private final IonicDevice ionic;
    private final IpEndpoint endpoint;
    private final FrameClaimer claimer;
    private final ScheduledFuture<?> timer;

    /** Whether a {@code --backend} value names the S3 store rather than a mesh. */
    static boolean names(String backend) {
        return backend.equals("s3") || backend.startsWith("s3:");
    }

    private S3Backend(S3Options options, IonicDevice ionic, EventLoop loop, CounterRegistry registry) {
        this.ionic = ionic;
        Counters<NetCounter> net = new Counters<>(NetCounter.class);
        Counters<HttpCounter> http = new Counters<>(HttpCounter.class);
        Counters<S3Counter> s3 = new Counters<>(S3Counter.class);
        S3Store store = new S3Store(options, ionic.rdma().hostMemory(), Clock.systemUTC(), http, s3);
        // The sink's frame is the endpoint's one transmit buffer: queueForGuest copies it.
        FrameSink toGuest = new FrameSink() {
            @Override
            public void send(MemorySegment frame) {
                ionic.queueForGuest(frame);
            }

            @Override
            public int room() {
                return ionic.guestQueueRoom();
            }
        };
        endpoint = new IpEndpoint(options.ip(), options.port(), toGuest, loop.ticker(), net, store::accept);
        claimer = claimer(endpoint);
        ionic.addTxClaimer(claimer);
        ionic.onReset(endpoint::reset);
        registry.register("s3.", net);
        registry.register("s3.", http);
        registry.register("s3.", s3);
        timer = loop.scheduleAtFixedRate(endpoint::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * The TX claimer of an in-process IP endpoint: its frames, one answer per doorbell's batch, and data held
     * back for a full guest queue sent as soon as the guest posts RX buffers.
     */
    static FrameClaimer claimer(IpEndpoint endpoint) {
        return new FrameClaimer() {
            @Override
            public boolean claim(MemorySegment frame) {
                return endpoint.receive(frame);
            }

            @Override
            public void endOfBatch() {
                endpoint.endOfBatch();
            }

            @Override
            public void guestQueueDrained() {
                endpoint.roomAgain();
            }
        };
    }

    /** Builds the store on the device thread {@code loop} and logs where it answers. */
    static S3Backend start(S3Options options, IonicDevice ionic, EventLoop loop, CounterRegistry registry) {
        S3Backend b = loop.submit(() -> new S3Backend(options, ionic, loop, registry)).syncUninterruptibly().getNow();
        log.info("s3 store: {} (bucket {}, MAC {}, {} bytes, {} objects)", options.endpointUrl(), options.bucket(),
                options.mac(), options.size(), options.objects());
        return b;
    }

    /** Stops the timers and lets go of the guest's frames; on the device thread. */
    void closeOnLoop() {
        timer.cancel(false);
        ionic.removeTxClaimer(claimer);
        endpoint.reset();
    }
}
