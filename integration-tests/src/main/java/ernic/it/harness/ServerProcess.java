package ernic.it.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@code ernic serve} process, started as the launcher would (same JVM binary, same class path),
 * with its output streamed line by line under a prefix.
 */
public final class ServerProcess implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final Path socket;

    private ServerProcess(Process process, Path socket) {
        this.process = process;
        this.socket = socket;
    }

    public static ServerProcess start(Path socket, List<String> serverArgs, String prefix, PrintStream out)
            throws IOException {
        return start(socket, serverArgs, java.util.Map.of(), prefix, out);
    }

    /** Starts {@code ernic serve} with {@code env} added to its environment and waits for its socket. */
    public static ServerProcess start(Path socket, List<String> serverArgs, java.util.Map<String, String> env,
                                      String prefix, PrintStream out) throws IOException {
        return start(List.of(), socket, serverArgs, env, prefix, out);
    }

    /**
     * {@link #start(Path, List, java.util.Map, String, PrintStream)} under {@code launcher}, a command that runs the
     * server in its place by exec, such as {@code ip netns exec NS} (so {@link #process()} is the server itself).
     */
    public static ServerProcess start(List<String> launcher, Path socket, List<String> serverArgs,
                                      java.util.Map<String, String> env, String prefix, PrintStream out)
            throws IOException {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "ernic.server.Main", "serve", "--socket", socket.toString(),
                // It stops when this JVM ends, however it ends.
                "--exit-with", Long.toString(ProcessHandle.current().pid())));
        cmd.addAll(serverArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        Thread.ofPlatform().daemon().name("ernic-server-log").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    out.println(prefix + line);
                }
            } catch (IOException e) {
                // process gone
            }
        });
        ServerProcess s = new ServerProcess(p, socket);
        s.awaitSocket();
        return s;
    }

    private void awaitSocket() throws IOException {
        for (int i = 0; i < 600; i++) {
            if (Files.exists(socket)) {
                return;
            }
            if (!process.isAlive()) {
                throw new IOException("ernic serve exited with status " + process.exitValue() + " before listening on "
                        + socket);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }
        throw new IOException("ernic serve did not listen on " + socket + " within 30 s");
    }

    /**
     * A server's stats file ({@code --stats FILE}) as it reads now, or {@code otherwise} where it cannot be read: not
     * written yet, or renamed over while read.
     */
    public static JsonNode readStats(Path file, JsonNode otherwise) {
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            return otherwise;
        }
    }

    public Path socket() {
        return socket;
    }

    public Process process() {
        return process;
    }

    /** Kills the server at once (SIGKILL), as a crash would. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Sends the server {@code SIGSTOP} ({@code stop}) or {@code SIGCONT}: a host that hangs, then wakes. */
    public void suspend(boolean stop) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", stop ? "-STOP" : "-CONT", Long.toString(process.pid()))
                .inheritIO().start();
        if (k.waitFor() != 0) {
            throw new IOException("kill " + (stop ? "-STOP " : "-CONT ") + process.pid() + " failed");
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
