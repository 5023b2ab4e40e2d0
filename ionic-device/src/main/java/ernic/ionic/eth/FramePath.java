package ernic.ionic.eth;

import ernic.attach.FrameClaimer;
import ernic.ionic.base.Dma;
import ernic.ionic.fault.FaultKind;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Mac;
import ernic.ionic.layout.Ring;
import ernic.ionic.layout.Ring.RxComp;
import ernic.ionic.layout.Ring.RxDesc;
import ernic.ionic.layout.Ring.SgElem;
import ernic.ionic.layout.Ring.TxComp;
import ernic.ionic.layout.Ring.TxDesc;
import ernic.ionic.regs.InterruptController;
import ernic.ionic.regs.Status;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The Ethernet frame path of the LIF: TX descriptors (struct ionic_txq_desc, SG lists) gathered into
 * a frame for the claimers or the sink; frames from the wire and from in-process endpoints written
 * into posted RX buffers (struct ionic_rxq_desc) and completed. {@link EthLif} sets the queues up.
 * Device thread only; nothing allocated per frame: one gather buffer, scratch descriptors.
 */
final class FramePath {
    private final EthQueue[] rxqs;
    private final EthQueue[] enabledRx;
    private int enabledRxCount;
    private final InterruptController intr;
    private final FaultPlan faults;
    private final Dma dma;
    private final Refusals refusals;
    private final EthStats stats;

    private FrameSink sink;
    /** The P4 program between the guest and the TAP, or null. */
    private FrameFilter filter;
    /** Told the source address of every frame the guest transmits (the mesh learns its GIDs), or null. */
    private SourceWatcher sources;
    private final List<FrameClaimer> txClaimers = new ArrayList<>();
    private final List<FrameClaimer> rxClaimers = new ArrayList<>();

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment compBuf = arena.allocate(Comp.SIZE, 8);
    private final MemorySegment descBuf = arena.allocate(Ring.TX_DESC_SIZE, 8);
    private final MemorySegment sgBuf = arena.allocate(Ring.TX_SG_DESC_SIZE_V1, 8);
    /** Longest frame, gathered from the guest or queued for it. */
    private final int frameCapacity;
    private final MemorySegment frameBuf;
    private final MemorySegment guestQueue;
    private final int[] guestQueueLength = new int[EthLif.GUEST_QUEUE_SLOTS];
    private int guestQueueHead, guestQueueCount;
    private final TxDesc txDesc = new TxDesc();
    private final RxDesc rxDesc = new RxDesc();
    private final SgElem sgElem = new SgElem();
    private final TxComp txComp = new TxComp();
    private final RxComp rxComp = new RxComp();

    FramePath(EthQueue[] rxqs, int frameCapacity, InterruptController intr, FaultPlan faults, Dma dma,
              Refusals refusals, EthStats stats) {
        this.rxqs = rxqs;
        this.enabledRx = new EthQueue[rxqs.length];
        this.frameCapacity = frameCapacity;
        this.intr = intr;
        this.faults = faults;
        this.dma = dma;
        this.refusals = refusals;
        this.stats = stats;
        frameBuf = arena.allocate(frameCapacity, 64);
        guestQueue = arena.allocate((long) frameCapacity * EthLif.GUEST_QUEUE_SLOTS, 64);
    }

    // ---------------------------------------------------------------------------------------------
    // Endpoints

    void sink(FrameSink sink) {
        this.sink = sink;
    }

    void filter(FrameFilter f) {
        this.filter = f;
    }

    void sources(SourceWatcher w) {
        this.sources = w;
    }

    void addTxClaimer(FrameClaimer c) {
        txClaimers.add(c);
    }

    void removeTxClaimer(FrameClaimer c) {
        txClaimers.remove(c);
    }

    /** A frame of the device's own (RoCEv2) to the sink, past the guest's claimers and the P4 program. */
    void toWire(MemorySegment frame) {
        FrameSink s = sink;
        if (s != null) {
            s.transmit(frame);
        }
    }

    void addRxClaimer(FrameClaimer c) {
        rxClaimers.add(c);
    }

    void removeRxClaimer(FrameClaimer c) {
        rxClaimers.remove(c);
    }

    /** Recomputes the enabled RX queues (the flow hash spreads over them) after Q_INIT, Q_CONTROL, reset. */
    void rxQueuesChanged() {
        int n = 0;
        for (EthQueue q : rxqs) {
            if (q.initialized && q.enabled) {
                enabledRx[n++] = q;
            }
        }
        enabledRxCount = n;
    }

    /** Forgets every queued in-process frame (power-on). */
    void clearGuestQueue() {
        guestQueueHead = guestQueueCount = 0;
    }

    // ---------------------------------------------------------------------------------------------
    // TX

    /** Transmits every posted descriptor of {@code q}, then one completion for them all. */
    void serviceTx(EthQueue q) {
        if (!q.enabled || q.empty()) {
            return;
        }
        int generation = q.generation;
        int last = -1;
        while (q.tail != q.head) {
            int slot = q.tail;
            transmitOne(q, slot);
            if (q.generation != generation) {
                return;
            }
            last = slot;
            q.tail = slot + 1 & q.mask;
        }
        for (int i = 0; i < txClaimers.size(); i++) {
            txClaimers.get(i).endOfBatch();
        }
        // One completion retires every descriptor up to and including comp_index.
        compBuf.fill((byte) 0);
        txComp.wrap(compBuf, 0).compIndex(last).color(q.color);
        dma.publish(q.cqBase + (long) q.cqIndex * Ring.CQ_DESC_SIZE, compBuf, Comp.SIZE, Comp.Admin.COLOR, 1);
        q.nextCompletion();
        if (q.irq) {
            intr.raise(q.intr);
        }
    }

    private void transmitOne(EthQueue q, int slot) {
        if (!dma.read(q.ringBase + (long) slot * Ring.TX_DESC_SIZE, descBuf, 0, Ring.TX_DESC_SIZE)) {
            stats.add(EthStats.Lif.TX_DESC_FETCH_ERROR, 1);
            txError("ionic-tx-desc-fetch", "TX descriptor not readable");
            return;
        }
        txDesc.wrap(descBuf, 0);
        long cmd = txDesc.cmd();
        int opcode = TxDesc.opcode(cmd);
        int nsge = TxDesc.nsge(cmd);
        if (opcode != TxDesc.OPCODE_CSUM_NONE) {
            stats.add(EthStats.Lif.TX_QUEUE_ERROR, 1);
            txError("ionic-tx-offload", "TX opcode " + opcode + " asks for an offload that was not granted");
            return;
        }
        int sgStride = EthLif.txSgDescSize(q.ver);
        if (nsge > 0 && (!q.sg || nsge > sgStride / Ring.SG_ELEM_SIZE)) {
            stats.add(EthStats.Lif.TX_QUEUE_ERROR, 1);
            txError("ionic-tx-sg", "TX descriptor with " + nsge + " SG elements on a queue allowing "
                    + (q.sg ? sgStride / Ring.SG_ELEM_SIZE : 0));
            return;
        }
        int length = 0;
        int headLen = txDesc.len();
        if (headLen > frameCapacity || !dma.read(TxDesc.addr(cmd), frameBuf, 0, headLen)) {
            txDataError(headLen > frameCapacity);
            return;
        }
        length = headLen;
        if (nsge > 0) {
            long sgAt = q.sgBase + (long) slot * sgStride;
            if (!dma.read(sgAt, sgBuf, 0, (long) nsge * Ring.SG_ELEM_SIZE)) {
                stats.add(EthStats.Lif.TX_DESC_FETCH_ERROR, 1);
                txError("ionic-tx-sg-fetch", "TX SG descriptor not readable");
                return;
            }
            for (int k = 0; k < nsge; k++) {
                sgElem.wrap(sgBuf, (long) k * Ring.SG_ELEM_SIZE);
                int len = sgElem.len();
                if (len > frameCapacity - length || !dma.read(sgElem.addr(), frameBuf, length, len)) {
                    txDataError(len > frameCapacity - length);
                    return;
                }
                length += len;
            }
        }
        if (length < 14) {
            stats.add(EthStats.Lif.TX_QUEUE_ERROR, 1);
            txError("ionic-tx-runt", "TX frame of " + length + " bytes");
            return;
        }
        SourceWatcher w = sources;
        if (w != null) {
            // As the guest sent it: before the claimers and the P4 program, which may rewrite or replace it.
            SourceWatcher.report(frameBuf, length, w);
        }
        long dst = Mac.read(frameBuf, 0);
        stats.txSent(dst, length);
        if (faults.fire(FaultKind.TX_DROP)) {
            stats.inc(EthStats.Device.TX_FAULT_DROPPED);
            return;
        }
        MemorySegment frame = frameBuf.asSlice(0, length);
        for (int i = 0; i < txClaimers.size(); i++) {
            if (txClaimers.get(i).claim(frame)) {
                stats.inc(EthStats.Device.TX_CLAIMED);
                return;
            }
        }
        FrameFilter f = filter;
        if (f == null) {
            toSink(frame);
            return;
        }
        // Every output of the program, in order (nothing when it dropped the frame: counted as p4.eth.tx_dropped).
        for (int to = f.filter(frame, FrameFilter.GUEST); to != FrameFilter.DROP; to = f.next()) {
            if (to == FrameFilter.GUEST) {
                queueForGuest(f.output()); // back where it came from, as an in-process endpoint's frame
            } else {
                toSink(f.output());
            }
        }
    }

    /** A frame the guest transmitted, to the wire (or discarded without one). */
    private void toSink(MemorySegment frame) {
        FrameSink s = sink;
        if (s == null) {
            stats.inc(EthStats.Device.TX_DISCARDED);
            return;
        }
        s.transmit(frame);
        stats.inc(EthStats.Device.TX_SENT);
    }

    private void txDataError(boolean tooLong) {
        if (tooLong) {
            stats.add(EthStats.Lif.TX_QUEUE_ERROR, 1);
            txError("ionic-tx-too-long", "TX frame longer than " + frameCapacity + " bytes");
        } else {
            stats.add(EthStats.Lif.TX_DMA_ERROR, 1);
            txError("ionic-tx-dma", "TX buffer not in guest memory");
        }
    }

    private void txError(String cause, String detail) {
        stats.add(EthStats.Port.FRAMES_TX_BAD, 1);
        stats.add(EthStats.Port.FRAMES_TX_ALL, 1);
        stats.inc(EthStats.Device.TX_ERRORS);
        refusals.refuse(cause, detail);
    }

    // ---------------------------------------------------------------------------------------------
    // RX

    /**
     * A frame from the wire (the TAP): fills the next posted buffer of the enabled RX queue its flow
     * hashes to. Returns true when the frame reached the guest or an in-process endpoint, false when
     * it was dropped (no enabled queue, no buffer posted, does not fit) or lost to a fault.
     */
    boolean receive(MemorySegment frame) {
        long size = frame.byteSize();
        stats.inc(EthStats.Device.RX_OFFERED);
        if (size < 14 || size > 0xffff) {
            stats.add(EthStats.Port.FRAMES_RX_OVERSIZED, size > 0xffff ? 1 : 0);
            refusals.refuse("ionic-rx-frame-size", "received frame of " + size + " bytes");
            return false;
        }
        int length = (int) size;
        boolean lost = faults.check(FaultKind.RX_LOST);
        boolean nobuf = faults.check(FaultKind.RX_NOBUF);
        if (lost) {
            faults.injected(FaultKind.RX_LOST);
            stats.inc(EthStats.Device.RX_FAULT_LOST);
            return false;
        }
        stats.rxWire(length);
        for (int i = 0; i < rxClaimers.size(); i++) {
            if (rxClaimers.get(i).claim(frame)) {
                stats.inc(EthStats.Device.RX_CLAIMED);
                return true;
            }
        }
        FrameFilter f = filter;
        if (f == null) {
            return toGuest(frame, length, nobuf);
        }
        int to = f.filter(frame, FrameFilter.TAP);
        if (to == FrameFilter.DROP) {
            stats.rxDropped(Mac.read(frame, 0), length); // also counted by the filter (p4.eth.rx_dropped)
            return false;
        }
        // Every output of the program, in order: true when one of them reached the guest or the wire.
        boolean sent = false;
        for (; to != FrameFilter.DROP; to = f.next()) {
            MemorySegment out = f.output();
            if (to == FrameFilter.TAP) {
                FrameSink s = sink;
                if (s != null) {
                    s.transmit(out); // back to the wire
                    sent = true;
                }
            } else {
                sent |= toGuest(out, (int) out.byteSize(), nobuf);
                nobuf = false; // the fault takes the first frame to the guest only
            }
        }
        return sent;
    }

    /** A frame from the wire (or the program's output of one) to the RX queue its flow hashes to. */
    private boolean toGuest(MemorySegment frame, int length, boolean nobuf) {
        int hash = FlowHash.hash(frame);
        EthQueue q = pickRx(hash);
        long dst = Mac.read(frame, 0);
        if (q == null) {
            stats.add(EthStats.Lif.RX_QUEUE_DISABLED, 1);
            stats.rxDropped(dst, length);
            stats.inc(EthStats.Device.RX_NO_QUEUE);
            return false;
        }
        if (nobuf || q.empty()) {
            if (nobuf) {
                faults.injected(FaultKind.RX_NOBUF);
            }
            stats.add(EthStats.Lif.RX_QUEUE_EMPTY, 1);
            stats.rxDropped(dst, length);
            stats.inc(EthStats.Device.RX_NO_BUFFER);
            return false;
        }
        return deliver(q, frame, length, hash, dst);
    }

    private EthQueue pickRx(int hash) {
        int n = enabledRxCount;
        return n == 0 ? null : enabledRx[Integer.remainderUnsigned(hash, n)];
    }

    /** Writes one frame into the buffer at q.tail and completes that descriptor. */
    private boolean deliver(EthQueue q, MemorySegment frame, int length, int hash, long dst) {
        int slot = q.tail;
        int status = Status.SUCCESS;
        int copied = 0, sgUsed = 0;
        if (!dma.read(q.ringBase + (long) slot * Ring.RX_DESC_SIZE, descBuf, 0, Ring.RX_DESC_SIZE)) {
            stats.add(EthStats.Lif.RX_DESC_FETCH_ERROR, 1);
            refusals.refuse("ionic-rx-desc-fetch", "RX descriptor not readable");
            status = Status.BAD_ADDR;
        } else {
            rxDesc.wrap(descBuf, 0);
            int n = Math.min(rxDesc.len(), length);
            if (!dma.write(rxDesc.addr(), frame, 0, n)) {
                status = Status.BAD_ADDR;
            } else {
                copied = n;
                if (copied < length && rxDesc.opcode() == RxDesc.OPCODE_SG && q.sg) {
                    if (!dma.read(q.sgBase + (long) slot * Ring.RX_SG_DESC_SIZE, sgBuf, 0, Ring.RX_SG_DESC_SIZE)) {
                        status = Status.BAD_ADDR;
                    }
                    for (int k = 0; status == Status.SUCCESS && copied < length && k < Ring.RX_MAX_SG_ELEMS; k++) {
                        sgElem.wrap(sgBuf, (long) k * Ring.SG_ELEM_SIZE);
                        int len = sgElem.len();
                        if (len == 0) {
                            break; // the element after the last used one is zeroed as a terminator
                        }
                        int m = Math.min(len, length - copied);
                        if (!dma.write(sgElem.addr(), frame, copied, m)) {
                            status = Status.BAD_ADDR;
                            break;
                        }
                        copied += m;
                        sgUsed++;
                    }
                }
                if (status == Status.SUCCESS && copied < length) {
                    status = Status.ERANGE;
                }
            }
            if (status == Status.BAD_ADDR) {
                stats.add(EthStats.Lif.RX_DMA_ERROR, 1);
                refusals.refuse("ionic-rx-dma", "RX buffer not in guest memory");
            } else if (status == Status.ERANGE) {
                stats.add(EthStats.Lif.RX_DESC_DATA_ERROR, 1);
                stats.inc(EthStats.Device.RX_TOO_LONG);
                refusals.refuse("ionic-rx-too-long", "frame of " + length + " bytes does not fit the posted buffers");
            }
        }
        compBuf.fill((byte) 0);
        rxComp.wrap(compBuf, 0).status(status).numSgElems(sgUsed).compIndex(slot).rssHash(hash)
                .len(status == Status.SUCCESS ? length : 0)
                .pktTypeColor(FlowHash.packetType(frame), q.color);
        dma.publish(q.cqBase + (long) q.cqIndex * Ring.CQ_DESC_SIZE, compBuf, Comp.SIZE, Comp.Admin.COLOR, 1);
        q.nextCompletion();
        q.tail = slot + 1 & q.mask;
        if (status == Status.SUCCESS) {
            stats.rxDelivered(dst, length);
        } else {
            stats.rxDropped(dst, length);
        }
        if (q.irq) {
            intr.raise(q.intr);
        }
        return status == Status.SUCCESS;
    }

    /**
     * Queues a frame from an in-process endpoint for the guest. It is delivered as soon as its
     * queue has a buffer; until then it waits, and so do the frames queued after it. Returns false
     * (counted) when the frame is too long or the backlog is full.
     */
    boolean queueForGuest(MemorySegment frame) {
        long size = frame.byteSize();
        if (size < 14 || size > frameCapacity || guestQueueCount == EthLif.GUEST_QUEUE_SLOTS) {
            stats.inc(EthStats.Device.GUEST_QUEUE_REFUSED);
            refusals.refuse("ionic-guest-queue", guestQueueCount == EthLif.GUEST_QUEUE_SLOTS
                    ? "in-process frame queue full (" + EthLif.GUEST_QUEUE_SLOTS + ")" : "in-process frame of " + size + " bytes");
            return false;
        }
        int slot = (guestQueueHead + guestQueueCount) % EthLif.GUEST_QUEUE_SLOTS;
        MemorySegment.copy(frame, 0, guestQueue, (long) slot * frameCapacity, size);
        guestQueueLength[slot] = (int) size;
        guestQueueCount++;
        stats.inc(EthStats.Device.GUEST_QUEUED);
        drainGuestQueue();
        return true;
    }

    int guestQueueBacklog() {
        return guestQueueCount;
    }

    /**
     * The guest posted RX buffers (an RX doorbell, an RX queue enabled): delivers queued in-process frames,
     * and when that shrank the backlog, tells the TX claimers (the in-process endpoints) that the queue has
     * room again. Their frames go through {@link #queueForGuest}, which drains without telling anyone, so
     * the hook never runs inside itself.
     */
    void rxBuffersPosted() {
        int backlog = guestQueueCount;
        drainGuestQueue();
        if (guestQueueCount < backlog) {
            for (int i = 0; i < txClaimers.size(); i++) {
                txClaimers.get(i).guestQueueDrained();
            }
        }
    }

    /** Delivers queued in-process frames while their queues have buffers, in order. */
    private void drainGuestQueue() {
        while (guestQueueCount > 0) {
            int slot = guestQueueHead;
            MemorySegment frame = guestQueue.asSlice((long) slot * frameCapacity, guestQueueLength[slot]);
            int hash = FlowHash.hash(frame);
            EthQueue q = pickRx(hash);
            if (q == null || q.empty()) {
                return;
            }
            guestQueueHead = (guestQueueHead + 1) % EthLif.GUEST_QUEUE_SLOTS;
            guestQueueCount--;
            stats.rxWire(guestQueueLength[slot]);
            if (deliver(q, frame, guestQueueLength[slot], hash, Mac.read(frame, 0))) {
                stats.inc(EthStats.Device.GUEST_QUEUE_DELIVERED);
            }
        }
    }
}
