package ernic.it.harness;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code ./ernic guest run}: boots N guests, each against a fresh {@code ernic serve}, runs SCRIPT in
 * each as root (ERNIC_VM_INDEX tells them apart), streams the output prefixed by VM, and exits with
 * the first non-zero status of the scripts.
 *
 * <p>The guests share an Ethernet segment as a user would wire it: each server gets a TAP, and the
 * TAPs join one bridge in a network namespace of the run's own, which also holds the segment's host
 * end. The script learns its addresses from ERNIC_GUEST_IP and ERNIC_HOST_IP.
 */
@Command(name = "ernic guest run", mixinStandardHelpOptions = true,
        description = "Boot guests with the emulated device and run a script in each.")
public final class GuestRun implements Callable<Integer> {
    @Option(names = "--vms", defaultValue = "1", description = "Number of guests, each with its own server (default: ${DEFAULT-VALUE}).")
    int vms;

    @Option(names = "--server-args", defaultValue = "", description = "More arguments for each ernic serve, in one string.")
    String serverArgs;

    @Option(names = "--no-device", description = "Boot without any device (no server).")
    boolean noDevice;

    @Option(names = "--no-network", description = "Give the servers no TAP: the guests' NICs have no segment.")
    boolean noNetwork;

    @Option(names = "--no-mesh", description = "With --vms > 1: do not join the servers into a mesh.")
    boolean noMesh;

    /** The segment the guests share: 192.168.77.0/24, the host end at .254, guest i at .(i + 1). */
    static final String SEGMENT = "192.168.77.", HOST_IP = SEGMENT + "254";

    @Parameters(index = "0", paramLabel = "SCRIPT", description = "Bash script to run in each guest as root.")
    Path script;

    @Override
    public Integer call() throws Exception {
        String missing = GuestImage.missing();
        if (missing != null) {
            System.err.println("ernic guest run: " + missing);
            return 2;
        }
        String body = Files.readString(script);
        // Kept after the run: each VM's script, output and serial console.
        Path work = Files.createDirectories(Path.of("target", "guest-run",
                java.time.LocalDateTime.now().toString().replace(':', '-'))).toAbsolutePath();
        PrintStream out = System.out;
        List<ServerProcess> servers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(vms);
        long pid = ProcessHandle.current().pid();
        NetNamespace segment = noDevice || noNetwork ? null : segment("ernic-run-" + pid, out);
        try {
            // The first sign of life can take a while: say so before the consoles start.
            out.println("ernic: booting " + (vms == 1 ? "the guest" : vms + " guests") + " under TCG (QEMU's software"
                    + " CPU): the script starts after about 20-60 s, longer on a busy machine; consoles follow as vm<N>| ...");
            List<Future<GuestResult>> runs = new ArrayList<>();
            // Several guests talk RDMA through a mesh of their servers: server 0 manages it.
            int meshPort = vms > 1 && !noMesh && !noDevice ? freePort() : 0;
            for (int i = 0; i < vms; i++) {
                Path socket = null;
                if (!noDevice) {
                    Path dir = Files.createDirectories(work.resolve("server" + i));
                    socket = dir.resolve("ernic.sock");
                    List<String> args = new ArrayList<>(serverArgs.isBlank() ? List.of()
                            : Arrays.asList(serverArgs.trim().split("\\s+")));
                    String tap = "er" + pid + "v" + i;
                    if (segment != null) {
                        args.addAll(List.of("--tap", tap));
                    }
                    Map<String, String> env = new HashMap<>();
                    if (meshPort != 0) {
                        args.addAll(List.of("--backend", i == 0 ? "tcp:manager:listen:" + meshPort
                                : "tcp:worker:127.0.0.1:" + meshPort));
                        env.put("ERNIC_TCP_GUEST_GIDS", SEGMENT + (i + 1));
                    }
                    servers.add(ServerProcess.start(socket, args, env, "srv" + i + "| ", out));
                    if (segment != null) {
                        segment.adopt(tap);
                        segment.exec("ip", "link", "set", tap, "master", "br0", "up");
                    }
                }
                GuestVm vm = new GuestVm(i, work.resolve("vm" + i), socket, out);
                String preamble = segment == null ? "" : "export ERNIC_HOST_IP=" + HOST_IP + " ERNIC_GUEST_IP="
                        + SEGMENT + (i + 1) + "\n";
                runs.add(pool.submit(() -> vm.run(preamble + body)));
            }
            int status = 0;
            for (Future<GuestResult> f : runs) {
                GuestResult r = f.get();
                out.println("ernic: " + r + " (console: " + r.consoleLog() + ")");
                if (r.exitStatus() != 0 && status == 0) {
                    status = r.exitStatus();
                }
            }
            return status;
        } finally {
            pool.shutdownNow();
            servers.forEach(ServerProcess::close);
            if (segment != null) {
                segment.close();
            }
            out.println("ernic: consoles and outputs are in " + work);
        }
    }

    static int freePort() throws java.io.IOException {
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
        } catch (java.io.IOException e) {
            out.println("ernic: no Ethernet segment for the guests (needs root and iproute2): " + e.getMessage());
            return null;
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GuestRun()).execute(args));
    }
}
