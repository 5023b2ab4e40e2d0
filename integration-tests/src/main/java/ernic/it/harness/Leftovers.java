package ernic.it.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What runs leave on the host, found by the owner's PID: network namespaces named
 * {@code ernic-KIND-PID} (their bridge and the TAPs moved into them go with them), socket directories of the
 * same name in the temporary directory, and guest containers labelled {@value #PID_LABEL}. A JVM that makes either removes its own when it ends, also on SIGTERM or
 * Ctrl-C ({@link #removeOursAtExit}); servers it started stop with it ({@code ernic serve --exit-with}).
 * SIGKILL runs nothing, so every start reaps what runs whose PID no longer exists left behind.
 */
public final class Leftovers {
    /** The container label naming the PID of the process that started a guest. */
    public static final String PID_LABEL = "ernic.pid";
    private static final Pattern NETNS = Pattern.compile("^(ernic-[a-z]+-(\\d+))\\b", Pattern.MULTILINE);
    private static final Pattern DIR = Pattern.compile("ernic-[a-z]+-(\\d+)");

    private static boolean hooked;

    private Leftovers() {
    }

    /** Makes this JVM remove its guest containers and namespaces when it exits, however it is stopped but SIGKILL. */
    public static synchronized void removeOursAtExit() {
        if (hooked) {
            return;
        }
        hooked = true;
        long pid = ProcessHandle.current().pid();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                removeOf(pid);
            } catch (IOException e) {
                System.err.println("ernic: could not remove this run's containers and namespaces: " + e.getMessage());
            }
        }, "ernic-leftovers"));
    }

    /** Removes the namespaces and containers of runs whose process is gone, saying what it removed. */
    public static void reap(PrintStream out) {
        try {
            for (Owned o : inRemovalOrder(all())) {
                if (ProcessHandle.of(o.pid).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                out.println("ernic: removing " + o.what + " " + o.name + ", left by process " + o.pid
                        + " which no longer runs");
                remove(o);
            }
        } catch (IOException e) {
            out.println("ernic: could not look for what earlier runs left: " + e.getMessage());
        }
    }

    /** Removes what process {@code pid} started (its guest containers and namespaces). */
    public static void removeOf(long pid) throws IOException {
        for (Owned o : inRemovalOrder(of(pid))) {
            remove(o);
        }
    }

    /**
     * Containers first, directories last: starting a container whose bind-mounted directory is gone makes the
     * docker daemon create that directory again, so a socket directory removed while a guest's container was
     * still starting came back (seen in CI as a left-over {@code /tmp/ernic-run-PID} after SIGTERM mid-boot).
     */
    private static List<Owned> inRemovalOrder(List<Owned> owned) {
        List<String> order = List.of("container", "netns", "dir");
        return owned.stream().sorted(Comparator.comparingInt(o -> order.indexOf(o.what))).toList();
    }

    /** What process {@code pid} has on the host: its namespaces and guest containers. */
    public static List<Owned> of(long pid) throws IOException {
        List<Owned> mine = new ArrayList<>();
        for (Owned o : all()) {
            if (o.pid == pid) {
                mine.add(o);
            }
        }
        return mine;
    }

    /** One thing a run left: a network namespace, a socket directory or a container. */
    public record Owned(String what, String name, long pid) {
        @Override
        public String toString() {
            return what + " " + name + " (pid " + pid + ")";
        }
    }

    private static List<Owned> all() throws IOException {
        List<Owned> found = new ArrayList<>();
        Matcher m = NETNS.matcher(run(List.of("ip", "netns", "list")));
        while (m.find()) {
            found.add(new Owned("netns", m.group(1), Long.parseLong(m.group(2))));
        }
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (var dirs = Files.newDirectoryStream(tmp, "ernic-*")) {
            for (Path d : dirs) {
                Matcher dm = DIR.matcher(d.getFileName().toString());
                if (dm.matches() && Files.isDirectory(d)) {
                    found.add(new Owned("dir", d.toString(), Long.parseLong(dm.group(1))));
                }
            }
        }
        String ps = run(List.of("docker", "ps", "-a", "--filter", "label=" + PID_LABEL, "--format",
                "{{.ID}} {{.Label \"" + PID_LABEL + "\"}}"));
        for (String line : ps.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 2 && f[1].matches("\\d+")) {
                found.add(new Owned("container", f[0], Long.parseLong(f[1])));
            }
        }
        return found;
    }

    private static void remove(Owned o) throws IOException {
        switch (o.what) {
            case "netns" -> run(List.of("ip", "netns", "del", o.name));
            case "dir" -> deleteTree(Path.of(o.name));
            default -> run(List.of("docker", "rm", "-f", o.name));
        }
    }

    /** Deletes a directory and what is in it, as far as it can. */
    static void deleteTree(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("ernic: could not remove " + dir + ": " + e.getMessage());
        }
    }

    /** Runs a host command and returns its output; a tool that is missing yields nothing to reap. */
    private static String run(List<String> cmd) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return "";
        }
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no answer within 60 s");
            }
            return p.exitValue() == 0 ? out : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", cmd));
        }
    }
}
