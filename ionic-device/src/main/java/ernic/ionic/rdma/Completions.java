package ernic.ionic.rdma;

import ernic.ionic.base.Dma;
import ernic.ionic.regs.InterruptController;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.MemorySegment;

/**
 * Where every completion goes out: the CQE into its CQ's ring (the color word last), and when the CQ was armed
 * the EQE {CQ, NOTIFY, cqid} into its EQ with the EQ's interrupt. The data path owns it; the requester, the
 * responder and the flushes post through it, and so does the admin queue (whose CQ is a CQ like the others).
 * Device thread only; nothing allocates.
 */
final class Completions {
    private final Table<EventQueue> eventQueues;
    private final Dma dma;
    private final InterruptController intr;
    private final RdmaCounters counters;
    private final Refusals refusals;

    Completions(Table<EventQueue> eventQueues, Dma dma, InterruptController intr, RdmaCounters counters,
                Refusals refusals) {
        this.eventQueues = eventQueues;
        this.dma = dma;
        this.intr = intr;
        this.counters = counters;
        this.refusals = refusals;
    }

    /** Writes a CQE ({@code entry}) and raises the event if the CQ was armed. */
    void post(CompletionQueue cq, MemorySegment entry, boolean solicited) {
        if (cq.write(dma, entry, solicited)) {
            notify(cq);
        }
    }

    /** Lets the host see the entry {@code cq} held ({@link CompletionQueue#hold}), with its event. */
    void release(CompletionQueue cq) {
        if (cq.release(dma)) {
            notify(cq);
        }
    }

    /** EQE {CQ, NOTIFY, cqid} in the CQ's EQ and the EQ's interrupt. */
    void notify(CompletionQueue cq) {
        EventQueue eq = eventQueues.get(cq.eqId);
        if (eq == null) {
            refusals.refuse("rdma-event-no-eq", "CQ " + cq.id + " has no EQ " + cq.eqId);
            return;
        }
        counters.event();
        eq.post(dma, intr, V1.Eqe.TYPE_CQ, V1.Eqe.CQ_NOTIFY, cq.id);
    }
}
