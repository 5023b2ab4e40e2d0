package ernic.it.fuzz;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What the process holds, sampled at a quiet moment (no client connected, heap after GC): open fds, lines of
 * /proc/self/maps, mappings of memfds (guest RAM: the server's own), heap used after GC.
 */
record Health(int fds, long maps, long memfdMaps, long heapBytes) {
    /** fds a run may hold beyond the start: the JVM opens a few lazily (jars, /dev/urandom, the log file). */
    static final int FD_SLACK = 16;
    /** maps lines beyond the start: thread stacks, malloc arenas and the JIT's code come and go. */
    static final long MAPS_SLACK = 256;
    /** Heap after GC beyond the start. */
    static final long HEAP_SLACK = 64L << 20;

    static Health sample() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long maps = 0, memfd = 0;
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            for (String l : (Iterable<String>) lines::iterator) {
                maps++;
                if (l.contains("/memfd:")) {
                    memfd++;
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("reading /proc/self/maps", e);
        }
        String[] fds = new java.io.File("/proc/self/fd").list();
        return new Health(fds == null ? -1 : fds.length, maps, memfd, heap);
    }

    /** Null when this sample is within the bounds of {@code start}, else what is over. */
    String overBounds(Health start) {
        StringBuilder b = new StringBuilder();
        if (fds > start.fds + FD_SLACK) {
            b.append("fds ").append(fds).append(" > ").append(start.fds).append(" + ").append(FD_SLACK).append("; ");
        }
        if (memfdMaps > start.memfdMaps) {
            b.append("memfd mappings ").append(memfdMaps).append(" > ").append(start.memfdMaps).append("; ");
        }
        if (maps > start.maps + MAPS_SLACK) {
            b.append("maps ").append(maps).append(" > ").append(start.maps).append(" + ").append(MAPS_SLACK).append("; ");
        }
        if (heapBytes > start.heapBytes + HEAP_SLACK) {
            b.append("heap ").append(mib(heapBytes)).append(" > ").append(mib(start.heapBytes)).append(" + ")
                    .append(mib(HEAP_SLACK)).append("; ");
        }
        return b.isEmpty() ? null : b.substring(0, b.length() - 2);
    }

    static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / 1048576.0);
    }

    @Override
    public String toString() {
        return "fds " + fds + ", maps " + maps + " (memfd " + memfdMaps + "), heap " + mib(heapBytes);
    }
}
