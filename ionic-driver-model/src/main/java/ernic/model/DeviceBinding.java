package ernic.model;

import ernic.vfiouser.client.GuestRam;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * How the driver model reaches a device: what a guest's CPU and the PCI core do to it. Region accesses are
 * little-endian, as a CPU's MMIO stores are. Region indices are VFIO's ({@link #BAR0}, {@link #BAR2},
 * {@link #CONFIG}).
 *
 * <p>The binding owns the guest RAM the device sees: one memfd-backed block at {@link #ramIova()}. Not
 * thread-safe: one thread drives one binding, as one guest CPU would.
 */
public interface DeviceBinding extends AutoCloseable {
    /** VFIO_PCI_BAR0_REGION_INDEX, BAR 2 (the doorbell pages), VFIO_PCI_CONFIG_REGION_INDEX. */
    int BAR0 = 0, BAR2 = 2, CONFIG = 7;

    /** The guest RAM block the binding owns and has shared with the device. */
    GuestRam guestRam();

    /** All of guest RAM; offset 0 is guest address {@link #ramIova()}. */
    default MemorySegment ram() {
        return guestRam().memory();
    }

    default long ramIova() {
        return guestRam().iova();
    }

    /** MSI-X vectors the device offers. */
    int vectors();

    /** Reads {@code length} bytes of region {@code region} at {@code offset}. */
    byte[] readBytes(int region, long offset, int length) throws IOException;

    /** A read of 1 to 8 bytes, as a little-endian value. */
    long readLong(int region, long offset, int width) throws IOException;

    /** Writes {@code data} at {@code offset}; returns once the device has taken it. */
    void writeBytes(int region, long offset, byte[] data) throws IOException;

    /** A write of the {@code width} (1 to 8) low bytes of {@code value}; returns once the device has taken it. */
    void writeLong(int region, long offset, int width, long value) throws IOException;

    /**
     * A posted write, as a guest's doorbell store reaches the device: nothing to wait for, and nothing allocated.
     * Accesses are handled in order, so a later {@link #sync()} finds it done.
     */
    void writePosted(int region, long offset, int width, long value);

    /** Returns once every access made before it has been handled and the device has done what they started. */
    void sync() throws IOException;

    /**
     * The guest is waiting for the device (spinning on a completion ring): a device that runs only when driven
     * runs now. Over the socket the device runs on its own, and this does nothing.
     */
    void idle();

    /**
     * Whether the device runs on its own thread (over the socket), so that waiting lets it progress; in process it
     * moves only when driven ({@link #sync}, {@link #idle}), and time is the test's.
     */
    default boolean runsOnItsOwn() {
        return false;
    }

    /** Waits up to {@code millis} for MSI-X vector {@code vector}; returns how often it fired (0 on time-out). */
    long awaitInterrupt(int vector, int millis) throws IOException;

    /** A device reset (VFIO_USER_DEVICE_RESET, or the in-process equivalent). */
    void reset() throws IOException;

    @Override
    void close();
}
