package ernic.it.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What the work of a server, or of a reference, costs in CPU time: the server's device thread and its whole
 * process, read around a measured slice and divided by the slice's operations and bytes. Every section of the
 * suite reads CPU time through this class, so every {@code cpuNsPerOp} in the report means the same thing.
 *
 * <p>CPU time is time on a CPU (user and kernel), not time waiting for one: unlike a wall-clock rate it does not
 * depend on where the scheduler put the threads of a 2-CPU machine. The clocks, all in nanoseconds:
 * <ul>
 *   <li>a thread of this JVM: its thread CPU clock ({@link ThreadMXBean#getThreadCpuTime});</li>
 *   <li>a thread of another process (the device thread of a forked server, found by its name
 *       {@value #DEVICE_THREAD}): the first field of {@code /proc/PID/task/TID/schedstat}, the time the
 *       scheduler ran it;</li>
 *   <li>another process as a whole: its process CPU clock ({@code clock_getcpuclockid(3)} and
 *       {@code clock_gettime}), which keeps the time of threads that have ended (JIT compiler threads come and
 *       go).</li>
 * </ul>
 */
final class CpuCost {
    /** The name of a server's device thread (Netty's thread factory adds "-N-M"; the kernel keeps 15 bytes). */
    static final String DEVICE_THREAD = "ernic-device";

    private CpuCost() {}

    /**
     * CPU time read at one moment, in nanoseconds: the server's device threads, and its whole processes
     * ({@code -1} when the server runs inside the bench's own JVM, whose process time is mostly the bench's); and
     * how many times the device threads have gone to sleep so far (their voluntary context switches: each is a
     * wake-up later; {@code -1}: not read).
     */
    record Sample(long deviceNanos, long processNanos, long deviceSleeps) {
        Sample(long deviceNanos, long processNanos) {
            this(deviceNanos, processNanos, -1);
        }

        Sample plus(Sample o) {
            return new Sample(deviceNanos + o.deviceNanos,
                    processNanos < 0 || o.processNanos < 0 ? -1 : processNanos + o.processNanos,
                    deviceSleeps < 0 || o.deviceSleeps < 0 ? -1 : deviceSleeps + o.deviceSleeps);
        }
    }

    /** Reads the CPU clocks of one server, or of several together (the two ends of the mesh). */
    @FunctionalInterface
    interface Meter {
        Sample read() throws IOException;

        /** This meter and {@code other} read together: their sum. */
        default Meter and(Meter other) {
            return () -> read().plus(other.read());
        }
    }

    /** A server in this JVM: its device thread, by Java thread id; no process figure apart from the bench's. */
    static Meter inProcess(long deviceThreadId) {
        return () -> new Sample(threadNanos(deviceThreadId), -1);
    }

    /** A forked server: its device thread (found by name now), its process, and how often the thread slept. */
    static Meter forked(long pid) throws IOException {
        long tid = deviceTid(pid);
        return () -> new Sample(taskNanos(pid, tid), processNanos(pid), taskSleeps(pid, tid));
    }

    /** How many times thread {@code tid} of process {@code pid} has gone to sleep: its voluntary context switches. */
    static long taskSleeps(long pid, long tid) throws IOException {
        Path status = Path.of("/proc", Long.toString(pid), "task", Long.toString(tid), "status");
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
            }
        }
        throw new IOException(status + " has no voluntary_ctxt_switches");
    }

    /** CPU time of a thread of this JVM (a reference's thread, an in-process device thread). */
    static long threadNanos(long javaThreadId) {
        long t = THREADS.getThreadCpuTime(javaThreadId);
        if (t < 0) {
            throw new IllegalStateException("no CPU time for thread " + javaThreadId + " (ended, or not measurable)");
        }
        return t;
    }

    /** CPU time of the calling thread. */
    static long currentThreadNanos() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** The kernel's id of process {@code pid}'s device thread: the one thread named {@value #DEVICE_THREAD}. */
    static long deviceTid(long pid) throws IOException {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(task.resolve("comm")).strip().startsWith(DEVICE_THREAD)) {
                        found.add(Long.parseLong(task.getFileName().toString()));
                    }
                } catch (IOException e) {
                    // the thread ended while listed
                }
            }
        }
        if (found.size() != 1) {
            throw new IOException("process " + pid + " has " + found.size() + " threads named " + DEVICE_THREAD
                    + "*, expected one");
        }
        return found.get(0);
    }

    /** Time the scheduler ran thread {@code tid} of process {@code pid}: schedstat's first field, in ns. */
    static long taskNanos(long pid, long tid) throws IOException {
        String s = Files.readString(Path.of("/proc", Long.toString(pid), "task", Long.toString(tid), "schedstat"));
        String first = s.strip().split("\\s+")[0];
        try {
            return Long.parseLong(first);
        } catch (NumberFormatException e) {
            throw new IOException("unreadable schedstat of task " + tid + ": " + s.strip());
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CLOCK_GETCPUCLOCKID = LINKER.downcallHandle(
            LINKER.defaultLookup().find("clock_getcpuclockid").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle CLOCK_GETTIME = LINKER.downcallHandle(
            LINKER.defaultLookup().find("clock_gettime").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    /** CPU time of process {@code pid}, all its threads, those that ended included. */
    static long processNanos(long pid) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment clock = arena.allocate(JAVA_INT);
            int rc = (int) CLOCK_GETCPUCLOCKID.invokeExact(Math.toIntExact(pid), clock);
            if (rc != 0) {
                throw new IOException("clock_getcpuclockid(" + pid + ") failed: error " + rc);
            }
            MemorySegment ts = arena.allocate(2 * JAVA_LONG.byteSize()); // struct timespec: tv_sec, tv_nsec
            rc = (int) CLOCK_GETTIME.invokeExact(clock.get(JAVA_INT, 0), ts);
            if (rc != 0) {
                throw new IOException("clock_gettime of process " + pid + " failed (has it exited?)");
            }
            return ts.get(JAVA_LONG, 0) * 1_000_000_000L + ts.get(JAVA_LONG, 8);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IOException("reading the CPU clock of process " + pid, e);
        }
    }

    /**
     * CPU time spent over a measured slice and what it did: {@code cpuNanos} is the figure compared (the
     * processes of forked servers, else the device thread, or a reference's threads), {@code deviceNanos} the
     * device threads alone (NaN for a reference).
     */
    record Spent(double cpuNanos, double deviceNanos, long operations, long bytes, double deviceSleeps) {
        static final Spent NONE = new Spent(Double.NaN, Double.NaN, 0, 0);

        Spent(double cpuNanos, double deviceNanos, long operations, long bytes) {
            this(cpuNanos, deviceNanos, operations, bytes, Double.NaN);
        }

        /** What a server spent between two samples: its processes when known, else its device threads. */
        static Spent between(Sample before, Sample after, long operations, long bytes) {
            double device = after.deviceNanos() - before.deviceNanos();
            double cpu = before.processNanos() < 0 || after.processNanos() < 0 ? device
                    : after.processNanos() - before.processNanos();
            double sleeps = before.deviceSleeps() < 0 || after.deviceSleeps() < 0 ? Double.NaN
                    : after.deviceSleeps() - before.deviceSleeps();
            return new Spent(cpu, device, operations, bytes, sleeps);
        }

        /** A reference's threads: {@code nanos} between them. */
        static Spent reference(double nanos, long operations, long bytes) {
            return new Spent(nanos, Double.NaN, operations, bytes);
        }

        double nsPerOp() {
            return operations == 0 ? Double.NaN : cpuNanos / operations;
        }

        double nsPerByte() {
            return bytes == 0 ? Double.NaN : cpuNanos / bytes;
        }

        double deviceNsPerOp() {
            return operations == 0 ? Double.NaN : deviceNanos / operations;
        }

        /** How often the device threads slept (and were woken) per operation; NaN when not read. */
        double deviceSleepsPerOp() {
            return operations == 0 ? Double.NaN : deviceSleeps / operations;
        }

        /** The cheaper of two slices by CPU per operation (NaN loses): "best of the rounds". */
        static Spent cheaper(Spent a, Spent b) {
            if (a == null || Double.isNaN(a.nsPerOp())) {
                return b;
            }
            return Double.isNaN(b.nsPerOp()) || a.nsPerOp() <= b.nsPerOp() ? a : b;
        }
    }

    /**
     * The report's CPU fields of one row: {@code cpuNsPerOp}, {@code cpuNsPerByte} (null for rows without bytes),
     * the reference's {@code refCpuNsPerOp} and {@code refCpuNsPerByte}, and {@code cpuRatio}, this row's CPU per
     * operation ÷ the reference's (above 1: the row costs more CPU than its floor). NaN goes out as null.
     */
    static Map<String, Object> fields(double nsPerOp, double nsPerByte, double refNsPerOp, double refNsPerByte) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cpuNsPerOp", finite(nsPerOp));
        m.put("cpuNsPerByte", finite(nsPerByte));
        m.put("refCpuNsPerOp", finite(refNsPerOp));
        m.put("refCpuNsPerByte", finite(refNsPerByte));
        m.put("cpuRatio", finite(nsPerOp / refNsPerOp));
        return m;
    }

    /** {@code v}, or null when it is not a number (JSON has no NaN). */
    static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
