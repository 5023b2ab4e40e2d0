package ernic.it.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace of the harness's own (iproute2): the host end of a guest's TAP lives here,
 * so test traffic reaches only addresses the test itself created.
 */
public final class NetNamespace implements AutoCloseable {
    private final String name;

    private NetNamespace(String name) {
        this.name = name;
    }

    /**
     * Makes namespace {@code name}, which is to be {@code ernic-KIND-PID} with this JVM's PID: the JVM removes
     * it when it ends, and a later run reaps it if this one is killed ({@link Leftovers}).
     */
    public static NetNamespace create(String name) throws IOException {
        Leftovers.removeOursAtExit();
        run(List.of("ip", "netns", "del", name), true);
        run(List.of("ip", "netns", "add", name), false);
        NetNamespace ns = new NetNamespace(name);
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    public String name() {
        return name;
    }

    /** Moves host interface {@code ifname} (a TAP, say) into this namespace. */
    public void adopt(String ifname) throws IOException {
        run(List.of("ip", "link", "set", ifname, "netns", name), false);
    }

    /** Runs a command inside the namespace and returns its output; a non-zero exit is an IOException. */
    public String exec(String... command) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", name));
        cmd.addAll(List.of(command));
        return run(cmd, false);
    }

    /** Starts a long-running command inside the namespace. */
    public Process start(String... command) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", name));
        cmd.addAll(List.of(command));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    static String run(List<String> cmd, boolean ignoreFailure) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no answer within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0 && !ignoreFailure) {
            throw new IOException(String.join(" ", cmd) + " exited with " + p.exitValue() + ": " + out.trim());
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        run(List.of("ip", "netns", "del", name), true);
    }
}
