package ernic.it.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Pins the calling thread to one CPU (sched_setaffinity on thread 0, the caller). The doorbell benchmark puts
 * its client on one CPU and the thread that answers on another, for both the vfio-user server and the raw
 * echo: left to the scheduler, the two threads sometimes share a CPU and sometimes not, and the round trip
 * differs by 2-3× between the two placements (on this 2-CPU VM: echo 29,000 round trips/s on two CPUs,
 * 87,000 on one), so rounds moved the ratio from 0.58 to 1.16. Two CPUs, as QEMU's vCPU thread and the
 * server usually have.
 */
final class CpuPin {
    private CpuPin() {}

    private static final MethodHandle SCHED_SETAFFINITY = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("sched_setaffinity").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS));

    /** Pins the calling thread, the client, to CPU 0 (on a machine with two CPUs or more). */
    static void client() {
        currentThreadTo(0);
    }

    /** Pins the calling thread, the one that answers the client, to CPU 1 (on a machine with two CPUs or more). */
    static void answerer() {
        currentThreadTo(1);
    }

    /** Lets the calling thread run on every CPU again (the first 64). */
    static void anyCpu() {
        setAffinity(-1L);
    }

    /**
     * Pins the calling thread to {@code cpu} (below 64), on a machine with two CPUs or more; a refusal by the
     * kernel leaves the thread where it was (the benchmark still runs, as the scheduler places it).
     */
    private static void currentThreadTo(int cpu) {
        if (Runtime.getRuntime().availableProcessors() >= 2) {
            setAffinity(1L << cpu);
        }
    }

    private static void setAffinity(long cpus) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(JAVA_LONG);
            mask.set(JAVA_LONG, 0, cpus);
            int refused = (int) SCHED_SETAFFINITY.invokeExact(0, 8L, mask); // non-zero: left to the scheduler
        } catch (Throwable e) {
            // left to the scheduler
        }
    }
}
