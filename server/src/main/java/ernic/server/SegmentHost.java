package ernic.server;

import ernic.ionic.IonicDevice;
import ernic.ipstack.GuestLink;
import ernic.ipstack.IpEndpoint;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * An in-process IP host on the guest's Ethernet segment (the S3 store, the NVMe-oF target's address), with the one
 * lifecycle every such host has: the guest's frames to it are claimed before the TAP, its frames go into the
 * guest's receive path, its TCP timers run every {@link #TICK_MILLIS}, a power-on reset of the device drops its
 * connections (the guest's stack is gone too), and {@link #close} lets go of the guest's frames. Device thread.
 */
final class SegmentHost implements AutoCloseable {
    /** The TCP timers' resolution: the shortest retransmission time-out is 200 ms. */
    static final long TICK_MILLIS = 50;

    private final IonicDevice ionic;
    private final IpEndpoint endpoint;
    private final ScheduledFuture<?> timer;

    /** Where an endpoint's frames to the guest go: queued for its receive path, as long as the queue has room. */
    static GuestLink toGuest(IonicDevice ionic) {
        return new GuestLink() {
            @Override
            public void send(MemorySegment frame) {
                ionic.queueForGuest(frame); // copies the endpoint's one transmit buffer
            }

            @Override
            public int room() {
                return ionic.guestQueueRoom();
            }
        };
    }

    /** Puts {@code endpoint} on the guest's segment; on the device thread {@code loop}. */
    SegmentHost(IpEndpoint endpoint, IonicDevice ionic, EventLoop loop) {
        this.ionic = ionic;
        this.endpoint = endpoint;
        ionic.lif().addTxClaimer(endpoint);
        ionic.onReset(endpoint::reset);
        timer = loop.scheduleAtFixedRate(endpoint::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Stops the timer and lets go of the guest's frames; on the device thread. */
    @Override
    public void close() {
        timer.cancel(false);
        ionic.lif().removeTxClaimer(endpoint);
        endpoint.reset();
    }
}
