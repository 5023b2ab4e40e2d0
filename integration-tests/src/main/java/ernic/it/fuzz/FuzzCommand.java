package ernic.it.fuzz;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * {@code ./ernic fuzz}: drives the real server in this process with generated hostile input (docs/reliability.md).
 * Each target gets {@code --messages} inputs, every one a function of the seed, the target and its index; after
 * every {@code --check-every} inputs the target is brought to rest and checked: it still answers a valid request,
 * nothing escaped its handling (the log), and fds, mappings and heap after GC are within the bounds of
 * {@link Health} of the start. A finding exits 1, saves a reproducer under {@code --out} and prints the command
 * that replays it.
 */
@Command(name = "fuzz", mixinStandardHelpOptions = true,
        description = "Feed the real server random and mutated hostile input, in process, and check that it neither "
                + "crashes, wedges nor leaks (docs/reliability.md).")
public final class FuzzCommand implements Callable<Integer> {
    public enum Target { vfio, ionic, mesh, roce, all }

    @Option(names = "--messages", paramLabel = "N", description = "inputs per target (default ${DEFAULT-VALUE})")
    long messages = 100_000;

    @Option(names = "--seed", paramLabel = "S", description = "the seed (default: from the clock, printed)")
    Long seed;

    @Option(names = "--target", description = "vfio, ionic, mesh, roce or all (default ${DEFAULT-VALUE})")
    Target target = Target.all;

    @Option(names = "--check-every", paramLabel = "K",
            description = "inputs between two health checks (default ${DEFAULT-VALUE})")
    long checkEvery = 10_000;

    @Option(names = "--out", paramLabel = "DIR", description = "where reproducers and the server log go "
            + "(default ${DEFAULT-VALUE})")
    Path out = Path.of("target", "fuzz");

    private final PrintStream log;

    public FuzzCommand() {
        this(System.out);
    }

    FuzzCommand(PrintStream log) {
        this.log = log;
    }

    /** The outcome of one run, for the test. */
    public record Result(long messages, long seed, int crashes, int leaks, double seconds, Path reproducer) {}

    private Result result;

    public Result result() {
        return result;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new FuzzCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (messages < 1 || checkEvery < 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--messages and --check-every must be >= 1");
        }
        long s = seed != null ? seed : System.nanoTime() ^ System.currentTimeMillis() << 20;
        Files.createDirectories(out);
        LogWatch watch = LogWatch.install(out.resolve("server-warnings.log"));
        List<Target> targets = target == Target.all
                ? List.of(Target.vfio, Target.ionic, Target.mesh, Target.roce) : List.of(target);
        long start = System.nanoTime();
        long total = 0;
        try {
            for (Target t : targets) {
                long[] done = {0};
                Path repro = run(t, s, watch, done);
                total += done[0];
                if (repro != null) {
                    int leak = repro.getFileName().toString().contains("-leak-") ? 1 : 0;
                    result = new Result(total, s, 1 - leak, leak, seconds(start), repro);
                    summary(total, s, result.crashes(), result.leaks(), start);
                    return 1;
                }
            }
        } finally {
            watch.uninstall();
        }
        result = new Result(total, s, 0, 0, seconds(start), null);
        summary(total, s, 0, 0, start);
        return 0;
    }

    private void summary(long total, long s, int crashes, int leaks, long start) {
        log.printf("fuzz: done: %,d messages, seed %d, targets %s, crashes %d, leaks %d, %.1f s%n", total, s,
                target, crashes, leaks, seconds(start));
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /** The generator of input {@code index} of {@code target} under {@code seed}: independent of every other input. */
    static SplittableRandom rng(long seed, Target target, long index) {
        long h = seed * 0x9E3779B97F4A7C15L + (target.ordinal() + 1) * 0xC2B2AE3D27D4EB4FL + index * 0x165667B19E3779F9L;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        return new SplittableRandom(h);
    }

    private FuzzTarget create(Target t) {
        return switch (t) {
            case vfio -> new VfioFuzz(out);
            case ionic -> new IonicFuzz();
            case mesh -> new MeshFuzz(out);
            case roce -> new RoceFuzz();
            case all -> throw new IllegalArgumentException();
        };
    }

    /** Runs one target; returns the reproducer's path on a finding, null when clean. */
    private Path run(Target t, long s, LogWatch watch, long[] done) throws Exception {
        try (FuzzTarget ft = create(t)) {
            ft.start();
            ft.quiesce();
            String early = watch.takeCrash();
            if (early != null) {
                throw new IllegalStateException("the " + t + " target logged a crash before any input: " + early);
            }
            Health begin = Health.sample();
            log.printf("fuzz: target %s, seed %d, %,d messages, checks every %,d; start: %s%n", t, s, messages,
                    checkEvery, begin);
            long t0 = System.nanoTime(), lastAt = t0, lastCount = 0;
            for (long i = 0; i < messages; i++) {
                try {
                    ft.step(i, rng(s, t, i));
                } catch (FuzzFailure f) {
                    return reproducer(ft, t, s, i, "crash", f.getMessage(), f);
                } catch (Exception | Error e) {
                    return reproducer(ft, t, s, i, "crash", "an exception escaped: " + e, e);
                }
                done[0] = i + 1;
                String crash = watch.takeCrash();
                if (crash != null) {
                    return reproducer(ft, t, s, i, "crash", crash, null);
                }
                if ((i + 1) % checkEvery == 0 || i + 1 == messages) {
                    try {
                        ft.quiesce();
                    } catch (FuzzFailure f) {
                        return reproducer(ft, t, s, i, "crash", "after input " + i + ": " + f.getMessage(), f);
                    }
                    crash = watch.takeCrash();
                    if (crash != null) {
                        return reproducer(ft, t, s, i, "crash", crash, null);
                    }
                    Health h = Health.sample();
                    long now = System.nanoTime();
                    log.printf("fuzz: %s %,d messages, %,.0f msgs/s, %s; %s%n", t, i + 1,
                            (i + 1 - lastCount) / ((now - lastAt) / 1e9), h, ft.stats());
                    lastAt = now;
                    lastCount = i + 1;
                    String over = h.overBounds(begin);
                    if (over != null) {
                        return reproducer(ft, t, s, i, "leak", over + " (start: " + begin + ")", null);
                    }
                }
            }
            log.printf("fuzz: target %s clean: %,d messages in %.1f s; %s%n", t, messages, seconds(t0), ft.stats());
            return null;
        }
    }

    private Path reproducer(FuzzTarget ft, Target t, long s, long index, String kind, String what, Throwable cause)
            throws Exception {
        Files.createDirectories(out);
        Path file = out.resolve("repro-" + t + "-" + kind + "-seed" + s + "-at" + index + ".txt");
        String replay = "./ernic fuzz --target " + t + " --seed " + s + " --messages " + (index + 1)
                + " --check-every " + checkEvery;
        StringBuilder b = new StringBuilder();
        b.append("# ernic fuzz reproducer\n");
        b.append("target: ").append(t).append('\n');
        b.append("seed: ").append(s).append('\n');
        b.append("index: ").append(index).append(" (the failing input; inputs 0..").append(index)
                .append(" are a function of the seed)\n");
        b.append("kind: ").append(kind).append('\n');
        b.append("finding: ").append(what).append('\n');
        b.append("replay: ").append(replay).append('\n');
        if (cause != null) {
            java.io.StringWriter sw = new java.io.StringWriter();
            cause.printStackTrace(new java.io.PrintWriter(sw));
            b.append("# stack trace\n");
            sw.toString().lines().forEach(l -> b.append("#   ").append(l).append('\n'));
        }
        b.append("# the last inputs, oldest first\n");
        b.append(ft.recorder().dump());
        Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
        log.printf("fuzz: %s %s at input %d (seed %d): %s%n", t, kind.toUpperCase(), index, s, what);
        log.printf("fuzz: reproducer: %s%n", file.toAbsolutePath());
        log.printf("fuzz: replay: %s%n", replay);
        return file;
    }

}
