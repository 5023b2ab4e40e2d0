package ernic.it.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a process holds, read from {@code /proc/PID}: its open fds by kind, its mappings (all, and those of
 * memfds: a vfio-user server maps nothing from a memfd but a client's guest RAM) and its resident memory.
 * Fds of jar files, {@code /proc} and the random devices are left out of {@link #fds()}: the JVM opens them
 * lazily once and keeps them.
 *
 * @param fds       open fds, without the JVM's lazily opened ones
 * @param memfdFds  fds of memfds (guest RAM a client passed)
 * @param eventfds  eventfds (a client's interrupts)
 * @param sockets   sockets (the listener, Netty's and a client's connection)
 * @param maps      lines of {@code /proc/PID/maps}
 * @param memfdMaps mappings of memfds
 * @param rssKiB    VmRSS
 * @param shmemKiB  RssShmem: resident pages of shared memory, where touched guest RAM counts
 */
public record ProcessResources(int fds, int memfdFds, int eventfds, int sockets, int maps, int memfdMaps,
                               long rssKiB, long shmemKiB) {

    public static ProcessResources of(long pid) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        int fds = 0, memfd = 0, eventfd = 0, sockets = 0;
        try (Stream<Path> s = Files.list(proc.resolve("fd"))) {
            for (Path p : s.toList()) {
                String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (NoSuchFileException e) {
                    continue; // closed while listing
                }
                if (target.endsWith(".jar") || target.startsWith("/proc/") || target.matches("/dev/u?random")) {
                    continue;
                }
                fds++;
                if (target.startsWith("/memfd:")) {
                    memfd++;
                } else if (target.equals("anon_inode:[eventfd]")) {
                    eventfd++;
                } else if (target.startsWith("socket:")) {
                    sockets++;
                }
            }
        }
        List<String> maps = Files.readAllLines(proc.resolve("maps"));
        int memfdMaps = (int) maps.stream().filter(l -> l.contains("/memfd:")).count();
        long rss = 0, shmem = 0;
        for (String l : Files.readAllLines(proc.resolve("status"))) {
            if (l.startsWith("VmRSS:")) {
                rss = kib(l);
            } else if (l.startsWith("RssShmem:")) {
                shmem = kib(l);
            }
        }
        return new ProcessResources(fds, memfd, eventfd, sockets, maps.size(), memfdMaps, rss, shmem);
    }

    private static long kib(String statusLine) {
        return Long.parseLong(statusLine.replaceAll("[^0-9]", ""));
    }

    /**
     * Runs a full GC in JVM {@code pid} ({@code jcmd PID GC.run}) so that its resident size says what it keeps,
     * not what it has not collected yet. The first call starts the JVM's attach listener, which keeps a socket
     * open from then on: call it before the first sample too.
     */
    public static void gc(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException("jcmd " + pid + " GC.run: " + out.strip());
        }
    }

    /**
     * Asserts that this sample holds nothing of a client any more against {@code base}, a sample taken before (at
     * {@code when}, in the messages): no memfd open or mapped, the same eventfds and sockets, at most
     * {@code fdsSlack} more fds.
     */
    public void assertNothingLeftOver(ProcessResources base, String when, int fdsSlack) {
        String at = when + ": " + this + "; " + base;
        assertThat(memfdFds).as("memfd fds " + at).isZero();
        assertThat(memfdMaps).as("memfd mappings " + at).isZero();
        assertThat(eventfds).as("eventfds " + at).isEqualTo(base.eventfds);
        assertThat(sockets).as("sockets " + at).isEqualTo(base.sockets);
        assertThat(fds).as("fds " + at).isLessThanOrEqualTo(base.fds + fdsSlack);
    }

    @Override
    public String toString() {
        return "fds " + fds + " (memfd " + memfdFds + ", eventfd " + eventfds + ", socket " + sockets + "), maps "
                + maps + " (memfd " + memfdMaps + "), rss " + rssKiB / 1024 + " MiB (shmem " + shmemKiB + " KiB)";
    }
}
