package ernic.it.harness;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The interactive lab: {@code ./ernic up} boots N guests with their servers (a mesh when N > 1, a TAP
 * bridge between them) and leaves them running; {@code ./ernic shell K} is a root shell in guest K and
 * {@code ./ernic shell K -- CMD} runs one command there and returns its status; {@code ./ernic status}
 * shows the lab; {@code ./ernic down} stops it and removes what it made.
 *
 * <p>A detached supervisor process owns the lab: it starts the servers and the guests' containers, and
 * everything it started ends with it (the containers and the namespace by its exit hook, the servers by
 * {@code --exit-with}). The lab's directory (default /run/ernic-lab, or ERNIC_LAB_DIR) holds the state file
 * {@value #STATE}, the supervisor's log, and per guest the job directory the guest sees as /job: its
 * console, the virtio console's socket ({@code shell.sock}) and {@code lab/cmd}, where a command waits for
 * the guest's agent (lab-agent.sh) and leaves its output and exit status.
 */
@Command(name = "ernic lab", mixinStandardHelpOptions = true,
        subcommands = {Lab.Up.class, Lab.Supervise.class, Lab.Shell.class, Lab.Status.class, Lab.Down.class},
        description = "Guests that stay up: up, shell, status, down.")
public final class Lab {
    static final String STATE = "lab.properties", LOG = "lab.log";
    /** How long {@code up} waits for every guest to be ready. */
    private static final Duration UP_TIMEOUT = Duration.ofMinutes(20);

    static Path dir() {
        return Path.of(Optional.ofNullable(System.getenv("ERNIC_LAB_DIR")).orElse("/run/ernic-lab")).toAbsolutePath();
    }

    static Path job(int vm) {
        return dir().resolve("vm" + vm);
    }

    /** The state a supervisor wrote, or null when no lab is up (no state file, or its supervisor is gone). */
    static Properties liveState() throws IOException {
        Path f = dir().resolve(STATE);
        if (!Files.exists(f)) {
            return null;
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(f)) {
            p.load(in);
        }
        return alive(Long.parseLong(p.getProperty("pid", "0"))) ? p : null;
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Guest {@code vm}'s state as its job directory says: booting, ready, or exited with a status. */
    static String guestState(int vm) throws IOException {
        Path job = job(vm);
        if (Files.exists(job.resolve("exit_status"))) {
            return "exited " + Files.readString(job.resolve("exit_status")).trim();
        }
        return Files.exists(job.resolve("lab/ready")) ? "ready" : "booting";
    }

    @Command(name = "up", mixinStandardHelpOptions = true, description = "Boot N guests and their servers, and keep them running.")
    static final class Up implements Callable<Integer> {
        @Option(names = "--vms", defaultValue = "1", description = "Number of guests (default: ${DEFAULT-VALUE}).")
        int vms;

        @Mixin
        ServerArgs.Options serverArgs = new ServerArgs.Options();

        @Option(names = "--share", paramLabel = "DIR", description = "A host directory every guest sees read-write at /share.")
        Path share;

        @Option(names = "--memory", defaultValue = "1024", description = "Guest RAM in MiB (default: ${DEFAULT-VALUE}).")
        int memory;

        @Override
        public Integer call() throws Exception {
            if (vms < 1 || vms > 8) {
                System.err.println("ernic up: --vms must be 1 to 8");
                return 2;
            }
            ServerArgs args = serverArgs.parseOrSay("ernic up", vms);
            if (args == null) {
                return 2;
            }
            share = share == null ? null : GuestRun.userPath(share);
            if (share != null && !Files.isDirectory(share)) {
                System.err.println("ernic up: --share " + share + ": no such directory");
                return 2;
            }
            if (liveState() != null) {
                System.err.println("ernic up: a lab is already up; ./ernic status shows it, ./ernic down stops it");
                return 2;
            }
            String missing = GuestImage.missing();
            if (missing != null) {
                System.err.println("ernic up: " + missing);
                return 2;
            }
            Leftovers.reap(System.out);
            Path dir = dir();
            clear(dir);
            Files.createDirectories(dir);
            List<String> cmd = new ArrayList<>(List.of("setsid",
                    ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"), Lab.class.getName(), "supervise",
                    "--vms", Integer.toString(vms), "--memory", Integer.toString(memory),
                    "--server-args", args.common()));
            for (String v : args.vmValues()) {
                cmd.addAll(List.of("--server-args-vm", v));
            }
            if (share != null) {
                cmd.addAll(List.of("--share", share.toAbsolutePath().toString()));
            }
            Process sup = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectErrorStream(true).redirectOutput(dir.resolve(LOG).toFile()).start();
            System.out.println("ernic up: " + vms + (vms == 1 ? " guest" : " guests") + " booting under QEMU's software"
                    + " CPU (TCG), about a minute; the log is " + dir.resolve(LOG));
            long t0 = System.nanoTime();
            String last = "";
            while (true) {
                Thread.sleep(1000);
                long s = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
                if (!sup.isAlive()) {
                    System.err.println("ernic up: the lab's supervisor ended (status " + sup.exitValue() + "); its log:");
                    tail(dir.resolve(LOG), 30).forEach(l -> System.err.println("  | " + l));
                    return 1;
                }
                Properties state = liveState();
                if (state == null) {
                    continue; // the servers are starting
                }
                StringBuilder now = new StringBuilder();
                boolean ready = true;
                for (int i = 0; i < vms; i++) {
                    String g = guestState(i);
                    now.append(i == 0 ? "" : ", ").append("vm").append(i).append(' ').append(g);
                    ready &= g.equals("ready");
                    if (g.startsWith("exited")) {
                        System.err.println("ernic up: guest vm" + i + " ended before the lab was ready; its console:");
                        tail(job(i).resolve("console.log"), 30).forEach(l -> System.err.println("  | " + l));
                        new Down().call();
                        return 1;
                    }
                }
                if (!now.toString().equals(last) || s % 15 == 0) {
                    System.out.println("ernic up: " + now + " (" + s + " s)");
                    last = now.toString();
                }
                if (ready) {
                    break;
                }
                if (s > UP_TIMEOUT.toSeconds()) {
                    System.err.println("ernic up: the guests were not ready after " + s + " s; stopping the lab");
                    new Down().call();
                    return 1;
                }
            }
            new Status().call();
            System.out.println("ernic up: ready. ./ernic shell K opens a root shell in guest K (Ctrl-] leaves it),"
                    + " ./ernic shell K -- CMD runs one command, ./ernic down stops the lab.");
            return 0;
        }
    }

    /** The lab's owner, started detached by {@code up}: runs until {@code down} (SIGTERM) or until every guest ended. */
    @Command(name = "supervise", hidden = true)
    static final class Supervise implements Callable<Integer> {
        @Option(names = "--vms", required = true)
        int vms;

        @Mixin
        ServerArgs.Options serverArgs = new ServerArgs.Options();

        @Option(names = "--share")
        Path share;

        @Option(names = "--memory", defaultValue = "1024")
        int memory;

        @Override
        public Integer call() throws Exception {
            Path dir = dir();
            String agent;
            try (InputStream in = Lab.class.getResourceAsStream("lab-agent.sh")) {
                agent = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            int[] metrics = new int[vms];
            for (int i = 0; i < vms; i++) {
                metrics[i] = GuestFleet.freePort();
            }
            PrintStream out = System.out;
            // up checked the values; a bad one here is a programming error, and ends the supervisor with its message
            ServerArgs args = ServerArgs.parse(serverArgs.common, serverArgs.vmValues, vms);
            try (GuestFleet fleet = GuestFleet.start(new GuestFleet.Plan(vms, args, true, true, true, true), "lab",
                    out, i -> List.of("--metrics", "127.0.0.1:" + metrics[i]))) {
                Properties state = new Properties();
                state.setProperty("pid", Long.toString(ProcessHandle.current().pid()));
                state.setProperty("vms", Integer.toString(vms));
                state.setProperty("share", share == null ? "" : share.toString());
                state.setProperty("netns", fleet.segment() == null ? "" : fleet.segment().name());
                List<CompletableFuture<GuestResult>> guests = new ArrayList<>();
                // A thread of its own per guest: the common pool has one thread on a 2-core machine.
                var threads = java.util.concurrent.Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().factory());
                for (int i = 0; i < vms; i++) {
                    String container = "ernic-lab-vm" + i;
                    state.setProperty("vm." + i + ".ip", GuestFleet.guestIp(i));
                    state.setProperty("vm." + i + ".socket", fleet.socket(i).toString());
                    state.setProperty("vm." + i + ".server_pid", Long.toString(fleet.servers().get(i).process().pid()));
                    state.setProperty("vm." + i + ".metrics", "http://127.0.0.1:" + metrics[i] + "/metrics");
                    state.setProperty("vm." + i + ".container", container);
                    GuestVm vm = new GuestVm(i, job(i), fleet.socket(i), out).withContainerName(container)
                            .withTimeout(Duration.ofDays(3650))
                            .withArgs("--shell-socket", "/job/shell.sock", "--memory", Integer.toString(memory));
                    if (share != null) {
                        vm.withShare(share);
                    }
                    String script = fleet.preamble(i) + (share != null ? "export ERNIC_LAB_SHARE=1\n" : "") + agent;
                    guests.add(CompletableFuture.supplyAsync(() -> {
                        try {
                            return vm.run(script);
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }, threads));
                }
                Path tmp = dir.resolve(STATE + ".tmp");
                try (OutputStream o = Files.newOutputStream(tmp)) {
                    state.store(o, "ernic lab, written by its supervisor");
                }
                Files.move(tmp, dir.resolve(STATE), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                CompletableFuture.allOf(guests.toArray(CompletableFuture[]::new)).exceptionally(e -> null).join();
                out.println("ernic lab: every guest has ended");
            } finally {
                Files.deleteIfExists(dir.resolve(STATE));
            }
            return 0;
        }
    }

    @Command(name = "shell", mixinStandardHelpOptions = true,
            description = "A root shell in guest K (Ctrl-] leaves it), or with -- CMD: run CMD there and return its status.")
    static final class Shell implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "K", description = "The guest, 0 to N-1.")
        int vm;

        @Parameters(index = "1..*", paramLabel = "CMD", description = "A command line (after --).")
        List<String> command = new ArrayList<>();

        @Override
        public Integer call() throws Exception {
            Properties state = liveState();
            if (state == null) {
                System.err.println("ernic shell: no lab is up (./ernic up starts one)");
                return 2;
            }
            int vms = Integer.parseInt(state.getProperty("vms"));
            if (vm < 0 || vm >= vms) {
                System.err.println("ernic shell: the lab has guests 0 to " + (vms - 1));
                return 2;
            }
            String g = guestState(vm);
            if (!g.equals("ready")) {
                System.err.println("ernic shell: guest vm" + vm + " is " + g);
                return 2;
            }
            return command.isEmpty() ? interactive() : run(String.join(" ", command));
        }

        /** Hands CMD to the guest's agent and streams its output until the exit status appears. */
        private int run(String cmd) throws Exception {
            Path cmdDir = job(vm).resolve("lab/cmd");
            String id = ProcessHandle.current().pid() + "-" + System.nanoTime();
            Path tmp = cmdDir.resolve(id + ".tmp");
            Files.writeString(tmp, cmd + "\n");
            Files.move(tmp, cmdDir.resolve(id + ".sh"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            Path out = cmdDir.resolve(id + ".out"), rc = cmdDir.resolve(id + ".rc");
            long offset = 0;
            byte[] buf = new byte[65536];
            while (true) {
                boolean done = Files.exists(rc);
                if (Files.exists(out)) {
                    try (RandomAccessFile f = new RandomAccessFile(out.toFile(), "r")) {
                        f.seek(offset);
                        for (int n; (n = f.read(buf)) > 0; offset += n) {
                            System.out.write(buf, 0, n);
                        }
                    }
                    System.out.flush();
                }
                if (done) {
                    int status = Integer.parseInt(Files.readString(rc).trim());
                    for (String suffix : List.of(".run", ".out", ".rc")) {
                        Files.deleteIfExists(cmdDir.resolve(id + suffix));
                    }
                    return status;
                }
                if (!guestState(vm).equals("ready") || liveState() == null) {
                    System.err.println("ernic shell: guest vm" + vm + " ended while running the command");
                    return 125;
                }
                Thread.sleep(100);
            }
        }

        /** Joins this terminal to the guest's virtio console; the launcher has put the terminal in raw mode. */
        private int interactive() throws Exception {
            Path sock = job(vm).resolve("shell.sock");
            try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                ch.connect(UnixDomainSocketAddress.of(sock));
                System.err.print("ernic shell: root on vm" + vm + "; Ctrl-] leaves (the shell stays)\r\n");
                String size = System.getenv("ERNIC_TTY_SIZE"); // "ROWS COLS" from stty size
                String hello = size != null && size.matches("[1-9]\\d* [1-9]\\d*")
                        ? "stty rows " + size.replace(" ", " cols ") + "\n" : "\n";
                ch.write(ByteBuffer.wrap(hello.getBytes(StandardCharsets.US_ASCII)));
                Thread toGuest = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        byte[] b = new byte[4096];
                        for (int n; (n = System.in.read(b)) > 0; ) {
                            for (int i = 0; i < n; i++) {
                                if (b[i] == 0x1d) { // Ctrl-]
                                    ch.write(ByteBuffer.wrap(b, 0, i));
                                    ch.close();
                                    return;
                                }
                            }
                            ch.write(ByteBuffer.wrap(b, 0, n));
                        }
                        ch.close();
                    } catch (IOException e) {
                        // the guest side went away
                    }
                });
                try (InputStream fromGuest = Channels.newInputStream(ch)) {
                    fromGuest.transferTo(System.out);
                } catch (IOException e) {
                    // closed by Ctrl-]
                }
                toGuest.interrupt();
                System.err.print("\r\nernic shell: left vm" + vm + "\r\n");
                return 0;
            }
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = "Show the lab's guests, servers and sockets.")
    static final class Status implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            Properties state = liveState();
            if (state == null) {
                System.out.println("ernic status: no lab is up");
                return 3;
            }
            System.out.println("lab: supervisor pid " + state.getProperty("pid") + ", directory " + dir()
                    + (state.getProperty("share").isEmpty() ? "" : ", /share is " + state.getProperty("share"))
                    + (state.getProperty("netns").isEmpty() ? "" : ", segment in netns " + state.getProperty("netns")
                    + " (host end " + GuestFleet.HOST_IP + ")"));
            System.out.printf("%-4s %-14s %-9s %-18s %-28s %s%n", "vm", "address", "guest", "server", "metrics", "socket");
            for (int i = 0; i < Integer.parseInt(state.getProperty("vms")); i++) {
                long server = Long.parseLong(state.getProperty("vm." + i + ".server_pid"));
                System.out.printf("%-4s %-14s %-9s %-18s %-28s %s%n", "vm" + i, state.getProperty("vm." + i + ".ip"),
                        guestState(i), server + (alive(server) ? " running" : " gone"),
                        state.getProperty("vm." + i + ".metrics"), state.getProperty("vm." + i + ".socket"));
            }
            return 0;
        }
    }

    @Command(name = "down", mixinStandardHelpOptions = true, description = "Stop the lab and remove what it made.")
    static final class Down implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            Properties state = liveState();
            if (state == null) {
                System.out.println("ernic down: no lab is up");
            } else {
                long pid = Long.parseLong(state.getProperty("pid"));
                List<ProcessHandle> servers = new ArrayList<>();
                for (int i = 0; i < Integer.parseInt(state.getProperty("vms")); i++) {
                    ProcessHandle.of(Long.parseLong(state.getProperty("vm." + i + ".server_pid"))).ifPresent(servers::add);
                }
                ProcessHandle sup = ProcessHandle.of(pid).orElseThrow();
                sup.destroy(); // SIGTERM: its exit hook removes the containers and the namespace
                try {
                    sup.onExit().get(60, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    sup.destroyForcibly();
                }
                Leftovers.removeOf(pid);
                for (ProcessHandle s : servers) { // they stop with the supervisor; this is a safety net
                    try {
                        s.onExit().get(15, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.TimeoutException e) {
                        s.destroyForcibly();
                    }
                }
                System.out.println("ernic down: the lab is down (consoles are in " + dir() + "/vmK/console.log)");
            }
            Leftovers.reap(System.out);
            clearSockets(dir());
            Files.deleteIfExists(dir().resolve(STATE));
            return 0;
        }
    }

    /** Empties the lab directory of a previous lab (its consoles and logs). */
    private static void clear(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(dir)) {
                    Files.delete(p);
                }
            }
        }
    }

    private static void clearSockets(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.filter(p -> p.toString().endsWith(".sock")).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static List<String> tail(Path f, int lines) {
        try {
            List<String> all = Files.readAllLines(f, StandardCharsets.ISO_8859_1);
            return all.subList(Math.max(0, all.size() - lines), all.size());
        } catch (IOException e) {
            return List.of("(no " + f + ")");
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Lab()).execute(args));
    }
}
