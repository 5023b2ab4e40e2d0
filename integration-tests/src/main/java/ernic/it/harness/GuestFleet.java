package ernic.it.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * The servers and the Ethernet segment behind N guests, as {@code ./ernic guest run} and {@code ./ernic up}
 * wire them: one {@code ernic serve} per guest (a mesh when there are several), each with a TAP, and the
 * TAPs on one bridge in a network namespace of the run's own ({@code ernic-KIND-PID}), which also holds
 * the segment's host end. Guest i is 192.168.77.(i + 1), the host end .254.
 */
public final class GuestFleet implements AutoCloseable {
    /** The segment the guests share: 192.168.77.0/24, the host end at .254, guest i at .(i + 1). */
    public static final String SEGMENT = "192.168.77.", HOST_IP = SEGMENT + "254";

    private final List<ServerProcess> servers = new ArrayList<>();
    private final List<Path> sockets = new ArrayList<>();
    private NetNamespace segment;
    private Path socketDir;

    /**
     * What to start: guests with no device get no server; no network, no TAPs; no mesh, independent servers;
     * {@code declareGids}: each server of a mesh is given its guest's address (ERNIC_TCP_GUEST_GIDS), else it
     * learns it from what the guest sends; {@code serverArgs}: each server's extra arguments ({@link ServerArgs}).
     */
    public record Plan(int vms, ServerArgs serverArgs, boolean device, boolean network, boolean mesh,
                       boolean declareGids) {
        public Plan(int vms, String serverArgs, boolean device, boolean network, boolean mesh, boolean declareGids) {
            this(vms, ServerArgs.of(serverArgs), device, network, mesh, declareGids);
        }

        public Plan(int vms, String serverArgs, boolean device, boolean network, boolean mesh) {
            this(vms, serverArgs, device, network, mesh, true);
        }
    }

    private GuestFleet() {
    }

    /**
     * Starts the servers and the segment; what is started is stopped again if a later step fails.
     * {@code extraArgs} gives server i more arguments. The sockets are in {@code /tmp/ernic-KIND-PID/serverI/}:
     * a UNIX socket's path has at most 107 bytes, which a deep work directory would exceed.
     */
    public static GuestFleet start(Plan plan, String kind, PrintStream out,
                                   java.util.function.IntFunction<List<String>> extraArgs) throws IOException {
        GuestFleet f = new GuestFleet();
        try {
            f.startAll(plan, kind, out, extraArgs);
            return f;
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    private void startAll(Plan plan, String kind, PrintStream out,
                          java.util.function.IntFunction<List<String>> extraArgs) throws IOException {
        if (!plan.device()) {
            return;
        }
        long pid = ProcessHandle.current().pid();
        String name = "ernic-" + kind + "-" + pid;
        socketDir = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), name));
        segment = plan.network() ? segment(name, out) : null;
        // Several guests talk RDMA through a mesh of their servers: server 0 manages it.
        int meshPort = plan.vms() > 1 && plan.mesh() ? freePort() : 0;
        for (int i = 0; i < plan.vms(); i++) {
            Path socket = Files.createDirectories(socketDir.resolve("server" + i)).resolve("ernic.sock");
            List<String> args = new ArrayList<>(plan.serverArgs().forVm(i));
            args.addAll(extraArgs.apply(i));
            String tap = "er" + pid + "v" + i;
            if (segment != null) {
                args.addAll(List.of("--tap", tap));
            }
            Map<String, String> env = new HashMap<>();
            if (meshPort != 0) {
                args.addAll(List.of("--backend", i == 0 ? "tcp:manager:listen:" + meshPort
                        : "tcp:worker:127.0.0.1:" + meshPort));
                if (plan.declareGids()) {
                    env.put("ERNIC_TCP_GUEST_GIDS", guestIp(i));
                }
            }
            servers.add(ServerProcess.start(socket, args, env, "srv" + i + "| ", out));
            sockets.add(socket);
            if (segment != null) {
                segment.adopt(tap);
                segment.exec("ip", "link", "set", tap, "master", "br0", "up");
            }
        }
    }

    /** Guest i's address on the segment. */
    public static String guestIp(int i) {
        return SEGMENT + (i + 1);
    }

    /** Server i's vfio-user socket, or null for a guest with no device. */
    public Path socket(int i) {
        return i < sockets.size() ? sockets.get(i) : null;
    }

    public List<ServerProcess> servers() {
        return servers;
    }

    /** The namespace holding the segment's host end, or null when the guests have no segment. */
    public NetNamespace segment() {
        return segment;
    }

    /** The lines a guest script starts with: where guest i is on the segment. */
    public String preamble(int i) {
        return segment == null ? "" : "export ERNIC_HOST_IP=" + HOST_IP + " ERNIC_GUEST_IP=" + guestIp(i) + "\n";
    }

    /**
     * Boots {@code vms} guests on {@code pool}, guest i with its server's socket, the job directory
     * {@code work/vmI} and {@code body} after its {@link #preamble}; their results in guest order.
     */
    public List<Future<GuestResult>> run(int vms, ExecutorService pool, Path work, String body, PrintStream out,
                                         Duration timeout) {
        List<Future<GuestResult>> runs = new ArrayList<>();
        for (int i = 0; i < vms; i++) {
            GuestVm vm = new GuestVm(i, work.resolve("vm" + i), socket(i), out).withTimeout(timeout);
            String script = preamble(i) + body;
            runs.add(pool.submit(() -> vm.run(script)));
        }
        return runs;
    }

    /** A TCP port nothing listens on now (the kernel's pick; another process may take it before use). */
    public static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** A namespace with bridge br0 holding the segment's host end; null (and a warning) when it cannot be made. */
    private static NetNamespace segment(String name, PrintStream out) {
        try {
            NetNamespace ns = NetNamespace.create(name);
            ns.exec("ip", "link", "add", "br0", "type", "bridge");
            ns.exec("ip", "addr", "add", HOST_IP + "/24", "dev", "br0");
            ns.exec("ip", "link", "set", "br0", "up");
            return ns;
        } catch (IOException e) {
            out.println("ernic: no Ethernet segment for the guests (needs root and iproute2): " + e.getMessage());
            return null;
        }
    }

    @Override
    public void close() {
        servers.forEach(ServerProcess::close);
        if (socketDir != null) {
            Leftovers.deleteTree(socketDir);
        }
        if (segment != null) {
            try {
                segment.close();
            } catch (IOException e) {
                System.err.println("ernic: " + e.getMessage());
            }
        }
    }
}
