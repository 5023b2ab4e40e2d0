package ernic.ionic.regs;

import ernic.counters.Counter;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.vfiouser.server.Interrupts;
import ernic.vfiouser.server.IrqType;

/**
 * The per-index interrupt control blocks (BAR 0 + 0x2000 + 32 i) and the latch-and-deliver model
 * both ionic drivers rely on: an event on an unmasked index fires MSI-X i (and masks it again when
 * mask_assert is set); an event on a masked index sets {@code pending}; any unmask fires a pending
 * index. Outstanding credits never cause a firing (RDMA EQs never return them).
 */
public final class InterruptController {
    private final int count;
    private final boolean[] mask, maskAssert, pending;
    private final int[] coalInit, coal;
    private final long[] fired, latched;
    /** The sums of {@code fired} and {@code latched} over every index ({@code intr.}). */
    private final Counters<IntrCounter> totals = new Counters<>(IntrCounter.class);
    private Interrupts target;

    /** Interrupts of the whole device ({@code intr.}). */
    public enum IntrCounter implements Counter {
        /** MSI-X messages sent, every index. */
        FIRED,
        /** Events that found their index masked and left it pending. */
        LATCHED
    }

    public InterruptController(int count) {
        this.count = count;
        mask = new boolean[count];
        maskAssert = new boolean[count];
        pending = new boolean[count];
        coalInit = new int[count];
        coal = new int[count];
        fired = new long[count];
        latched = new long[count];
        reset();
    }

    /** Registers the device's interrupt totals under {@code intr.}; device thread. */
    public void registerCounters(CounterRegistry r) {
        r.register("intr.", totals);
    }

    public int count() {
        return count;
    }

    /** Where MSI-X goes; null while no client is attached (events are then dropped). */
    public void target(Interrupts target) {
        this.target = target;
    }

    /** Power-on: every index masked, no auto-mask, nothing pending. */
    public void reset() {
        for (int i = 0; i < count; i++) {
            mask[i] = true;
            maskAssert[i] = false;
            pending[i] = false;
            coalInit[i] = 0;
            coal[i] = 0;
            fired[i] = 0;
            latched[i] = 0;
        }
        totals.reset();
    }

    public boolean valid(int index) {
        return index >= 0 && index < count;
    }

    /** An event for index {@code i}: fire now, or latch while masked. */
    public void raise(int i) {
        if (!valid(i)) {
            return;
        }
        if (mask[i]) {
            if (!pending[i]) {
                latched[i]++;
                totals.inc(IntrCounter.LATCHED);
            }
            pending[i] = true;
            return;
        }
        fire(i);
    }

    private void fire(int i) {
        pending[i] = false;
        fired[i]++;
        totals.inc(IntrCounter.FIRED);
        if (maskAssert[i]) {
            mask[i] = true;
        }
        Interrupts t = target;
        if (t != null) {
            t.trigger(IrqType.MSIX, i);
        }
    }

    private void unmask(int i) {
        mask[i] = false;
        if (pending[i]) {
            fire(i);
        }
    }

    /** The u32 at {@code field} (an INTR_* offset) of block {@code i}. */
    public int read(int i, int field) {
        return switch (field) {
            case Bar0.INTR_COAL_INIT -> coalInit[i];
            case Bar0.INTR_MASK -> mask[i] ? 1 : 0;
            case Bar0.INTR_CREDITS -> 0; // no credit accounting: reading 0 is what the driver accepts
            case Bar0.INTR_MASK_ASSERT -> maskAssert[i] ? 1 : 0;
            case Bar0.INTR_COAL -> coal[i];
            default -> 0;
        };
    }

    /** A store of {@code value} to {@code field} of block {@code i}. */
    public void write(int i, int field, int value) {
        switch (field) {
            case Bar0.INTR_COAL_INIT -> coalInit[i] = value;
            case Bar0.INTR_MASK -> {
                if ((value & 1) != 0) {
                    mask[i] = true;
                } else {
                    unmask(i);
                }
            }
            case Bar0.INTR_CREDITS -> {
                if ((value & Bar0.CRED_UNMASK) != 0) {
                    unmask(i);
                }
            }
            case Bar0.INTR_MASK_ASSERT -> maskAssert[i] = (value & 1) != 0;
            case Bar0.INTR_COAL -> coal[i] = value;
            default -> { }
        }
    }

    public boolean masked(int i) {
        return mask[i];
    }

    public boolean pending(int i) {
        return pending[i];
    }

    /** Whether the MSI-X vector {@code i} is pending where the signals go (the PBA); false with no guest attached. */
    public boolean msixPending(int i) {
        Interrupts t = target;
        return t != null && t.pending(IrqType.MSIX, i);
    }

    /** MSI-X signals sent for index {@code i} since power-on. */
    public long fired(int i) {
        return fired[i];
    }

    /** Times index {@code i} latched an event while masked. */
    public long latched(int i) {
        return latched[i];
    }
}
