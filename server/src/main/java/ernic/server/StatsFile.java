package ernic.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * {@code --stats-file}: a JSON snapshot written about once a second and once at exit. The snapshot
 * is taken on the device event loop (the counters are device-thread state); the file is written on a
 * separate thread, so the device thread never waits for the disk. Each write goes to a temporary file
 * in the same directory that is then renamed over the target, so a reader never sees half a file.
 * A tick that finds the previous write still running is skipped.
 */
public final class StatsFile implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatsFile.class);
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path path;
    private final EventLoop loop;
    private final Supplier<Map<String, Object>> snapshot;
    private final ExecutorService writer;
    private final AtomicBoolean writing = new AtomicBoolean();
    private final AtomicBoolean failedOnce = new AtomicBoolean();
    private ScheduledFuture<?> timer;
    private volatile long writes;

    /**
     * @param snapshot called on {@code loop} only; returns a tree of maps, lists, strings and
     *                 numbers that no one else changes afterwards
     */
    public StatsFile(Path path, EventLoop loop, Supplier<Map<String, Object>> snapshot) {
        this.path = path.toAbsolutePath();
        this.loop = loop;
        this.snapshot = snapshot;
        this.writer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "ernic-stats-file");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the periodic snapshots (every {@code periodMs}, first one right away). */
    public StatsFile start(long periodMs) {
        timer = loop.scheduleAtFixedRate(this::tick, 0, periodMs, TimeUnit.MILLISECONDS);
        return this;
    }

    public Path path() {
        return path;
    }

    /** Files written so far. */
    public long writes() {
        return writes;
    }

    /** On the loop: takes a snapshot and hands it to the writer, unless a write is still running. */
    private void tick() {
        if (!writing.compareAndSet(false, true)) {
            return;
        }
        Map<String, Object> s;
        try {
            s = snapshot.get();
        } catch (RuntimeException e) {
            writing.set(false);
            log.warn("stats snapshot failed: {}", e.toString());
            return;
        }
        try {
            writer.execute(() -> {
                try {
                    writeQuietly(s);
                } finally {
                    writing.set(false);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            writing.set(false);
        }
    }

    private void writeQuietly(Map<String, Object> s) {
        try {
            write(path, s);
            writes++;
        } catch (IOException | RuntimeException e) {
            if (failedOnce.compareAndSet(false, true)) {
                log.warn("cannot write the stats file {}: {} (further failures are not logged)", path, e.toString());
            }
        }
    }

    /** Writes {@code snapshot} as JSON to {@code path} atomically (temporary file, then rename), mode 0644. */
    public static void write(Path path, Object snapshot) throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + path.getFileName() + ".", ".tmp");
        try {
            // Readable by a monitoring agent running as another user (createTempFile makes it 0600).
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: keep the default
        }
        try {
            JSON.writeValue(tmp.toFile(), snapshot);
            try {
                Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Stops the ticks and writes one last snapshot (taken on the loop if it still runs), waiting for
     * the write. Call before the device goes away, so the last file shows its counters.
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.cancel(false);
        }
        try {
            if (!loop.isShuttingDown()) {
                Map<String, Object> last = loop.submit(snapshot::get).get(5, TimeUnit.SECONDS);
                writer.submit(() -> writeQuietly(last)).get(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("last stats snapshot failed: {}", e.toString());
        } finally {
            writer.shutdown();
            try {
                writer.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
