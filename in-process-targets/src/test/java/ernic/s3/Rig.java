package ernic.s3;

import ernic.ipstack.IpEndpoint;
import ernic.ipstack.TcpConnection;
import ernic.ipstack.NetCounter;
import ernic.ipstack.GuestLink;
import ernic.ipstack.StreamHandler;

import ernic.counters.Counters;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * A simulated link between test guests and one {@link IpEndpoint}: frames each way, optionally lost at a
 * given rate (seeded, so a run is repeatable); time is a mock ticker advanced only when the link is idle.
 */
final class Rig {
    final MockTicker ticker = Ticker.newMockTicker();
    final Counters<NetCounter> net = new Counters<>(NetCounter.class);
    final IpEndpoint endpoint;
    final ArrayDeque<byte[]> toGuest = new ArrayDeque<>();
    /** What the sink says it takes now (the guest's queue for in-process frames). */
    int guestRoom = Integer.MAX_VALUE;
    /**
     * When positive, the sink is a queue of this many frames instead: its room is what {@link #toGuest} does not
     * hold yet, so frames sent fill it and frames taken off it free it.
     */
    int guestQueueSlots;
    final Map<Integer, GuestTcp> guests = new HashMap<>();
    final Random random = new Random(42);
    double lossToStore, lossToGuest;
    int lostToStore, lostToGuest;
    /** Frames the store sent that no guest connection took (ARP and ICMP replies, RSTs). */
    final ArrayDeque<byte[]> unclaimed = new ArrayDeque<>();

    Rig(Function<TcpConnection, StreamHandler> acceptor) {
        endpoint = new IpEndpoint(GuestFrames.STORE_IP, 9000, new GuestLink() {
            @Override
            public void send(java.lang.foreign.MemorySegment seg) {
                if (lossToGuest > 0 && random.nextDouble() < lossToGuest) {
                    lostToGuest++;
                    return;
                }
                toGuest.add(seg.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }

            @Override
            public int room() {
                return guestQueueSlots > 0 ? guestQueueSlots - toGuest.size() : guestRoom;
            }
        }, ticker, net, acceptor);
    }

    /** A frame from the guest to the store (possibly lost); true if the store claimed it. */
    boolean send(byte[] frame) {
        if (lossToStore > 0 && random.nextDouble() < lossToStore) {
            lostToStore++;
            return true;
        }
        boolean claimed = endpoint.receive(frame, frame.length);
        endpoint.endOfBatch(); // one frame per doorbell
        return claimed;
    }

    GuestTcp connect(int port) {
        GuestTcp g = new GuestTcp(this, port);
        guests.put(port, g);
        g.connect();
        return g;
    }

    /** Delivers queued frames; true if any moved. */
    boolean deliver() {
        boolean moved = false;
        for (GuestTcp g : guests.values()) {
            moved |= g.pump();
        }
        while (!toGuest.isEmpty()) {
            byte[] f = toGuest.poll();
            moved = true;
            if (f.length >= 34 && f[12] == 8 && f[13] == 0 && f[23] == 6) {
                GuestFrames.Segment s = GuestFrames.parseTcp(f);
                GuestTcp g = guests.get(s.dport());
                if (g != null) {
                    g.onSegment(s);
                    continue;
                }
            }
            unclaimed.add(f);
        }
        return moved;
    }

    /** Runs the link until {@code done}, advancing time by 10 ms whenever nothing moves. */
    void run(BooleanSupplier done, long maxMillis) {
        long waited = 0;
        while (!done.getAsBoolean()) {
            if (!deliver()) {
                if (waited >= maxMillis) {
                    throw new AssertionError("the link did not get there in " + maxMillis + " ms of mock time");
                }
                ticker.advanceMillis(10);
                waited += 10;
                endpoint.tick();
                for (GuestTcp g : guests.values()) {
                    g.tick(ticker.nanoTime());
                }
            }
        }
    }
}
