package ernic.it.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real server process for the suite: {@code ernic.server.Main serve} in a forked JVM with the launcher's
 * flags ({@code --enable-native-access}, {@code ERNIC_JAVA_OPTS}) and this JVM's class path, listening on a
 * socket in a temporary directory. Closing it stops the process and removes the directory.
 */
final class ServerFork implements AutoCloseable {
    final Process process;
    final Path dir, socket, log;
    /** From the fork to the socket file's appearance (polled every millisecond), and the process's CPU then. */
    long socketOpenNanos, cpuAtSocketNanos;

    private ServerFork(Process process, Path dir, Path socket, Path log) {
        this.process = process;
        this.dir = dir;
        this.socket = socket;
        this.log = log;
    }

    static ServerFork start(List<String> args, Map<String, String> env) throws IOException, InterruptedException {
        return start(List.of(), args, env);
    }

    /** The server with {@code jvmOptions} in place of {@code ERNIC_JAVA_OPTS} (section 5's package settings). */
    static ServerFork withJvmOptions(List<String> jvmOptions, List<String> args)
            throws IOException, InterruptedException {
        return start(List.of(), jvmOptions, args, Map.of());
    }

    /**
     * The same under {@code launcher}, a command that runs the server in its place by exec, such as
     * {@code ip netns exec NS} ({@link ernic.it.harness.MeshLan#launcher}): the socket is a file, so the driver
     * model reaches it from this namespace.
     */
    static ServerFork start(List<String> launcher, List<String> args, Map<String, String> env)
            throws IOException, InterruptedException {
        String opts = System.getenv("ERNIC_JAVA_OPTS");
        return start(launcher, opts == null || opts.isBlank() ? List.of() : List.of(opts.trim().split("\\s+")), args,
                env);
    }

    private static ServerFork start(List<String> launcher, List<String> jvmOptions, List<String> args,
                                    Map<String, String> env) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("ernic-bench-server");
        Path socket = dir.resolve("ernic.sock"), log = dir.resolve("server.log");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of(javaBin, "--enable-native-access=ALL-UNNAMED"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "ernic.server.Main", "serve",
                "--socket", socket.toString(), "--log-level", "WARN"));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        long forked = System.nanoTime();
        ServerFork f = new ServerFork(pb.start(), dir, socket, log);
        try {
            long deadline = forked + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(socket) && System.nanoTime() < deadline) {
                if (!f.process.isAlive()) {
                    throw new IOException("server exited: " + Files.readString(log));
                }
                Thread.sleep(1);
            }
            if (!Files.exists(socket)) {
                throw new IOException("server did not listen on " + socket + " within 30 s");
            }
            f.socketOpenNanos = System.nanoTime() - forked;
            f.cpuAtSocketNanos = CpuCost.processNanos(f.pid());
            // The socket opens before the device thread and the device exist (ErnicServer.start): the suite reads
            // the device thread, so it waits for serve's line that says it is serving.
            while (!f.logText().contains("ernic: serving ") && System.nanoTime() < deadline) {
                if (!f.process.isAlive()) {
                    throw new IOException("server exited: " + Files.readString(log));
                }
                Thread.sleep(1);
            }
            if (!f.logText().contains("ernic: serving ")) {
                throw new IOException("server did not say it was serving within 30 s: " + f.logText());
            }
            return f;
        } catch (IOException | InterruptedException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    long pid() {
        return process.pid();
    }

    /** The server's log so far (for error messages). */
    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(log);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory left behind
        }
    }
}
