package ernic.it.mesh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The resident memory of server processes, sampled four times a second: each one's idle figure (when it is
 * watched, before its guest's traffic) and the most it reached. What is counted is the server's own: VmRSS less
 * RssShmem, the pages of its guest's RAM (a memfd the server maps) that the guest's traffic touched. A process
 * that is gone reads as 0.
 */
final class RssWatch implements AutoCloseable {
    /** A connection's send budget (its high write watermark) unless {@code queue=} sets another. */
    static final long DEFAULT_QUEUE_BYTES = 32L << 20;
    /** The one request that finds a connection under its budget and goes past it: at most a whole message. */
    static final long CROSSING_REQUEST_KIB = 16L << 10;
    static final long HELD_BUDGET_KIB = 64L << 10; // requests waiting for a receive, one for the whole node

    /**
     * What a server may add to its idle figure for one peer, by the documented budgets (docs/mesh.md): the requests
     * queued for it (the send budget and the request that crosses it) and the replies queued for it (their own room:
     * twice the budget, at least 64 MiB).
     */
    static long peerBudgetKiB(long queueBytes) {
        long q = queueBytes >> 10;
        return q + CROSSING_REQUEST_KIB + Math.max(64L << 10, 2 * q);
    }

    private final Map<String, long[]> watched = new ConcurrentHashMap<>(); // name -> {pid, idle, max}
    private final Thread sampler;
    private volatile boolean closed;

    RssWatch() {
        sampler = Thread.ofPlatform().daemon().name("rss-watch").start(() -> {
            while (!closed) {
                watched.values().forEach(w -> {
                    long kib = rssKiB(w[0]);
                    if (kib > w[2]) {
                        w[2] = kib;
                    }
                });
                try {
                    Thread.sleep(250);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    /** Starts watching {@code pid} under {@code name}; its RSS now is its idle figure. */
    long watch(String name, long pid) {
        long idle = rssKiB(pid);
        watched.put(name, new long[] {pid, idle, idle});
        return idle;
    }

    long idleKiB(String name) {
        return watched.get(name)[1];
    }

    long maxKiB(String name) {
        return watched.get(name)[2];
    }

    /** The bound for a server with {@code peers} peers: idle + the per-peer budgets + the held-request budget. */
    long boundKiB(String name, int peers) {
        return boundKiB(name, peers, DEFAULT_QUEUE_BYTES);
    }

    /** The same for a server whose connections have a send budget of {@code queueBytes}. */
    long boundKiB(String name, int peers, long queueBytes) {
        return idleKiB(name) + peers * peerBudgetKiB(queueBytes) + HELD_BUDGET_KIB;
    }

    String describe(String name) {
        return name + " RSS idle " + (idleKiB(name) >> 10) + " MiB, max " + (maxKiB(name) >> 10) + " MiB (+"
                + ((maxKiB(name) - idleKiB(name)) >> 10) + " MiB)";
    }

    static long rssKiB(long pid) {
        try {
            long rss = 0, guest = 0;
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                } else if (line.startsWith("RssShmem:")) {
                    guest = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            return rss - guest;
        } catch (IOException | RuntimeException gone) {
            return 0; // exited
        }
    }

    @Override
    public void close() {
        closed = true;
        sampler.interrupt();
    }
}
