package ernic.vfiouser.server;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.ProtocolException;
import io.netty.channel.EventLoop;

import java.lang.foreign.MemorySegment;
import java.util.function.IntConsumer;

/**
 * What a {@link Connection} is to a device, for a driver in the same JVM and no socket (the driver model's
 * in-process binding, the fuzzer): region and config-space accesses are checked against their sizes as the server
 * checks a REGION_READ/WRITE and then go to the device's handlers; guest RAM handed over as a memfd is mapped into
 * a {@link DmaSpace} as a DMA_MAP would map it; an MSI-X trigger goes to a listener. There is no event loop
 * ({@link #eventLoop()} is null): the device does its work inside each access, and timers are ticked by the caller.
 */
public final class InProcessContext implements DeviceContext, Interrupts, AutoCloseable {
    /** An access the server would refuse before the device sees it: outside every region, or no such region. */
    public static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    private final VfioUserDevice dev;
    private final DmaSpace dma = new DmaSpace(4);
    private final IntConsumer msix;
    private final int vectors;

    /** A context for {@code dev}; {@code msix} gets each MSI-X vector the device raises. Call {@link #attach()} once the RAM is mapped. */
    public InProcessContext(VfioUserDevice dev, IntConsumer msix) {
        this.dev = dev;
        this.msix = msix;
        this.vectors = dev.irqCount(IrqType.MSIX);
    }

    /** Attaches the device to this context, as a negotiated connection does. */
    public void attach() {
        dev.attach(this);
    }

    /** Maps guest RAM, a memfd of {@code size} bytes at {@code iova}, again on a fd of its own (DmaSpace takes its fd over). */
    public void map(long iova, long size, int fd, MemorySegment memory) {
        try {
            int own = LibC.open("/proc/self/fd/" + fd, LibC.O_RDWR | LibC.O_CLOEXEC);
            dma.map(iova, size, 0, 3, own);
        } catch (ErrnoException | ProtocolException e) {
            throw new IllegalStateException("mapping the in-process guest RAM", e);
        }
    }

    /** A read of {@code buf.byteSize()} bytes at {@code offset} of region {@code index} (config space is {@link Connection#CONFIG_REGION}). */
    public void read(int index, long offset, MemorySegment buf) {
        if (index == Connection.CONFIG_REGION) {
            dev.configSpace().read(config(offset, buf.byteSize()), buf);
        } else {
            region(index, offset, buf.byteSize()).handler().read(offset, buf);
        }
    }

    /** A write of {@code buf} at {@code offset} of region {@code index} (config space is {@link Connection#CONFIG_REGION}). */
    public void write(int index, long offset, MemorySegment buf) {
        if (index == Connection.CONFIG_REGION) {
            dev.configSpace().write(config(offset, buf.byteSize()), buf);
        } else {
            region(index, offset, buf.byteSize()).handler().write(offset, buf);
        }
    }

    private Region region(int index, long offset, long length) {
        for (Region r : dev.regions()) {
            if (r.index() == index) {
                if (offset < 0 || length > r.size() - offset) {
                    throw new Refused("access of " + length + " at " + offset + " outside region " + index
                            + " (" + r.size() + " bytes)");
                }
                return r;
            }
        }
        throw new Refused("no region " + index);
    }

    private int config(long offset, long length) {
        int size = dev.configSpace().size();
        if (offset < 0 || length > size - offset) {
            throw new Refused("config access of " + length + " at " + offset);
        }
        return (int) offset;
    }

    @Override
    public GuestMemory memory() {
        return dma;
    }

    @Override
    public Interrupts interrupts() {
        return this;
    }

    @Override
    public EventLoop eventLoop() {
        return null;
    }

    @Override
    public boolean trigger(IrqType type, int vector) {
        if (type == IrqType.MSIX && vector >= 0 && vector < vectors) {
            msix.accept(vector);
        }
        return true;
    }

    @Override
    public boolean hasEventfd(IrqType type, int vector) {
        return true;
    }

    @Override
    public boolean pending(IrqType type, int vector) {
        return false;
    }

    /** Detaches the device (back to power-on) and unmaps the guest RAM. */
    @Override
    public void close() {
        dev.detach();
        dma.unmapAll();
    }
}
