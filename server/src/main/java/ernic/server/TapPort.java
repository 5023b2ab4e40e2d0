package ernic.server;

import ernic.counters.Counter;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;

/**
 * A host TAP interface on the device thread: frames the guest transmits are written to it, frames
 * read from it go to the guest. Non-blocking both ways: a frame the TAP cannot take at once is
 * dropped and counted, as a full link would drop it.
 */
public final class TapPort implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TapPort.class);
    private static final long TUNSETIFF = 0x400454caL;
    private static final short IFF_TAP = 0x0002, IFF_NO_PI = 0x1000;
    private static final int IFNAMSIZ = 16;
    /** Largest frame read: a 9216-byte jumbo frame, rounded up. */
    private static final int MAX_FRAME = 16 * 1024;
    private static final int FRAMES_PER_EVENT = 64;

    private final String name;
    private final FileDescriptor fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment rxBuffer = arena.allocate(MAX_FRAME, 64);
    private final Predicate<MemorySegment> toGuest;
    private IoRegistration registration;
    private final Counters<TapCounter> counters = new Counters<>(TapCounter.class);

    /** The TAP's frames ({@code tap.}): counted on the device loop, which reads and writes the TAP fd. */
    public enum TapCounter implements Counter {
        /** Frames read from the TAP (the wire), each handed to the device. */
        FRAMES_IN("frames_in"),
        /** Frames the guest sent that were written to the TAP. */
        FRAMES_OUT("frames_out"),
        /** Frames the guest sent that the TAP did not take whole. */
        TX_DROPPED("tx_dropped");

        private final String key;

        TapCounter(String key) {
            this.key = key;
        }

        @Override
        public String key() {
            return key;
        }
    }

    private TapPort(String name, int fd, Predicate<MemorySegment> toGuest) {
        this.name = name;
        this.fd = new FileDescriptor(fd);
        this.toGuest = toGuest;
    }

    /**
     * Opens (creating it if needed) the TAP interface {@code name} and starts reading it on
     * {@code loop}; each frame goes to {@code toGuest}.
     */
    public static TapPort open(String name, EventLoop loop, Predicate<MemorySegment> toGuest) throws ErrnoException {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        if (n.length == 0 || n.length >= IFNAMSIZ) {
            throw new IllegalArgumentException("TAP name must have 1 to 15 characters: " + name);
        }
        int fd = LibC.open("/dev/net/tun", LibC.O_RDWR | LibC.O_NONBLOCK | LibC.O_CLOEXEC);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ifreq = a.allocate(40, 8);
            MemorySegment.copy(n, 0, ifreq, ValueLayout.JAVA_BYTE, 0, n.length);
            ifreq.set(ValueLayout.JAVA_SHORT, IFNAMSIZ, (short) (IFF_TAP | IFF_NO_PI));
            LibC.ioctl(fd, TUNSETIFF, ifreq, "TUNSETIFF " + name + " (needs CAP_NET_ADMIN)");
        } catch (ErrnoException | RuntimeException e) {
            LibC.close(fd);
            throw e;
        }
        TapPort tap = new TapPort(name, fd, toGuest);
        ((IoEventLoop) loop).register(tap.new Handle()).addListener(f -> {
            if (f.isSuccess()) {
                tap.registration = (IoRegistration) f.getNow();
                tap.registration.submit(EpollIoOps.EPOLLIN);
            } else {
                LOG.error("cannot watch TAP {}: {}", name, f.cause().toString());
            }
        }).syncUninterruptibly();
        LOG.info("TAP {} attached", name);
        return tap;
    }

    public String name() {
        return name;
    }

    /** Registers the TAP's counters under {@code tap.}; device loop. */
    public void registerCounters(CounterRegistry r) {
        r.register("tap.", counters);
    }

    /** One counter; on the device loop, or once it has stopped. */
    public long count(TapCounter c) {
        return counters.get(c);
    }

    /** Writes one frame the guest sent; called on the device thread. */
    public void transmit(MemorySegment frame) {
        long rc = LibC.write(fd.intValue(), frame, frame.byteSize());
        if (rc == frame.byteSize()) {
            counters.inc(TapCounter.FRAMES_OUT);
        } else {
            counters.inc(TapCounter.TX_DROPPED);
        }
    }

    private final class Handle implements EpollIoHandle {
        @Override
        public FileDescriptor fd() {
            return fd;
        }

        @Override
        public void handle(IoRegistration registration, IoEvent ioEvent) {
            for (int i = 0; i < FRAMES_PER_EVENT; i++) {
                long n = LibC.read(fd.intValue(), rxBuffer, MAX_FRAME);
                if (n <= 0) {
                    return; // EAGAIN: drained
                }
                counters.inc(TapCounter.FRAMES_IN);
                toGuest.test(rxBuffer.asSlice(0, n));
            }
        }

        @Override
        public void close() {
            TapPort.this.close();
        }
    }

    @Override
    public void close() {
        if (registration != null) {
            registration.cancel();
            registration = null;
        }
        try {
            fd.close();
        } catch (java.io.IOException e) {
            // already closed
        }
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
