package ernic.ionic.eth;

import ernic.attach.FrameClaimer;
import ernic.ionic.base.Bar2;
import ernic.ionic.base.Dma;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Cmd;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Identity.PortConfig;
import ernic.ionic.layout.InfoBlock.LifInfo;
import ernic.ionic.layout.InfoBlock.LifStats;
import ernic.ionic.layout.InfoBlock.PortInfo;
import ernic.ionic.layout.InfoBlock.PortStats;
import ernic.ionic.layout.Mac;
import ernic.ionic.layout.Ring;
import ernic.ionic.layout.Ring.NotifyEvent;
import ernic.ionic.profile.Profile;
import ernic.ionic.regs.InterruptController;
import ernic.ionic.regs.Status;
import ernic.vfiouser.server.Refusals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;

/**
 * The Ethernet LIF (one, index 0) and its port: admin queue, notify queue, RX and TX queues, the
 * station MAC and receive filters, the lif_info and port_info blocks in guest memory. The frames
 * themselves (TX to the sink and claimers, RX from the wire and from in-process endpoints) go
 * through {@link FramePath}; the endpoints register here.
 *
 * <p>Queue types: the logical type is also the hardware type (adminq 0, notifyq 1, rxq 2, txq 3)
 * and the hardware index is the logical index, so a doorbell's (qtype, qid) names the queue directly.
 * RDMA types (5..9) are distinct, as the shared doorbell page requires.
 *
 * <p>Device thread only.
 */
public final class EthLif {
    public static final int QTYPE_ADMINQ = 0, QTYPE_NOTIFYQ = 1, QTYPE_RXQ = 2, QTYPE_TXQ = 3;
    /** Rings deeper than 2^15 are refused. */
    public static final int MAX_RING_LOG2 = 15, MIN_RING_LOG2 = 2;
    /** The notify queue's event ring follows its 4 KiB descriptor page. */
    public static final long NOTIFYQ_EVENT_OFFSET = 4096;
    public static final int MAX_UCAST_FILTERS = 64, MAX_MCAST_FILTERS = 64;
    /** In-process frames waiting for a guest buffer, at most. */
    public static final int GUEST_QUEUE_SLOTS = 256;

    private final Profile profile;
    private final InterruptController intr;
    private final FaultPlan faults;
    private final Dma dma;
    private final Refusals refusals;
    private final EthStats stats = new EthStats();
    private final long defaultMac;

    private final EthQueue adminq = new EthQueue(QTYPE_ADMINQ, 0);
    private final EthQueue notifyq = new EthQueue(QTYPE_NOTIFYQ, 0);
    private final EthQueue[] rxqs, txqs;
    private final FramePath frames;
    private long nextEid;

    private long mac;
    private int mtu;
    private int rxMode;
    private int lifState;
    private long features;
    private boolean lifInitialized;
    private long lifInfoPa;
    private long portInfoPa;
    private boolean linkUp = true;
    private int linkDownCount;
    private final Map<Integer, Long> filters = new HashMap<>();
    private int nextFilterId = 1;

    // Scratch: one of each, reused; never escapes a call.
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment cmdBuf = arena.allocate(Cmd.SIZE, 8);
    private final MemorySegment compBuf = arena.allocate(Comp.SIZE, 8);
    private final MemorySegment eventBuf = arena.allocate(Ring.NOTIFY_EVENT_SIZE, 8);
    private final MemorySegment statusBuf = arena.allocate(PortInfo.STATUS_SIZE, 8);
    private final MemorySegment statsBuf = arena.allocate(Math.max(LifStats.WRITTEN, PortStats.WRITTEN), 8);

    private final Comp.Admin comp = new Comp.Admin();
    private final NotifyEvent event = new NotifyEvent();
    private final LifInfo lifInfo = new LifInfo();
    private final PortInfo portInfo = new PortInfo();

    private DeviceCommands commands;

    public EthLif(Profile profile, InterruptController intr, FaultPlan faults, Dma dma, Refusals refusals, long mac) {
        this.profile = profile;
        this.intr = intr;
        this.faults = faults;
        this.dma = dma;
        this.refusals = refusals;
        this.defaultMac = mac;
        int n = profile.ethQueues();
        rxqs = new EthQueue[n];
        txqs = new EthQueue[n];
        for (int i = 0; i < n; i++) {
            rxqs[i] = new EthQueue(QTYPE_RXQ, i);
            txqs[i] = new EthQueue(QTYPE_TXQ, i);
        }
        // A frame from the guest: MTU + Ethernet header + one VLAN tag (no FCS); round up for slack.
        frames = new FramePath(rxqs, profile.maxFrameSize() + 4, intr, faults, dma, refusals, stats);
        powerOn();
    }

    void commands(DeviceCommands commands) {
        this.commands = commands;
    }

    public EthStats stats() {
        return stats;
    }

    public Profile profile() {
        return profile;
    }

    // ---------------------------------------------------------------------------------------------
    // Lifecycle

    /** Power-on state: no queues, no blocks, default MAC, link up, counters zero. */
    public void powerOn() {
        resetLif();
        resetPort();
        stats.clearAll();
        mac = defaultMac;
        linkUp = true;
        linkDownCount = 0;
        frames.clearGuestQueue();
    }

    /** devcmd RESET: LIF and port reset, default MAC, every counter zero. Endpoints stay registered. */
    public void deviceReset() {
        resetLif();
        resetPort();
        stats.clearAll();
        mac = defaultMac;
    }

    /** devcmd LIF_RESET: every queue and filter gone; the lif_info block is no longer written. */
    public void resetLif() {
        adminq.clear();
        notifyq.clear();
        for (EthQueue q : rxqs) {
            q.clear();
        }
        for (EthQueue q : txqs) {
            q.clear();
        }
        frames.rxQueuesChanged();
        nextEid = 1;
        filters.clear();
        nextFilterId = 1;
        rxMode = 0;
        lifState = 0;
        features = 0;
        mtu = 1500;
        lifInitialized = false;
        lifInfoPa = 0;
    }

    /** devcmd PORT_RESET: the port_info block is no longer written; port counters zero. */
    public void resetPort() {
        portInfoPa = 0;
        stats.clearPort();
    }

    // ---------------------------------------------------------------------------------------------
    // Commands the command processor delegates here (each returns an ionic status)

    /** PORT_INIT: remember info_pa; write config, status and statistics. */
    int portInit(long infoPa, MemorySegment config) {
        if (!Dma.validRange(infoPa, PortInfo.SIZE) || !dma.mapped(infoPa, PortInfo.SIZE)) {
            refusals.refuse("ionic-port-info-unmapped", "PORT_INIT info_pa 0x" + Long.toHexString(infoPa) + " not in guest memory");
            return Status.BAD_ADDR;
        }
        portInfoPa = infoPa;
        if (config != null) {
            dma.write(infoPa + PortInfo.CONFIG, config, 0, PortConfig.SIZE);
        }
        writePortStatus();
        writePortStats();
        return Status.SUCCESS;
    }

    /** LIF_INIT: remember info_pa; write status (link) and statistics. */
    int lifInit(long infoPa) {
        if (!Dma.validRange(infoPa, LifInfo.SIZE) || !dma.mapped(infoPa, LifInfo.SIZE)) {
            refusals.refuse("ionic-lif-info-unmapped", "LIF_INIT info_pa 0x" + Long.toHexString(infoPa) + " not in guest memory");
            return Status.BAD_ADDR;
        }
        lifInfoPa = infoPa;
        lifInitialized = true;
        writeLifStatus();
        writeLifStats();
        return Status.SUCCESS;
    }

    /** Q_INIT (devcmd or admin queue); fills hw_index/hw_type of {@code out}. */
    int queueInit(Cmd.QInit c, Comp.QInit out) {
        int type = c.type();
        if (c.lifIndex() != 0) {
            refusals.refuse("ionic-q-init-lif", "Q_INIT for LIF " + c.lifIndex());
            return Status.ENOENT;
        }
        EthQueue q = queue(type, c.index(), "Q_INIT");
        if (q == null) {
            return type > QTYPE_TXQ ? Status.EQTYPE : Status.EQID;
        }
        int log2 = c.ringSize();
        if (log2 > MAX_RING_LOG2 || log2 < MIN_RING_LOG2) {
            refusals.refuse("ionic-q-init-ring-size", "Q_INIT ring_size " + log2 + " (2.." + MAX_RING_LOG2 + ")");
            return Status.EINVAL;
        }
        int flags = c.flags();
        boolean irq = (flags & Cmd.QInit.F_IRQ) != 0;
        if (irq && !intr.valid(c.intrIndex())) {
            refusals.refuse("ionic-q-init-intr", "Q_INIT intr_index " + c.intrIndex() + " of " + intr.count());
            return Status.EINVAL;
        }
        if (!Bar2.validPage(c.pid())) {
            refusals.refuse("ionic-q-init-pid", "Q_INIT pid " + c.pid() + " names no doorbell page");
            return Status.EINVAL;
        }
        if ((flags & Cmd.QInit.F_CMB) != 0) {
            refusals.refuse("ionic-q-init-cmb", "Q_INIT asks for a CMB ring; the device has no CMB");
            return Status.EINVAL;
        }
        long depth = 1L << log2;
        long descBytes, cqBytes, sgBytes = 0;
        long ring = c.ringBase(), cq = c.cqRingBase(), sgRing = c.sgRingBase();
        boolean sg = (flags & Cmd.QInit.F_SG) != 0;
        switch (type) {
            case QTYPE_ADMINQ -> { descBytes = depth * Ring.ADMIN_DESC_SIZE; cqBytes = depth * Ring.CQ_DESC_SIZE; }
            case QTYPE_NOTIFYQ -> { descBytes = NOTIFYQ_EVENT_OFFSET + depth * Ring.NOTIFY_EVENT_SIZE; cqBytes = 0; }
            case QTYPE_RXQ -> {
                descBytes = depth * Ring.RX_DESC_SIZE; cqBytes = depth * Ring.CQ_DESC_SIZE;
                sgBytes = sg ? depth * Ring.RX_SG_DESC_SIZE : 0;
            }
            default -> {
                descBytes = depth * Ring.TX_DESC_SIZE; cqBytes = depth * Ring.CQ_DESC_SIZE;
                sgBytes = sg ? depth * txSgDescSize(c.ver()) : 0;
            }
        }
        if (!ringMapped(ring, descBytes) || cqBytes > 0 && !ringMapped(cq, cqBytes)
                || sgBytes > 0 && !ringMapped(sgRing, sgBytes)) {
            refusals.refuse("ionic-q-init-ring-unmapped", "Q_INIT type " + type + " index " + c.index()
                    + ": a ring is not in guest memory");
            return Status.BAD_ADDR;
        }
        boolean wasEnabled = q.enabled;
        q.init(c.ver(), log2, ring, cq, sgRing, c.intrIndex(), irq, sg, (flags & Cmd.QInit.F_ENA) != 0);
        q.pid = c.pid();
        if (type == QTYPE_NOTIFYQ) {
            nextEid = 1;
        }
        if (type == QTYPE_RXQ && wasEnabled != q.enabled) {
            frames.rxQueuesChanged();
        }
        out.hwIndex(q.index).hwType(type);
        return Status.SUCCESS;
    }

    private boolean ringMapped(long base, long bytes) {
        return base != 0 && dma.mapped(base, bytes);
    }

    /** TX SG descriptor size for a queue version: 256 bytes (16 elements) from version 1. */
    static int txSgDescSize(int ver) {
        return ver >= 1 ? Ring.TX_SG_DESC_SIZE_V1 : Ring.TX_SG_DESC_SIZE_V0;
    }

    /** Q_CONTROL: enable or disable a queue by logical type and index. */
    int queueControl(Cmd.QControl c) {
        if (c.lifIndex() != 0) {
            refusals.refuse("ionic-q-control-lif", "Q_CONTROL for LIF " + c.lifIndex());
            return Status.ENOENT;
        }
        int type = c.type();
        EthQueue q = queue(type, c.index(), "Q_CONTROL");
        if (q == null) {
            return type > QTYPE_TXQ ? Status.EQTYPE : Status.EQID;
        }
        if (!q.initialized) {
            refusals.refuse("ionic-q-control-uninitialized", "Q_CONTROL on a queue that had no Q_INIT");
            return Status.ENOENT;
        }
        switch (c.oper()) {
            case Cmd.QControl.ENABLE -> {
                q.enabled = true;
                if (type == QTYPE_RXQ) {
                    frames.rxQueuesChanged();
                    frames.rxBuffersPosted();
                } else if (type == QTYPE_TXQ) {
                    frames.serviceTx(q);
                } else if (type == QTYPE_ADMINQ) {
                    // Commands posted while disabled wait for the next doorbell.
                }
            }
            case Cmd.QControl.DISABLE -> {
                q.enabled = false;
                if (type == QTYPE_RXQ) {
                    frames.rxQueuesChanged();
                }
            }
            case Cmd.QControl.HANG_RESET -> { }
            default -> {
                refusals.refuse("ionic-q-control-oper", "Q_CONTROL oper " + c.oper());
                return Status.EINVAL;
            }
        }
        return Status.SUCCESS;
    }

    /** The queue of a logical type and index, or null (refusal counted). */
    private EthQueue queue(int type, long index, String what) {
        switch (type) {
            case QTYPE_ADMINQ, QTYPE_NOTIFYQ -> {
                if (index == 0) {
                    return type == QTYPE_ADMINQ ? adminq : notifyq;
                }
            }
            case QTYPE_RXQ, QTYPE_TXQ -> {
                if (index >= 0 && index < rxqs.length) {
                    return type == QTYPE_RXQ ? rxqs[(int) index] : txqs[(int) index];
                }
            }
            default -> {
                refusals.refuse("ionic-queue-type", what + " for unknown queue type " + type);
                return null;
            }
        }
        refusals.refuse("ionic-queue-index", what + " type " + type + " index " + index + " past the LIF's queue count");
        return null;
    }

    int lifSetattr(Cmd.LifAttr c, Comp.LifAttr out) {
        switch (c.attr()) {
            case Cmd.LifAttr.STATE -> lifState = c.state();
            case Cmd.LifAttr.MTU -> {
                int m = c.mtu();
                if (m < Profile.MIN_MTU || m > profile.maxMtu()) {
                    refusals.refuse("ionic-lif-mtu", "LIF_SETATTR MTU " + Integer.toUnsignedString(m));
                    return Status.EINVAL;
                }
                mtu = m;
            }
            case Cmd.LifAttr.MAC -> {
                long m = c.mac();
                if (m == 0 || Mac.isMulticast(m)) {
                    refusals.refuse("ionic-lif-mac", "LIF_SETATTR MAC " + Mac.format(m) + " is not a unicast address");
                    return Status.EINVAL;
                }
                mac = m;
            }
            case Cmd.LifAttr.FEATURES -> {
                // Grant nothing: no checksum, TSO, VLAN, SG or RSS offload (granted = asked & reply).
                features = 0;
                out.features(features);
            }
            case Cmd.LifAttr.STATS_CTRL -> {
                if (c.statsCtl() == 0) { // IONIC_STATS_CTL_RESET
                    stats.clearLif();
                    writeLifStats();
                }
            }
            default -> { } // NAME, RSS, TXSTAMP and the rest succeed without effect
        }
        return Status.SUCCESS;
    }

    int lifGetattr(Cmd.LifAttr c, Comp.LifAttr out) {
        switch (c.attr()) {
            case Cmd.LifAttr.STATE -> out.state(lifState);
            case Cmd.LifAttr.MTU -> out.mtu(mtu);
            case Cmd.LifAttr.MAC -> out.mac(mac);
            case Cmd.LifAttr.FEATURES -> out.features(features);
            default -> { }
        }
        return Status.SUCCESS;
    }

    int rxModeSet(Cmd.RxModeSet c) {
        rxMode = c.rxMode();
        return Status.SUCCESS;
    }

    int rxFilterAdd(Cmd.RxFilterAdd c, Comp.RxFilterAdd out) {
        int match = c.match();
        long key;
        switch (match) {
            case Cmd.RxFilterAdd.MATCH_VLAN -> key = 1L << 60 | c.vlan();
            case Cmd.RxFilterAdd.MATCH_MAC -> key = 2L << 60 | c.mac();
            case Cmd.RxFilterAdd.MATCH_MAC_VLAN -> key = 3L << 60 | (long) c.vlan() << 48 | c.macVlanMac();
            case Cmd.RxFilterAdd.STEER_PKTCLASS -> key = 4L << 60 | c.pktClass() & 0x0fff_ffff_ffff_ffffL;
            default -> {
                refusals.refuse("ionic-rx-filter-match", "RX_FILTER_ADD match " + match);
                return Status.EINVAL;
            }
        }
        for (Map.Entry<Integer, Long> e : filters.entrySet()) {
            if (e.getValue() == key) {
                out.filterId(e.getKey());
                return Status.EEXIST;
            }
        }
        if (filters.size() >= MAX_UCAST_FILTERS + MAX_MCAST_FILTERS) {
            refusals.refuse("ionic-rx-filter-full", "RX_FILTER_ADD beyond " + filters.size() + " filters");
            return Status.ENOSPC;
        }
        int id = nextFilterId++;
        if (nextFilterId <= 0) {
            nextFilterId = 1;
        }
        filters.put(id, key);
        out.filterId(id);
        return Status.SUCCESS;
    }

    int rxFilterDel(Cmd.RxFilterDel c) {
        if (filters.remove(c.filterId()) == null) {
            refusals.refuse("ionic-rx-filter-unknown", "RX_FILTER_DEL of unknown filter " + c.filterId());
            return Status.ENOENT;
        }
        return Status.SUCCESS;
    }

    // ---------------------------------------------------------------------------------------------
    // Doorbells (BAR 2)

    /** A doorbell for an Ethernet queue type (0..3); false when the type is not Ethernet. */
    /** A doorbell on page {@code page}; a queue's counts only on its own page (its pid). */
    public boolean doorbell(int page, int qtype, long value) {
        int qid = Ring.Doorbell.qid(value);
        int p = Ring.Doorbell.pIndex(value);
        EthQueue q;
        switch (qtype) {
            case QTYPE_ADMINQ -> q = qid == 0 ? adminq : null;
            case QTYPE_RXQ -> q = qid < rxqs.length ? rxqs[qid] : null;
            case QTYPE_TXQ -> q = qid < txqs.length ? txqs[qid] : null;
            case QTYPE_NOTIFYQ -> {
                refusals.refuse("ionic-db-notifyq", "doorbell for the notify queue, which has none");
                return true;
            }
            default -> {
                return false;
            }
        }
        if (q == null) {
            refusals.refuse("ionic-db-qid", "doorbell type " + qtype + " for queue " + qid + " past the LIF's count");
            return true;
        }
        if (!q.initialized) {
            refusals.refuse("ionic-db-uninitialized", "doorbell type " + qtype + " queue " + qid + " before Q_INIT");
            return true;
        }
        if (page != q.pid) {
            refusals.refuse("ionic-db-page", "doorbell type " + qtype + " queue " + qid + " on page " + page
                    + ", its page is " + q.pid);
            return true;
        }
        if (p > q.mask) {
            refusals.refuse("ionic-db-index", "doorbell index " + p + " past ring of " + q.depth());
            return true;
        }
        q.head = p;
        switch (qtype) {
            case QTYPE_ADMINQ -> serviceAdminq();
            case QTYPE_TXQ -> frames.serviceTx(q);
            default -> frames.rxBuffersPosted();
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------
    // Admin queue

    private void serviceAdminq() {
        EthQueue q = adminq;
        if (!q.enabled) {
            return;
        }
        int generation = q.generation;
        boolean any = false;
        while (q.tail != q.head) {
            int slot = q.tail;
            cmdBuf.fill((byte) 0);
            compBuf.fill((byte) 0);
            int status;
            if (dma.read(q.ringBase + (long) slot * Ring.ADMIN_DESC_SIZE, cmdBuf, 0, Cmd.SIZE)) {
                status = commands.execute(cmdBuf, compBuf, null);
            } else {
                refusals.refuse("ionic-adminq-fetch", "admin queue descriptor not readable");
                status = Status.BAD_ADDR;
            }
            if (q.generation != generation || !q.initialized) {
                return; // the command re-initialized or reset the admin queue itself
            }
            comp.wrap(compBuf, 0).status(status).compIndex(slot).color(q.color);
            dma.publish(q.cqBase + (long) q.cqIndex * Ring.CQ_DESC_SIZE, compBuf, Comp.SIZE, Comp.Admin.COLOR, 1);
            q.nextCompletion();
            q.tail = slot + 1 & q.mask;
            any = true;
        }
        if (any && q.irq) {
            intr.raise(q.intr);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Notify queue and link

    /** Posts a notify event (eid assigned here); raises the notify queue's interrupt. */
    private void postEvent(int ecode, int linkStatus, int linkSpeed) {
        EthQueue q = notifyq;
        if (!q.initialized || !q.enabled) {
            return;
        }
        eventBuf.fill((byte) 0);
        long eid = nextEid++;
        event.wrap(eventBuf, 0).eid(eid).ecode(ecode).linkStatus(linkStatus).linkSpeed(linkSpeed);
        long at = q.ringBase + NOTIFYQ_EVENT_OFFSET + (long) q.tail * Ring.NOTIFY_EVENT_SIZE;
        dma.publish(at, eventBuf, Ring.NOTIFY_EVENT_SIZE, 0, 8);
        q.tail = q.tail + 1 & q.mask;
        if (q.irq) {
            intr.raise(q.intr);
        }
    }

    public boolean linkUp() {
        return linkUp;
    }

    /**
     * The carrier changed (for example the TAP's): update lif_info and port_info, then post a
     * LINK_CHANGE event, on which the driver re-reads lif_info.
     */
    public void setLink(boolean up) {
        if (up == linkUp) {
            return;
        }
        linkUp = up;
        if (!up) {
            linkDownCount++;
        }
        writeLifStatus();
        writePortStatus();
        postEvent(NotifyEvent.LINK_CHANGE, up ? LifInfo.LINK_UP : LifInfo.LINK_DOWN, up ? profile.linkSpeedMbps() : 0);
    }

    private void writeLifStatus() {
        if (lifInfoPa == 0) {
            return;
        }
        statusBuf.asSlice(0, LifInfo.STATUS_SIZE).fill((byte) 0);
        lifInfo.wrap(statusBuf, -LifInfo.STATUS)
                .eid(nextEid - 1).portNum(0)
                .linkStatus(linkUp ? LifInfo.LINK_UP : LifInfo.LINK_DOWN)
                .linkSpeed(linkUp ? profile.linkSpeedMbps() : 0)
                .linkDownCount(linkDownCount);
        dma.write(lifInfoPa + LifInfo.STATUS, statusBuf, 0, LifInfo.STATUS_SIZE);
    }

    private void writePortStatus() {
        if (portInfoPa == 0) {
            return;
        }
        statusBuf.fill((byte) 0);
        portInfo.wrap(statusBuf, -PortInfo.STATUS)
                .id(0).speed(linkUp ? profile.linkSpeedMbps() : 0)
                .operStatus(linkUp ? LifInfo.LINK_UP : LifInfo.LINK_DOWN)
                .linkDownCount(linkDownCount)
                .xcvr(PortInfo.XCVR_STATE_SPROM_READ, profile.transceiver().phy(), profile.transceiver().pid());
        dma.write(portInfoPa + PortInfo.STATUS, statusBuf, 0, PortInfo.STATUS_SIZE);
    }

    private void writeLifStats() {
        if (lifInfoPa == 0) {
            return;
        }
        stats.writeLif(statsBuf);
        dma.write(lifInfoPa + LifInfo.STATS, statsBuf, 0, LifStats.WRITTEN);
    }

    private void writePortStats() {
        if (portInfoPa == 0) {
            return;
        }
        stats.writePort(statsBuf);
        dma.write(portInfoPa + PortInfo.STATS, statsBuf, 0, PortStats.WRITTEN);
    }

    /** The statistics tick: rewrite the LIF and port statistics blocks (and the LIF status). */
    public void writeStatistics() {
        writeLifStatus();
        writeLifStats();
        writePortStats();
    }

    public long lifInfoPa() {
        return lifInfoPa;
    }

    public long portInfoPa() {
        return portInfoPa;
    }

    public long mac() {
        return mac;
    }

    public int mtu() {
        return mtu;
    }

    public int rxMode() {
        return rxMode;
    }

    public int filterCount() {
        return filters.size();
    }

    // ---------------------------------------------------------------------------------------------
    // Frame endpoints (the frame path)

    /** The frame sink; null completes and discards transmitted frames. */
    public void sink(FrameSink sink) {
        frames.sink(sink);
    }

    /**
     * Told the source address of every frame the guest transmits, as it gathered it (before claimers and the P4
     * program); null: nobody. Device thread.
     */
    public void sourceWatcher(SourceWatcher w) {
        frames.sources(w);
    }

    /** The P4 program every frame between the guest and the TAP goes through (null: none); see {@link FrameFilter}. */
    public void frameFilter(FrameFilter f) {
        frames.filter(f);
    }

    /** A frame the device itself sends out of the port (RoCEv2), straight to the sink; dropped without one. */
    public void toWire(MemorySegment frame) {
        frames.toWire(frame);
    }

    /** Adds an in-process endpoint that sees each transmitted frame before the sink. */
    public void addTxClaimer(FrameClaimer c) {
        frames.addTxClaimer(c);
    }

    public void removeTxClaimer(FrameClaimer c) {
        frames.removeTxClaimer(c);
    }

    /** Adds an in-process endpoint that sees each frame from the wire before the guest. */
    public void addRxClaimer(FrameClaimer c) {
        frames.addRxClaimer(c);
    }

    public void removeRxClaimer(FrameClaimer c) {
        frames.removeRxClaimer(c);
    }

    /** A frame from the wire for the guest; see {@link FramePath#receive}. */
    public boolean receive(MemorySegment frame) {
        return frames.receive(frame);
    }

    /** A frame from an in-process endpoint; see {@link FramePath#queueForGuest}. */
    public boolean queueForGuest(MemorySegment frame) {
        return frames.queueForGuest(frame);
    }

    /** In-process frames still waiting for a guest buffer. */
    public int guestQueueBacklog() {
        return frames.guestQueueBacklog();
    }
}
