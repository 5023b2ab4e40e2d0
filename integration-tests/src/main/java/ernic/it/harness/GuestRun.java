package ernic.it.harness;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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

    @Mixin
    ServerArgs.Options serverArgs = new ServerArgs.Options();

    @Option(names = "--no-device", description = "Boot without any device (no server).")
    boolean noDevice;

    @Option(names = "--no-network", description = "Give the servers no TAP: the guests' NICs have no segment.")
    boolean noNetwork;

    @Option(names = "--no-mesh", description = "With --vms > 1: do not join the servers into a mesh.")
    boolean noMesh;

    @Option(names = "--no-declared-gids", description = "With a mesh: do not give the servers their guests' addresses"
            + " (ERNIC_TCP_GUEST_GIDS); they learn the GIDs from what the guests send.")
    boolean noDeclaredGids;

    @Parameters(index = "0", paramLabel = "SCRIPT", description = "Bash script to run in each guest as root.")
    Path script;

    @Override
    public Integer call() throws Exception {
        ServerArgs args = serverArgs.parseOrSay("ernic guest run", vms);
        if (args == null) {
            return 2;
        }
        String missing = GuestImage.missing();
        if (missing != null) {
            System.err.println("ernic guest run: " + missing);
            return 2;
        }
        Path file = userPath(script);
        if (!Files.isReadable(file)) {
            System.err.println("ernic guest run: no such script: " + file);
            return 2;
        }
        String body = Files.readString(file);
        Leftovers.reap(System.out);
        // Kept after the run: each VM's script, output and serial console.
        Path work = Files.createDirectories(Path.of("target", "guest-run",
                java.time.LocalDateTime.now().toString().replace(':', '-'))).toAbsolutePath();
        PrintStream out = System.out;
        ExecutorService pool = Executors.newFixedThreadPool(vms);
        // Ctrl-C and SIGTERM end the JVM: the guests' containers and the namespace go with it
        // (Leftovers.removeOursAtExit), and the servers stop with it (ernic serve --exit-with).
        try (GuestFleet fleet = GuestFleet.start(new GuestFleet.Plan(vms, args, !noDevice, !noNetwork, !noMesh,
                !noDeclaredGids),
                "run", out, i -> List.of())) {
            List<Future<GuestResult>> runs = fleet.run(vms, pool, work, body, out, GuestVm.TIMEOUT);
            // The first sign of life can take a while: say so before the consoles start.
            out.println("ernic: booting " + (vms == 1 ? "the guest" : vms + " guests") + " under TCG (QEMU's software"
                    + " CPU): the script starts after about 20-60 s, longer on a busy machine; consoles follow as vm<N>| ...");
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
            out.println("ernic: consoles and outputs are in " + work);
        }
    }

    /** A path the user gave, relative to where they ran the launcher (it works in the source tree). */
    static Path userPath(Path p) {
        String caller = System.getenv("ERNIC_CALLER_DIR");
        return p.isAbsolute() || caller == null ? p.toAbsolutePath() : Path.of(caller).resolve(p).normalize();
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GuestRun()).execute(args));
    }
}
