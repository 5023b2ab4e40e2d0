package ernic.vfiouser.server;

import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.ProtocolException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The interrupt eventfds, masks and pending bits of one client connection, per VFIO IRQ index.
 * Raising a vector writes its eventfd; a masked vector latches a pending bit (what the MSI-X PBA
 * shows) and fires when unmasked.
 */
public final class IrqTable implements Interrupts {
    private final int[][] eventfds = new int[IrqType.values().length][];
    private final boolean[][] masked = new boolean[IrqType.values().length][];
    private final boolean[][] pendingBits = new boolean[IrqType.values().length][];
    private final MemorySegment one = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG);
    private long lost;
    private long signalled;

    public IrqTable(VfioUserDevice device) {
        for (IrqType t : IrqType.values()) {
            int n = Math.max(0, device.irqCount(t));
            eventfds[t.index()] = new int[n];
            Arrays.fill(eventfds[t.index()], -1);
            masked[t.index()] = new boolean[n];
            pendingBits[t.index()] = new boolean[n];
        }
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
    }

    public int count(IrqType type) {
        return eventfds[type.index()].length;
    }

    /** Interrupts raised while nobody had an eventfd for them. */
    public long lost() {
        return lost;
    }

    public long signalled() {
        return signalled;
    }

    /**
     * Applies DEVICE_SET_IRQS. {@code fds} are taken over: kept as eventfds or closed. Throws EINVAL
     * for an unknown index, a range past the vector count, a bad flag combination or the wrong number
     * of fds.
     */
    public void set(SetIrqs req, int[] fds) throws ProtocolException {
        boolean kept = false;
        try {
            IrqType type = IrqType.of(req.index());
            if (type == null) {
                throw new ProtocolException(LibC.EINVAL, "SET_IRQS: unknown IRQ index " + req.index());
            }
            int data = req.flags() & SetIrqs.DATA_MASK;
            int action = req.flags() & SetIrqs.ACTION_MASK_BITS;
            if (Integer.bitCount(data) != 1 || Integer.bitCount(action) != 1
                    || (req.flags() & ~(SetIrqs.DATA_MASK | SetIrqs.ACTION_MASK_BITS)) != 0) {
                throw new ProtocolException(LibC.EINVAL, "SET_IRQS: flags " + Integer.toHexString(req.flags()));
            }
            int n = count(type);
            long start = Integer.toUnsignedLong(req.start());
            long count = Integer.toUnsignedLong(req.count());
            if (start + count > n && !(count == 0 && data == SetIrqs.DATA_NONE)) {
                throw new ProtocolException(LibC.EINVAL, "SET_IRQS: vectors " + start + "+" + count + " past "
                        + n + " of " + type);
            }
            if (data != SetIrqs.DATA_EVENTFD && fds.length > 0) {
                throw new ProtocolException(LibC.EINVAL, "SET_IRQS: " + fds.length + " fds without DATA_EVENTFD");
            }
            int s = (int) start;
            int c = (int) count;
            switch (action) {
                case SetIrqs.ACTION_TRIGGER -> {
                    if (data == SetIrqs.DATA_EVENTFD) {
                        if (fds.length != c && fds.length != 0) {
                            throw new ProtocolException(LibC.EINVAL, "SET_IRQS: " + fds.length + " fds for "
                                    + c + " vectors");
                        }
                        for (int i = 0; i < c; i++) {
                            replace(type, s + i, fds.length == 0 ? -1 : fds[i]);
                        }
                        kept = true;
                    } else if (data == SetIrqs.DATA_NONE && c == 0) {
                        for (int i = 0; i < n; i++) {
                            replace(type, i, -1);
                        }
                    } else {
                        for (int i = 0; i < c; i++) {
                            if (data == SetIrqs.DATA_NONE || req.bools()[i] != 0) {
                                trigger(type, s + i);
                            }
                        }
                    }
                }
                case SetIrqs.ACTION_MASK, SetIrqs.ACTION_UNMASK -> {
                    if (data == SetIrqs.DATA_EVENTFD) {
                        throw new ProtocolException(LibC.EINVAL, "SET_IRQS: eventfds for mask/unmask");
                    }
                    boolean mask = action == SetIrqs.ACTION_MASK;
                    for (int i = 0; i < c; i++) {
                        if (data == SetIrqs.DATA_NONE || req.bools()[i] != 0) {
                            setMasked(type, s + i, mask);
                        }
                    }
                }
                default -> throw new IllegalStateException();
            }
        } finally {
            if (!kept) {
                for (int fd : fds) {
                    LibC.close(fd);
                }
            }
        }
    }

    private void replace(IrqType type, int vector, int fd) {
        int[] fdsOfType = eventfds[type.index()];
        LibC.close(fdsOfType[vector]);
        fdsOfType[vector] = fd;
    }

    public void setMasked(IrqType type, int vector, boolean mask) {
        masked[type.index()][vector] = mask;
        if (!mask && pendingBits[type.index()][vector]) {
            pendingBits[type.index()][vector] = false;
            trigger(type, vector);
        }
    }

    @Override
    public boolean trigger(IrqType type, int vector) {
        int t = type.index();
        if (vector < 0 || vector >= eventfds[t].length) {
            lost++;
            return false;
        }
        if (masked[t][vector]) {
            pendingBits[t][vector] = true;
            return false;
        }
        int fd = eventfds[t][vector];
        if (fd < 0) {
            lost++;
            return false;
        }
        if (LibC.eventfdSignal(fd, one) != 0) {
            lost++;
            return false;
        }
        if (type == IrqType.INTX) {
            masked[t][vector] = true; // INTx is automasked (IRQ info says so); the client unmasks it
        }
        signalled++;
        return true;
    }

    @Override
    public boolean hasEventfd(IrqType type, int vector) {
        int[] f = eventfds[type.index()];
        return vector >= 0 && vector < f.length && f[vector] >= 0;
    }

    @Override
    public boolean pending(IrqType type, int vector) {
        boolean[] p = pendingBits[type.index()];
        return vector >= 0 && vector < p.length && p[vector];
    }

    /** Clears masks and pending bits (device reset); the eventfds stay. */
    public void resetState() {
        for (int t = 0; t < masked.length; t++) {
            Arrays.fill(masked[t], false);
            Arrays.fill(pendingBits[t], false);
        }
    }

    /** Closes every eventfd (disconnect). */
    public void closeAll() {
        for (int[] f : eventfds) {
            for (int i = 0; i < f.length; i++) {
                LibC.close(f[i]);
                f[i] = -1;
            }
        }
        resetState();
    }
}
