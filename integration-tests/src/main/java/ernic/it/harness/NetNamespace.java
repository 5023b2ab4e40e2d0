package ernic.it.harness;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
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

    /**
     * Runs {@code body} on a thread of its own that has first entered this namespace with setns(2) (a network
     * namespace is a property of each thread): a socket {@code body} opens belongs to this namespace, and stays
     * there whichever thread then uses it. Needs root, as the namespace itself does.
     */
    public <T> T inside(Callable<T> body) throws IOException {
        Object[] result = new Object[1];
        Throwable[] failure = new Throwable[1];
        Thread t = Thread.ofPlatform().name("netns-" + name).start(() -> {
            try {
                Setns.enter("/var/run/netns/" + name);
                result[0] = body.call();
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted entering namespace " + name);
        }
        if (failure[0] instanceof IOException e) {
            throw e;
        } else if (failure[0] != null) {
            throw new IOException("in namespace " + name + ": " + failure[0], failure[0]);
        }
        @SuppressWarnings("unchecked")
        T r = (T) result[0];
        return r;
    }

    /** open(2), setns(2) and close(2) through FFM, loaded only when a thread enters a namespace. */
    private static final class Setns {
        private static final int O_RDONLY_CLOEXEC = 0x80000, CLONE_NEWNET = 0x40000000;
        private static final Linker LINKER = Linker.nativeLinker();
        private static final MethodHandle OPEN = LINKER.downcallHandle(LINKER.defaultLookup().find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
                Linker.Option.firstVariadicArg(2));
        private static final MethodHandle SETNS = LINKER.downcallHandle(LINKER.defaultLookup().find("setns").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

        static void enter(String path) throws Throwable {
            int fd;
            try (Arena a = Arena.ofConfined()) {
                fd = (int) OPEN.invokeExact(a.allocateFrom(path), O_RDONLY_CLOEXEC);
            }
            if (fd < 0) {
                throw new IOException("cannot open " + path);
            }
            try {
                if ((int) SETNS.invokeExact(fd, CLONE_NEWNET) != 0) {
                    throw new IOException("setns(" + path + ") failed (not root?)");
                }
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        }
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
