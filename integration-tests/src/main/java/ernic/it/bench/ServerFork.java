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

    private ServerFork(Process process, Path dir, Path socket, Path log) {
        this.process = process;
        this.dir = dir;
        this.socket = socket;
        this.log = log;
    }

    static ServerFork start(List<String> args, Map<String, String> env) throws IOException, InterruptedException {
        return start(List.of(), args, env);
    }

    /**
     * The same under {@code launcher}, a command that runs the server in its place by exec, such as
     * {@code ip netns exec NS} ({@link ernic.it.harness.MeshLan#launcher}): the socket is a file, so the driver
     * model reaches it from this namespace.
     */
    static ServerFork start(List<String> launcher, List<String> args, Map<String, String> env)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("ernic-bench-server");
        Path socket = dir.resolve("ernic.sock"), log = dir.resolve("server.log");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of(javaBin, "--enable-native-access=ALL-UNNAMED"));
        String opts = System.getenv("ERNIC_JAVA_OPTS");
        if (opts != null && !opts.isBlank()) {
            cmd.addAll(List.of(opts.trim().split("\\s+")));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "ernic.server.Main", "serve",
                "--socket", socket.toString(), "--log-level", "WARN"));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        ServerFork f = new ServerFork(pb.start(), dir, socket, log);
        try {
            for (int i = 0; i < 300 && !Files.exists(socket); i++) {
                if (!f.process.isAlive()) {
                    throw new IOException("server exited: " + Files.readString(log));
                }
                Thread.sleep(100);
            }
            if (!Files.exists(socket)) {
                throw new IOException("server did not listen on " + socket + " within 30 s");
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
