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
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code ./ernic guest run}: boots N guests, each against a fresh {@code ernic serve}, runs SCRIPT in
 * each as root (ERNIC_VM_INDEX tells them apart), streams the output prefixed by VM, and exits with
 * the first non-zero status of the scripts.
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
        try {
            List<Future<GuestResult>> runs = new ArrayList<>();
            for (int i = 0; i < vms; i++) {
                Path socket = null;
                if (!noDevice) {
                    Path dir = Files.createDirectories(work.resolve("server" + i));
                    socket = dir.resolve("ernic.sock");
                    List<String> args = serverArgs.isBlank() ? List.of() : Arrays.asList(serverArgs.trim().split("\\s+"));
                    servers.add(ServerProcess.start(socket, args, "srv" + i + "| ", out));
                }
                GuestVm vm = new GuestVm(i, work.resolve("vm" + i), socket, out);
                runs.add(pool.submit(() -> vm.run(body)));
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
            out.println("ernic: consoles and outputs are in " + work);
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GuestRun()).execute(args));
    }
}
