package ernic.roce.rc;

import ernic.roce.rc.RcTestBed.Packet;

import java.lang.foreign.MemorySegment;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.function.LongConsumer;

/**
 * A lossy link between a test bed's requester and responder, on a clock the test advances: each packet is dropped,
 * duplicated and delayed (so reordered) at random, and during a blackout every packet is lost. {@link #run} drives
 * both engines and the requester's timers until nothing is left to do.
 */
final class RcChannel {
    private record InFlight(long at, long order, boolean toResponder, Packet packet) {
    }

    private final RcTestBed bed;
    private final Random random;
    private final int dropPercent, duplicatePercent;
    private final long latency, jitter;
    private final PriorityQueue<InFlight> queue =
            new PriorityQueue<>(Comparator.comparingLong(InFlight::at).thenComparingLong(InFlight::order));
    private long blackoutFrom = Long.MAX_VALUE, blackoutUntil = Long.MAX_VALUE;
    private long order;
    private LongConsumer clock = now -> {
    };
    private int takenFromRequester, takenFromResponder;
    /** Packets delivered, and lost to the random drop or to the blackout. */
    long delivered, dropped, blackedOut;
    /** Prints every packet and tick, to follow a failing sample. */
    boolean trace;

    RcChannel(RcTestBed bed, long seed, int dropPercent, int duplicatePercent, long latency, long jitter) {
        this.bed = bed;
        this.random = new Random(seed);
        this.dropPercent = dropPercent;
        this.duplicatePercent = duplicatePercent;
        this.latency = latency;
        this.jitter = jitter;
    }

    /** Every packet sent in {@code [from, until)} is lost. */
    RcChannel blackout(long from, long until) {
        this.blackoutFrom = from;
        this.blackoutUntil = until;
        return this;
    }

    /** Something the test does as time passes (called with the time before each step). */
    RcChannel onTime(LongConsumer clock) {
        this.clock = clock;
        return this;
    }

    private void collect(long now) {
        while (takenFromRequester < bed.toResponder.size()) {
            send(bed.toResponder.get(takenFromRequester++), true, now);
        }
        while (takenFromResponder < bed.toRequester.size()) {
            send(bed.toRequester.get(takenFromResponder++), false, now);
        }
    }

    private void send(Packet p, boolean toResponder, long now) {
        if (now >= blackoutFrom && now < blackoutUntil) {
            if (trace) System.out.println(now + " lost " + p);
            blackedOut++;
            return;
        }
        if (random.nextInt(100) < dropPercent) {
            dropped++;
            return;
        }
        int copies = random.nextInt(100) < duplicatePercent ? 2 : 1;
        for (int i = 0; i < copies; i++) {
            long delay = latency + (jitter > 0 ? random.nextLong(jitter + 1) : 0);
            queue.add(new InFlight(now + delay, order++, toResponder, p));
        }
    }

    /**
     * Runs until no packet is in flight and the requester has no timer armed (all messages completed, or the QP
     * failed); returns the time then.
     */
    long run(int maxSteps) {
        long now = 0;
        for (int step = 0; step < maxSteps; step++) {
            clock.accept(now);
            bed.requester.poll(now, Integer.MAX_VALUE);
            collect(now);
            InFlight next = queue.peek();
            long deadline = bed.requester.nextDeadline();
            if (next == null && deadline == Long.MAX_VALUE) {
                return now;
            }
            if (next == null || deadline < next.at()) {
                now = Math.max(now, deadline);
                if (trace) System.out.println(now + " tick ackPsn=" + bed.requester.ackPsn());
                bed.requester.tick(now);
                continue;
            }
            queue.poll();
            now = Math.max(now, next.at());
            delivered++;
            Packet p = next.packet();
            if (trace) System.out.println(now + (next.toResponder() ? " -> " : " <- ") + p);
            MemorySegment data = MemorySegment.ofArray(p.data());
            if (next.toResponder()) {
                bed.responder.receive(p.h(), data, 0, p.data().length, now);
            } else {
                bed.requester.receive(p.h(), data, 0, p.data().length, now);
            }
            collect(now);
        }
        throw new AssertionError("no end after " + maxSteps + " steps: " + bed.requester.outstanding()
                + " messages outstanding, ackPsn " + bed.requester.ackPsn() + ", next PSN "
                + bed.requester.nextPsn());
    }
}
