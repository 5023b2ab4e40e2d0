package ernic.it.harness;

import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.OneShotStartupCheckStrategy;
import org.testcontainers.utility.DockerImageName;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One guest: a container of the guest image running {@code ernic-vm}, which boots QEMU (TCG, memfd
 * RAM) with the vfio-user device of a server whose socket directory is mounted into the container,
 * runs a script as root in the guest and powers off. The job directory keeps the script, its
 * output, its exit status and the serial console (the test artifact).
 */
public final class GuestVm {
    private static final Pattern TIMING = Pattern.compile(
            "ERNIC-TIMING boot_to_script_ms=(-?\\d+) total_ms=(\\d+)(?: boots=(\\d+))?");
    /** Where a server's socket directory appears inside the container. */
    public static final String SOCKET_DIR = "/run/ernic";

    /** How long a run may take unless {@link #withTimeout} says otherwise. */
    public static final Duration TIMEOUT = Duration.ofMinutes(20);

    private final int vmIndex;
    private final Path jobDir;
    private final Path socketDir;
    private final String socketName;
    private final PrintStream console;
    private final List<String> extraArgs = new ArrayList<>();
    private Duration timeout = TIMEOUT;
    private String containerName;
    private Path shareDir;

    /**
     * @param socketPath the server's vfio-user socket on this host, or null for a guest with no device
     * @param console    where to stream the guest's console, each line prefixed by the VM; null for none
     */
    public GuestVm(int vmIndex, Path jobDir, Path socketPath, PrintStream console) {
        this.vmIndex = vmIndex;
        this.jobDir = jobDir;
        this.socketDir = socketPath == null ? null : socketPath.toAbsolutePath().getParent();
        this.socketName = socketPath == null ? null : socketPath.getFileName().toString();
        this.console = console;
    }

    /** More arguments for ernic-vm (for example --memory 2048). */
    public GuestVm withArgs(String... args) {
        extraArgs.addAll(List.of(args));
        return this;
    }

    public GuestVm withTimeout(Duration timeout) {
        this.timeout = timeout;
        return this;
    }

    /** Names the guest's container (docker's default is a random name). */
    public GuestVm withContainerName(String name) {
        this.containerName = name;
        return this;
    }

    /** Shares host directory {@code dir} read-write into the guest (9p tag {@value #SHARE_TAG}). */
    public GuestVm withShare(Path dir) {
        this.shareDir = dir.toAbsolutePath();
        return this;
    }

    /** The 9p tag of a shared host directory, and where the container sees it. */
    public static final String SHARE_TAG = "share", SHARE_DIR = "/share";

    /** Boots the guest, runs {@code script} (a bash script) in it as root, and waits for the power-off. */
    public GuestResult run(String script) throws IOException {
        Files.createDirectories(jobDir);
        // A reused job directory must not hand back the previous run's result.
        for (String old : List.of("exit_status", "output.log", "console.log")) {
            Files.deleteIfExists(jobDir.resolve(old));
        }
        Files.writeString(jobDir.resolve("script.sh"), script, StandardCharsets.UTF_8);
        List<String> command = new ArrayList<>(List.of("ernic-vm", "--job", "/job", "--vm-index",
                Integer.toString(vmIndex)));
        if (socketDir != null) {
            command.addAll(List.of("--socket", SOCKET_DIR + "/" + socketName));
        }
        if (shareDir != null) {
            command.addAll(List.of("--share", SHARE_DIR));
        }
        command.addAll(extraArgs);
        StringBuilder log = new StringBuilder();
        String prefix = "vm" + vmIndex + "| ";
        Leftovers.removeOursAtExit();
        try (GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(GuestImage.NAME))) {
            c.withCommand(command.toArray(String[]::new))
                    .withLabel(Leftovers.PID_LABEL, Long.toString(ProcessHandle.current().pid()))
                    .withFileSystemBind(jobDir.toAbsolutePath().toString(), "/job", BindMode.READ_WRITE)
                    .withStartupCheckStrategy(new OneShotStartupCheckStrategy().withTimeout(timeout))
                    .withLogConsumer(frame -> {
                        String line = frame.getUtf8StringWithoutLineEnding();
                        synchronized (log) {
                            log.append(line).append('\n');
                        }
                        if (console != null) {
                            console.println(prefix + line);
                        }
                    });
            if (socketDir != null) {
                c.withFileSystemBind(socketDir.toString(), SOCKET_DIR, BindMode.READ_WRITE);
            }
            if (shareDir != null) {
                c.withFileSystemBind(shareDir.toString(), SHARE_DIR, BindMode.READ_WRITE);
            }
            if (containerName != null) {
                c.withCreateContainerCmdModifier(cmd -> cmd.withName(containerName));
            }
            try {
                c.start();
            } catch (RuntimeException e) {
                // A non-zero exit also lands here: the exit status file says what the script did.
            }
        }
        return result(log.toString());
    }

    private GuestResult result(String log) throws IOException {
        Path status = jobDir.resolve("exit_status");
        int exit = Files.exists(status) ? Integer.parseInt(Files.readString(status).trim()) : 125;
        Path output = jobDir.resolve("output.log");
        String out = Files.exists(output) ? Files.readString(output) : "";
        long boot = -1;
        long total = -1;
        int boots = 1; // an image from before the boots field does not say: taken as one
        Matcher m = TIMING.matcher(log);
        while (m.find()) {
            boot = Long.parseLong(m.group(1));
            total = Long.parseLong(m.group(2));
            boots = m.group(3) == null ? 1 : Integer.parseInt(m.group(3));
        }
        return new GuestResult(vmIndex, exit, out, jobDir.resolve("console.log"), boot, total, boots);
    }
}
