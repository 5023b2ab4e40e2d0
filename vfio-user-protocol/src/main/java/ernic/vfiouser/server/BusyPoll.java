package ernic.vfiouser.server;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.Ticker;

/**
 * How the device thread waits for its sockets with {@code --busy-poll-us}: after its last work (a ready socket
 * or a task) it keeps asking epoll without sleeping for a while, then sleeps as usual. A doorbell, a mesh frame
 * or a reply that arrives within that time is taken up without the wake-up of a sleeping thread (tens of
 * microseconds on a virtual machine), at the cost of a CPU kept busy while traffic flows. Netty's own busy
 * wait never sleeps; this one does once the traffic stops, so an idle server costs nothing.
 */
final class BusyPoll implements SelectStrategy {
    private final long pollNanos;
    private final Ticker ticker;
    private long lastWork;

    BusyPoll(long pollNanos, Ticker ticker) {
        this.pollNanos = pollNanos;
        this.ticker = ticker;
        this.lastWork = ticker.nanoTime();
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        int ready = selectNow.get();
        long now = ticker.nanoTime();
        if (ready > 0 || hasTasks) {
            lastWork = now;
            return ready; // what is ready is handled, then the tasks run
        }
        if (now - lastWork < pollNanos) {
            Thread.onSpinWait();
            return SelectStrategy.CONTINUE; // the loop runs due tasks and asks again
        }
        return SelectStrategy.SELECT; // quiet for the whole poll: sleep in epoll until something comes
    }
}
