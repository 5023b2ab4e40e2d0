package ernic.it.mesh;

import ernic.model.rdma.AdminException;
import ernic.model.rdma.Path;
import ernic.model.rdma.Qp;
import ernic.model.rdma.RdmaVerbs;
import ernic.model.rdma.SendWr;
import ernic.model.rdma.Wc;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_ATOMIC;
import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_READ;
import static ernic.model.rdma.RdmaVerbs.QP_REMOTE_WRITE;
import static ernic.model.rdma.RdmaVerbs.RC;

/**
 * Operations from guest {@code a} into guest {@code b}'s memory, as an application would run them through faults,
 * each with a sequence number of its own and a slot of its own in {@code b}: operation {@code seq} is a WRITE of
 * {@code MAGIC | seq} (and filler up to the slot size) into slot {@code seq}, or, with 8-byte slots and an odd
 * {@code seq}, a FETCH_ADD of 1 on slot {@code seq}, whose final value counts how many times it landed. At most
 * {@code window} are in flight. When one completes in error (its QP is then in ERROR and the rest are flushed), the
 * stream waits for every completion, and, if {@link #reconnect} allows, connects a new QP pair (to whatever
 * {@link #b} is then) and goes on. Runs on its own thread; the guests it uses belong to it while it runs.
 */
final class WriteStream implements Runnable {
    static final long MAGIC = 0x5EC0_0000_0000_0000L;
    /** No completion for this long while operations are outstanding: the test calls that a hang. */
    static final long HUNG_NANOS = TimeUnit.MINUTES.toNanos(3);
    static final int FLAGS = QP_REMOTE_WRITE | QP_REMOTE_READ | QP_REMOTE_ATOMIC;

    final String name;
    final FaultGuest a;
    volatile FaultGuest b;
    /** Whether a new QP pair may be connected after an error (off while {@code b}'s server is stopped or dead). */
    volatile boolean reconnect = true;
    volatile boolean stop;
    final int window;
    /**
     * The mixed form ({@link #mixed}): with slots larger than 8 bytes, operation {@code seq} is by {@code seq % 4} a
     * WRITE of the whole slot, a 64-byte WRITE, a quarter-slot WRITE or a FETCH_ADD of 1 on the slot's first word.
     */
    private boolean mixed;
    final int[] status;
    final FaultGuest[] target;
    volatile int posted, ok, failed, epochs;
    /** Why the stream stopped early: no completion for {@link #HUNG_NANOS}, or an exception. */
    volatile String abnormal;
    final TreeMap<Integer, Integer> statuses = new TreeMap<>();
    private Qp qa, qb;
    private FaultGuest qbGuest;
    private int outstanding;
    private boolean broken;
    private final SendWr wr = new SendWr();
    private final Wc wc = new Wc();

    WriteStream(String name, FaultGuest a, FaultGuest b, int window) {
        this.name = name;
        this.a = a;
        this.b = b;
        this.window = window;
        this.status = new int[Math.min(a.slots, b.slots)];
        this.target = new FaultGuest[status.length];
        Arrays.fill(status, -1);
    }

    boolean isAtomic(int seq) {
        return b.slotBytes == 8 ? (seq & 1) == 1 : mixed && (seq & 3) == 3;
    }

    /** Large and small operations mixed (see {@link #mixed}); call before the stream starts. */
    WriteStream mixed() {
        mixed = true;
        return this;
    }

    /** The bytes a WRITE {@code seq} puts into a slot of {@code slotBytes}: its stamp, then the filler. */
    int writeBytes(int seq, int slotBytes) {
        if (!mixed || slotBytes <= 64) {
            return slotBytes;
        }
        return switch (seq & 3) {
            case 1 -> 64;
            case 2 -> Math.max(64, slotBytes / 4);
            default -> slotBytes;
        };
    }

    /** Connects a new QP pair; false (after a pause) when an end refused or is gone. */
    boolean connect() {
        FaultGuest t = b;
        try {
            Qp x = a.v.createQp(RC, a.cq, a.cq, 7, 2, 8, FLAGS); // room for the window (at most 64)
            Qp y = t.v.createQp(RC, t.cq, t.cq, 2, 2, 8, FLAGS);
            a.v.init(x, FLAGS);
            a.v.rtr(x, y.id, Path.of(a.ip, t.ip));
            a.v.rts(x);
            t.v.init(y, FLAGS);
            t.v.rtr(y, x.id, Path.of(t.ip, a.ip));
            t.v.rts(y);
            qa = x;
            qb = y;
            qbGuest = t;
            broken = false;
            epochs++;
            return true;
        } catch (IOException | RuntimeException e) {
            String why = e instanceof AdminException ae ? "admin status " + ae.status : e.toString();
            System.out.println(name + ": connecting a QP pair failed (" + why + "), trying again");
            sleep(500);
            return false;
        }
    }

    @Override
    public void run() {
        try {
            stream();
        } catch (RuntimeException | Error e) {
            abnormal = name + " failed: " + e;
            throw e;
        }
    }

    private void stream() {
        long lastProgress = System.nanoTime();
        while (!stop && abnormal == null) {
            if (qa == null) {
                if (posted >= status.length || !reconnect || !connect()) {
                    if (posted >= status.length) {
                        break;
                    }
                    sleep(200);
                    continue;
                }
            }
            while (!broken && outstanding < window && posted < status.length && !stop) {
                post(posted);
            }
            if (outstanding == 0) {
                retire();
                continue;
            }
            if (a.v.pollWait(a.cq, wc, 100)) {
                complete();
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > HUNG_NANOS) {
                abnormal = name + ": no completion for 3 minutes with " + outstanding + " outstanding";
            }
        }
        drain();
    }

    private void post(int seq) {
        FaultGuest t = b;
        wr.reset();
        wr.wrId = seq;
        wr.rkey = t.mr.rkey();
        wr.remoteVa = t.mr.va() + t.slot(seq);
        if (isAtomic(seq)) {
            wr.opcode = RdmaVerbs.ATOMIC_FA;
            wr.swapAdd = 1;
            wr.sge(a.mr.va() + a.stamp(seq), 8, a.mr.lkey());
        } else {
            a.buf.putLong(a.stamp(seq), MAGIC | seq);
            wr.opcode = RdmaVerbs.WRITE;
            wr.sge(a.mr.va() + a.stamp(seq), 8, a.mr.lkey());
            int bytes = writeBytes(seq, t.slotBytes);
            if (bytes > 8) {
                wr.sge(a.mr.va() + a.filler(), bytes - 8, a.mr.lkey());
            }
        }
        target[seq] = t;
        a.v.postSend(qa, wr);
        outstanding++;
        posted = seq + 1;
    }

    private void complete() {
        int seq = (int) wc.wrId;
        status[seq] = wc.status;
        statuses.merge(wc.status, 1, Integer::sum);
        outstanding--;
        if (wc.ok()) {
            ok++;
        } else {
            failed++;
            broken = true; // the QP is in ERROR: the rest come flushed
        }
    }

    /** A broken QP pair, every completion in: gone, so that a new one is connected. */
    private void retire() {
        if (qa == null || !broken && posted < status.length && !stop) {
            return;
        }
        try {
            a.v.destroyQp(qa);
            if (reconnect && qbGuest == b) {
                qbGuest.v.destroyQp(qb);
            }
        } catch (IOException | RuntimeException e) {
            // the peer's server is gone or stopped: its QP goes with it
        }
        qa = null;
        sleep(500); // as an application backs off before connecting again
    }

    private void drain() {
        long last = System.nanoTime();
        while (outstanding > 0 && abnormal == null) {
            if (a.v.pollWait(a.cq, wc, 100)) {
                complete();
                last = System.nanoTime();
            } else if (System.nanoTime() - last > HUNG_NANOS) {
                abnormal = name + ": no completion for 3 minutes with " + outstanding + " outstanding (draining)";
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What the operations did, read from the guests' memory after the stream ended. */
    record Outcome(int posted, int ok, int failed, int landedAfterOk, int landedAfterError, int notLandedAfterError,
                   int landedTwice, int okButNotLanded, int wrongValue, int neverCompleted, int strays,
                   String statuses) {
        @Override
        public String toString() {
            return posted + " posted: " + ok + " OK (landed " + landedAfterOk + "), " + failed + " in error (landed "
                    + landedAfterError + ", not landed " + notLandedAfterError + "), statuses " + statuses
                    + "; landed twice " + landedTwice + ", OK but not landed " + okButNotLanded + ", wrong value "
                    + wrongValue + ", never completed " + neverCompleted + ", stray writes " + strays;
        }
    }

    /**
     * Whether the bytes of slot {@code seq} after its first word are what operation {@code seq} leaves there: for a
     * WRITE that landed, {@code a}'s filler up to its length; zeros after that, and everywhere for an operation that
     * did not land or a FETCH_ADD.
     */
    private boolean restOfSlotRight(FaultGuest t, int seq, boolean landed) {
        if (t.slotBytes <= 8) {
            return true;
        }
        MemorySegment slot = t.buf.segment().asSlice(t.slot(seq), t.slotBytes);
        long data = landed && !isAtomic(seq) ? writeBytes(seq, t.slotBytes) : 8;
        if (data > 8 && slot.asSlice(8, data - 8).mismatch(a.buf.segment().asSlice(a.filler(), data - 8)) >= 0) {
            return false;
        }
        MemorySegment rest = slot.asSlice(data);
        return rest.byteSize() == 0 || rest.mismatch(MemorySegment.ofArray(new byte[(int) rest.byteSize()])) < 0;
    }

    /** Landings per operation (a FETCH_ADD's count, a WRITE's 0 or 1), checked against what {@code a} saw. */
    Outcome outcome() {
        int landedOk = 0, landedErr = 0, notLandedErr = 0, twice = 0, okNotLanded = 0, wrong = 0, never = 0;
        for (int seq = 0; seq < posted; seq++) {
            FaultGuest t = target[seq];
            long v = t.buf.getLong(t.slot(seq));
            int landed;
            if (isAtomic(seq)) {
                landed = (int) Math.min(v, 1000);
                if (status[seq] == RdmaVerbs.STS_OK && a.buf.getLong(a.stamp(seq)) != 0) {
                    wrong++; // the old value a successful FETCH_ADD returned shows an earlier landing
                }
            } else {
                landed = v == (MAGIC | seq) ? 1 : v == 0 ? 0 : -1;
            }
            if (landed >= 0 && !restOfSlotRight(t, seq, landed > 0)) {
                landed = -1; // a WRITE's bytes after its stamp are not the filler, or something lies past them
            }
            if (landed < 0) {
                wrong++;
                continue;
            }
            if (landed > 1) {
                twice++;
            }
            if (status[seq] < 0) {
                never++;
            } else if (status[seq] == RdmaVerbs.STS_OK) {
                if (landed == 0) {
                    okNotLanded++;
                } else {
                    landedOk++;
                }
            } else if (landed > 0) {
                landedErr++;
            } else {
                notLandedErr++;
            }
        }
        int strays = 0;
        for (FaultGuest t : Arrays.stream(target).filter(java.util.Objects::nonNull).distinct().toList()) {
            for (int seq = posted; seq < t.slots; seq++) {
                if (t.buf.getLong(t.slot(seq)) != 0) {
                    strays++;
                }
            }
        }
        return new Outcome(posted, ok, failed, landedOk, landedErr, notLandedErr, twice, okNotLanded, wrong, never,
                strays, statuses.toString());
    }
}
