package ernic.model;

import ernic.vfiouser.client.GuestRam;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;

import static ernic.common.Endian.LE;

/**
 * The model on a device in the same JVM: region accesses go straight to the device's handlers, given here as
 * plain functions so that the model needs none of the device's types. The device's side wires them (in its tests:
 * each region's handler, its config space, its interrupt sink, its DMA space over the memfd handed to it).
 *
 * <p>{@code progress} runs the device until it has nothing left to do (ticks it, or runs its event loop's
 * pending tasks). After it, everything the guest started has happened; so {@link #sync()} is one call of it and
 * {@link #awaitInterrupt} never waits: a vector that has not fired after {@code progress} will not fire until the
 * guest does something.
 */
public final class InProcessBinding implements DeviceBinding {
    /** A region access: the device fills {@code buf} (read) or applies it (write); {@code buf} is valid only during the call. */
    @FunctionalInterface
    public interface RegionAccess {
        void access(int region, long offset, MemorySegment buf);
    }

    /** The guest RAM handed to the device: a memfd of {@code size} bytes at guest address {@code iova}. */
    @FunctionalInterface
    public interface RamHandOff {
        void map(long iova, long size, int fd, MemorySegment memory);
    }

    private final GuestRam ram;
    private final RegionAccess read, write;
    private final Runnable progress, reset;
    private final AtomicLongArray fired;
    /** One access's bytes for the value reads and writes, and its views of 1 to 8 bytes: a doorbell allocates nothing. */
    private final MemorySegment word = Arena.ofAuto().allocate(8, 8);
    private final MemorySegment[] widths = new MemorySegment[9];

    private InProcessBinding(Builder b) throws IOException {
        this.read = Objects.requireNonNull(b.read, "region reads");
        this.write = Objects.requireNonNull(b.write, "region writes");
        this.progress = Objects.requireNonNull(b.progress, "progress");
        this.reset = Objects.requireNonNull(b.reset, "reset");
        this.fired = new AtomicLongArray(b.vectors);
        for (int w = 1; w <= 8; w++) {
            widths[w] = word.asSlice(0, w);
        }
        this.ram = new GuestRam(b.ramIova, b.ramBytes);
        try {
            Objects.requireNonNull(b.ramHandOff, "guest RAM hand-off").map(ram.iova(), ram.size(), ram.fd(), ram.memory());
        } catch (RuntimeException e) {
            ram.close();
            throw e;
        }
    }

    /** A binding with {@code vectors} MSI-X vectors and {@code ramBytes} of memfd guest RAM at {@code ramIova}. */
    public static Builder builder(int vectors, long ramIova, long ramBytes) {
        return new Builder(vectors, ramIova, ramBytes);
    }

    public static final class Builder {
        private final int vectors;
        private final long ramIova, ramBytes;
        private RegionAccess read, write;
        private Runnable progress, reset;
        private RamHandOff ramHandOff;

        private Builder(int vectors, long ramIova, long ramBytes) {
            this.vectors = vectors;
            this.ramIova = ramIova;
            this.ramBytes = ramBytes;
        }

        /** Region reads and writes, config space ({@link #CONFIG}) included. */
        public Builder regions(RegionAccess read, RegionAccess write) {
            this.read = read;
            this.write = write;
            return this;
        }

        /** Runs the device until it is idle. */
        public Builder progress(Runnable progress) {
            this.progress = progress;
            return this;
        }

        public Builder reset(Runnable reset) {
            this.reset = reset;
            return this;
        }

        /** Called once, while the binding is built, with the guest RAM the device is to map. */
        public Builder ram(RamHandOff handOff) {
            this.ramHandOff = handOff;
            return this;
        }

        public InProcessBinding build() throws IOException {
            return new InProcessBinding(this);
        }
    }

    /** The device's interrupt sink calls this when it raises MSI-X vector {@code vector} (any thread). */
    public void signal(int vector) {
        if (vector >= 0 && vector < fired.length()) {
            fired.incrementAndGet(vector);
        }
    }

    @Override
    public GuestRam guestRam() {
        return ram;
    }

    @Override
    public int vectors() {
        return fired.length();
    }

    @Override
    public byte[] readBytes(int region, long offset, int length) {
        byte[] data = new byte[length];
        read.access(region, offset, MemorySegment.ofArray(data));
        return data;
    }

    @Override
    public long readLong(int region, long offset, int width) {
        MemorySegment w = word(width);
        LE.put64(word, 0, 0L);
        read.access(region, offset, w);
        return LE.u64(word, 0);
    }

    @Override
    public void writeBytes(int region, long offset, byte[] data) {
        write.access(region, offset, MemorySegment.ofArray(data));
    }

    @Override
    public void writeLong(int region, long offset, int width, long value) {
        writePosted(region, offset, width, value);
    }

    @Override
    public void writePosted(int region, long offset, int width, long value) {
        MemorySegment w = word(width);
        LE.put64(word, 0, value);
        write.access(region, offset, w);
    }

    private MemorySegment word(int width) {
        if (width < 1 || width > 8) {
            throw new IllegalArgumentException("an access of " + width + " bytes");
        }
        return widths[width];
    }

    @Override
    public void sync() {
        progress.run();
    }

    @Override
    public void idle() {
        progress.run();
    }

    @Override
    public long awaitInterrupt(int vector, int millis) {
        progress.run();
        return fired.getAndSet(vector, 0);
    }

    @Override
    public void reset() {
        reset.run();
    }

    @Override
    public void close() {
        ram.close();
    }
}
