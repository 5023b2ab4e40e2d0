package ernic.it.fuzz;

import ernic.server.ErnicServer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * One thing the fuzzer drives: a real server (or device) started in this process, fed one generated input at a
 * time. Every input comes from {@code rng}, which the runner derives from the seed and the input's index alone,
 * so input {@code i} of a seed is the same on every run.
 */
interface FuzzTarget extends AutoCloseable {
    /** vfio, ionic, mesh or roce. */
    String name();

    /** Starts the server (or device) this target drives. */
    void start() throws Exception;

    /**
     * Generates input {@code index} from {@code rng} and sends it. A {@link FuzzFailure} is a finding (a crash, a
     * wedge); the server closing a connection is not (the target reconnects at the next input).
     */
    void step(long index, SplittableRandom rng) throws Exception;

    /**
     * Ends what is open (client connections, the guest of this epoch) and waits until the server has cleaned up,
     * then checks that it still answers a valid request (a new connection and VERSION, a device bring-up, a
     * mesh registration). Resource samples are taken after this.
     */
    void quiesce() throws Exception;

    /** The inputs sent last (oldest first), described and as raw bytes, for the reproducer. */
    Recorder recorder();

    /** A short line of what this target counted (connections, closes by the server, replies, ...). */
    String stats();

    @Override
    void close();

    /** A socket path for this target's server: {@code DIR/NAME-PID.sock}, the directory made, a stale socket removed. */
    static String socketIn(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        Path socket = dir.resolve(name + "-" + ProcessHandle.current().pid() + ".sock");
        Files.deleteIfExists(socket);
        return socket.toString();
    }

    /** Waits for a no-op task on the server's device thread: the tasks before it (a connection's cleanup) have run. */
    static void awaitDeviceThread(ErnicServer server, long timeoutMs) throws FuzzFailure {
        try {
            server.vfioUser().eventLoop().submit(() -> { }).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            throw new FuzzFailure("the device thread does not run tasks any more", e);
        }
    }

    /** Removes this target's socket file; one left behind is replaced by the next run. */
    static void removeSocket(String socket) {
        try {
            Files.deleteIfExists(Path.of(socket));
        } catch (IOException | RuntimeException e) {
            // left behind: the next run replaces it
        }
    }
}
