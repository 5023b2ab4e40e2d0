package ernic.ionic;

import ernic.common.Endian;
import ernic.counters.Counter;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import ernic.ionic.eth.DeviceCommands;
import ernic.ionic.base.Bar2;
import ernic.ionic.base.Dma;
import ernic.ionic.eth.EthLif;
import ernic.ionic.eth.EthStats;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Comp;
import ernic.ionic.layout.Mac;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.profile.Profile;
import ernic.ionic.rdma.RdmaLif;
import ernic.ionic.regs.Bar0;
import ernic.ionic.regs.InterruptController;
import ernic.vfiouser.pci.PciConfigSpace;
import ernic.vfiouser.server.DeviceContext;
import ernic.vfiouser.server.PciFunction;
import ernic.vfiouser.server.Refusals;
import ernic.vfiouser.server.Region;
import ernic.vfiouser.server.RegionHandler;
import ernic.vfiouser.server.VfioUserDevice;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static ernic.common.Endian.LE;

/**
 * The emulated AMD Pensando ionic PF (1dd8:1002) as the stock Linux {@code ionic} driver sees it.
 *
 * <ul>
 * <li>BAR 0, 64 KiB, 64-bit: the 32 KiB register window (dev_info_regs, dev_cmd_regs, intr_status,
 *     intr_ctrl), then the MSI-X table at 0x8000 and the PBA at 0xa000.</li>
 * <li>BAR 2, 4 MiB, 64-bit: doorbell pages of 4 KiB; every page decodes the same (offset in the
 *     page / 8 = queue type). Nothing at BAR index 4, which would turn on CMB in the driver.</li>
 * <li>MSI-X with the profile's vector count, INTx pin A, power management, PCI Express gen4 x16.</li>
 * </ul>
 * Device commands run synchronously inside the doorbell write. Every method runs on the device thread.
 */
public final class IonicDevice implements VfioUserDevice {
    private static final Logger log = LoggerFactory.getLogger(IonicDevice.class);

    /** Device commands run through BAR 0 ({@code devcmd.*}). */
    public enum Devcmd implements Counter {
        EXECUTED
    }

    public static final int VENDOR_ID = 0x1dd8, DEVICE_ID = 0x1002, SUBSYSTEM_ID = 0x5400, CLASS_CODE = 0x020000;
    public static final long BAR2_SIZE = Bar2.SIZE;
    public static final int DOORBELL_PAGE = Bar2.PAGE;
    /** asic_type: Giglio, which keeps the driver's doorbell workaround (0 or 2) off. */
    public static final int ASIC_TYPE = Bar0.ASIC_TYPE_GIGLIO;
    public static final int ASIC_REV = 0;
    /** fw_status: running, generation 1 (constant, so the driver never restarts the LIF). */
    public static final int FW_STATUS = Bar0.FW_STS_RUNNING | 1 << 4;
    /** Default station MAC: locally administered unicast. */
    public static final long DEFAULT_MAC = 0x02_00_00_ee_00_01L;

    private final Profile profile;
    private final FaultPlan faults;
    private final String serial;
    private final Refusals refusals = new Refusals(log);
    private final PciConfigSpace config;
    private final InterruptController intr;
    private final Dma dma = new Dma();
    private final EthLif lif;
    private final DeviceCommands commands;
    private final RdmaLif rdma;
    private final PciFunction pci;

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment regs = arena.allocate(Bar0.WINDOW, 8);
    private final MemorySegment devcmdCmd = regs.asSlice(Bar0.DEVCMD_CMD, 64);
    private final MemorySegment devcmdComp = regs.asSlice(Bar0.DEVCMD_COMP, Comp.SIZE);
    private final MemorySegment devcmdData = regs.asSlice(Bar0.DEVCMD_DATA, Bar0.DEVCMD_DATA_SIZE);
    private final Comp.Admin devcmdStatus = new Comp.Admin();
    /** Low halves of doorbells written as two 32-bit stores, per slot of a page. */
    private final long[] doorbellLow = new long[DOORBELL_PAGE / 8];
    private final boolean[] doorbellLowValid = new boolean[DOORBELL_PAGE / 8];

    private ScheduledFuture<?> heartbeatTimer, statsTimer, rdmaTimer;
    private final Counters<Devcmd> devcmds = new Counters<>(Devcmd.class);
    /** The device's own sets, registered as in {@link #registerCounters}: what {@link #counters()} walks. */
    private final CounterRegistry registry = new CounterRegistry();
    private volatile Map<String, Long> lastSession = Map.of();
    /** In-process endpoints that forget their state at power-on (the guest's stack is gone too). */
    private final List<Runnable> resetListeners = new ArrayList<>();
    private P4Hooks p4;
    /** See {@link #clock}; the system's until the device attaches to its loop. */
    private io.netty.util.concurrent.Ticker clock = io.netty.util.concurrent.Ticker.systemTicker();

    public IonicDevice(Profile profile, FaultPlan faults, long mac, String serial) {
        if (mac == 0 || Mac.isMulticast(mac) || (mac >>> 48) != 0) {
            throw new IllegalArgumentException("station MAC " + Mac.format(mac) + " must be a unicast address");
        }
        this.profile = profile;
        this.faults = faults;
        this.serial = serial;
        this.config = PciConfigSpace.builder()
                .vendorId(VENDOR_ID).deviceId(DEVICE_ID)
                .subsystemVendorId(VENDOR_ID).subsystemId(SUBSYSTEM_ID)
                .classCode(CLASS_CODE)
                .interruptPin(1)
                .memoryBar(0, Bar0.SIZE, true, false)
                .memoryBar(2, BAR2_SIZE, true, false)
                .powerManagement()
                .msix(new PciConfigSpace.Msix(profile.interrupts(), 0, Bar0.MSIX_TABLE, 0, Bar0.MSIX_PBA))
                .pciExpress(4, 16)
                .build();
        this.intr = new InterruptController(profile.interrupts());
        this.lif = new EthLif(profile, intr, faults, dma, refusals, mac);
        this.commands = new DeviceCommands(profile, lif, profile.interrupts(), refusals);
        this.rdma = new RdmaLif(profile, intr, dma, refusals, faults);
        commands.rdmaHandler(rdma);
        // The guest's source addresses, as it transmits them, are GIDs the mesh may learn (docs/mesh.md).
        lif.sourceWatcher(rdma::sourceSeen);
        this.pci = new PciFunction(config, List.of(Region.of(0, Bar0.SIZE, new Bar0Handler()), Region.of(2, BAR2_SIZE, new Bar2Handler())));
        registerCounters(registry);
        reset();
    }

    public IonicDevice(Profile profile, FaultPlan faults) {
        this(profile, faults, DEFAULT_MAC, "ERNIC" + String.format("%012x", DEFAULT_MAC));
    }

    @Override
    public PciFunction pci() {
        return pci;
    }

    @Override
    public void attach(DeviceContext context) {
        dma.attach(context.memory(), config::busMasterEnabled);
        intr.target(context.interrupts());
        EventLoop loop = context.eventLoop();
        if (loop != null) {
            heartbeatTimer = loop.scheduleAtFixedRate(this::heartbeatTick, 1, 1, TimeUnit.SECONDS);
            clock(loop.ticker());
            rdma.timer((nanos, task) -> {
                try {
                    return loop.schedule(task, nanos, TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    return null; // the loop is shutting down: nothing waits for it any more
                }
            });
            rdmaTimer = loop.scheduleAtFixedRate(() -> rdma.tick(loop.ticker().nanoTime()), RdmaLif.TICK_MILLIS,
                    RdmaLif.TICK_MILLIS, TimeUnit.MILLISECONDS);
            if (profile.statsIntervalMs() > 0) {
                statsTimer = loop.scheduleAtFixedRate(this::statisticsTick, profile.statsIntervalMs(),
                        profile.statsIntervalMs(), TimeUnit.MILLISECONDS);
            }
        }
    }

    @Override
    public void reset() {
        config.reset();
        regs.fill((byte) 0);
        LE.put32(regs, Bar0.SIGNATURE, Bar0.DEV_INFO_SIGNATURE);
        LE.put8(regs, Bar0.VERSION, Bar0.DEV_INFO_VERSION);
        LE.put8(regs, Bar0.ASIC_TYPE, ASIC_TYPE);
        LE.put8(regs, Bar0.ASIC_REV, ASIC_REV);
        LE.put8(regs, Bar0.FW_STATUS, FW_STATUS);
        LE.put32(regs, Bar0.FW_HEARTBEAT, 0);
        Endian.putString(regs, Bar0.FW_VERSION, Bar0.STRING_SIZE, profile.firmwareVersion());
        Endian.putString(regs, Bar0.SERIAL_NUM, Bar0.STRING_SIZE, serial);
        java.util.Arrays.fill(doorbellLowValid, false);
        intr.reset();
        lif.powerOn();
        rdma.reset();
        faults.reset();
        registry.reset(""); // power-on: every registered counter back to zero
        for (Runnable r : resetListeners) {
            r.run();
        }
    }

    /** Runs {@code r} at every power-on reset, after the device's own; device thread. */
    public void onReset(Runnable r) {
        resetListeners.add(r);
    }

    @Override
    public void detach() {
        // Reset zeroes the counters; keep what the session that just ended did.
        lastSession = counters();
        if (heartbeatTimer != null) {
            heartbeatTimer.cancel(false);
            heartbeatTimer = null;
        }
        if (statsTimer != null) {
            statsTimer.cancel(false);
            statsTimer = null;
        }
        if (rdmaTimer != null) {
            rdmaTimer.cancel(false);
            rdmaTimer = null;
        }
        rdma.timer(null);
        dma.detach();
        intr.target(null);
        reset();
    }

    /** The counters as they stood when the last client went away (empty before the first). */
    public Map<String, Long> lastSessionCounters() {
        return lastSession;
    }

    /** Advances fw_heartbeat (every second while attached). */
    public void heartbeatTick() {
        LE.put32(regs, Bar0.FW_HEARTBEAT, LE.u32(regs, Bar0.FW_HEARTBEAT) + 1);
    }

    /** Rewrites the LIF and port statistics blocks (on the profile's interval while attached). */
    public void statisticsTick() {
        lif.writeStatistics();
    }

    // ---------------------------------------------------------------------------------------------
    // Endpoints for the server and in-process targets

    public Profile profile() {
        return profile;
    }

    /** The Ethernet LIF, where the frame endpoints are: the sink (a TAP) and the in-process claimers. */
    public EthLif lif() {
        return lif;
    }

    public FaultPlan faults() {
        return faults;
    }

    public Refusals refusals() {
        return refusals;
    }

    public InterruptController interruptController() {
        return intr;
    }

    public DeviceCommands commands() {
        return commands;
    }

    /** The RDMA side: bootstrap commands, admin queues, data path. */
    public RdmaLif rdma() {
        return rdma;
    }

    /**
     * The one clock of the device thread (the device loop's ticker, set when the device attaches; a mock one in
     * tests): every RDMA timer and the P4 engine's meters read it.
     */
    public void clock(io.netty.util.concurrent.Ticker ticker) {
        clock = ticker;
        rdma.clock(ticker);
        if (p4 != null) {
            p4.clock(ticker);
        }
    }

    /**
     * Puts the P4 engine on the device (docs/p4.md): every frame between the guest and the TAP, every send WQE
     * when the program is written for WQEs, device commands 70-72 as the guest's scope allows. Device thread;
     * once, before the guest starts.
     */
    public void p4(P4Hooks hooks) {
        if (p4 != null) {
            throw new IllegalStateException("a P4 program is on the device already");
        }
        p4 = hooks;
        hooks.attach(refusals, rdma.p4WqeCounters());
        hooks.clock(clock);
        lif.frameFilter(hooks.ethernet());
        if (hooks.forWqes()) {
            rdma.wqeFilter(hooks.wqe());
        }
        commands.p4Handler(hooks.commands());
        hooks.registerCounters(registry);
        onReset(hooks::powerOn);
    }

    /**
     * Speaks RoCEv2 on the Ethernet port (docs/roce.md): RC QPs to destinations that are not here send and take
     * RoCEv2 packets through the port; RoCEv2 to this guest's addresses is taken before the guest's network stack.
     * Device thread; once, before the guest starts.
     */
    public void roce() {
        rdma.roce(lif::toWire, lif::mac, registry);
        lif.addRxClaimer(rdma::claimRoce);
    }

    /** The P4 hooks, or null when the engine is off. */
    public P4Hooks p4() {
        return p4;
    }

    /** A frame from the wire (TAP) for the guest; false when dropped. */
    public boolean receive(MemorySegment frame) {
        return lif.receive(frame);
    }

    /** A frame from an in-process endpoint; it waits for a guest buffer. False when refused. */
    public boolean queueForGuest(MemorySegment frame) {
        return lif.queueForGuest(frame);
    }

    /** How many more in-process frames {@link #queueForGuest} takes now without refusing one. */
    public int guestQueueRoom() {
        return EthLif.GUEST_QUEUE_SLOTS - lif.guestQueueBacklog();
    }

    /** Carrier up or down (lif_info, port_info, LINK_CHANGE event). */
    public void setLink(boolean up) {
        lif.setLink(up);
    }

    /** Each live QP's counters (the per-QP hw counters), by QP id. */
    public Map<Integer, Map<String, Long>> qpCounters() {
        return rdma.qpCounters();
    }

    /**
     * Registers every counter of the device: Ethernet ({@code eth.lif.}, {@code eth.port.},
     * {@code eth.device.}), device commands ({@code devcmd.}), interrupts ({@code intr.}), faults
     * ({@code fault.KIND.occurrences}, {@code fault.KIND.injected}), RDMA ({@code rdma.}, {@code rdma.hw.},
     * the family {@code rdma.hw.qp.} labelled {@code qp}, ...), the P4 hooks when on, and the refusals by cause
     * ({@code refused} labelled {@code cause}, not reset at power-on). Sets are owned by the device thread.
     */
    public void registerCounters(CounterRegistry r) {
        EthStats stats = lif.stats();
        r.register("eth.lif.", stats.lifCounters());
        r.register("eth.port.", stats.portCounters());
        r.register("eth.device.", stats.deviceCounters());
        r.register("devcmd.", devcmds);
        intr.registerCounters(r);
        faults.registerCounters(r);
        rdma.registerCounters(r);
        if (p4 != null) {
            p4.registerCounters(r);
        }
        refusals.registerIn(r, REFUSED);
    }

    /** The name of the device's refusals in the registry: {@code refused} labelled {@code cause}. */
    public static final String REFUSED = "refused";

    /**
     * Takes a snapshot of the device's registry and returns {@link #counters(List)} of it. Device thread. (A
     * server takes one snapshot of its registry for the stats file and the metrics and calls {@link #counters(List)}
     * on it.)
     */
    public Map<String, Long> counters() {
        return counters(snapshot(registry));
    }

    /**
     * The device's counters in {@code snapshot} (taken by {@link #snapshot(CounterRegistry)} of a registry the device
     * registered in) as one map under the stats file's keys, sorted: the device's registry names, Ethernet without
     * its {@code eth.} (as the keys were before the registry: {@code lif.*}, {@code port.*}, {@code device.*}), and
     * each refusal cause as {@code refused.CAUSE}. Per-QP families and what others registered are left out.
     */
    public Map<String, Long> counters(List<CounterRegistry.Sample> snapshot) {
        Map<String, Long> m = new TreeMap<>();
        List<CounterRegistry.Sample> own = new ArrayList<>();
        for (CounterRegistry.Sample s : snapshot) {
            if (registry.holds(s.name())) {
                own.add(s);
            }
        }
        CounterRegistry.flat(own).forEach((k, v) -> m.put(k.startsWith(ETH) ? k.substring(ETH.length()) : k, v));
        return m;
    }

    /**
     * A snapshot of {@code r} with the device's values brought up to date first ({@code rdma.hw.refusals} is the
     * refusal total, copied in). Device thread.
     */
    public List<CounterRegistry.Sample> snapshot(CounterRegistry r) {
        rdma.syncCounters();
        return r.snapshot();
    }

    private static final String ETH = "eth.";

    // ---------------------------------------------------------------------------------------------
    // BAR 0

    private void runDevcmd() {
        devcmdComp.fill((byte) 0);
        int status;
        try {
            status = commands.execute(devcmdCmd, devcmdComp, devcmdData);
        } catch (RuntimeException e) {
            // Nothing a guest sends may throw out of the event loop.
            refusals.refuse("ionic-devcmd-internal", "device command failed: " + e);
            status = ernic.ionic.regs.Status.ERROR;
        }
        devcmdStatus.wrap(devcmdComp, 0).status(status);
        devcmds.inc(Devcmd.EXECUTED);
        LE.put32(regs, Bar0.DEVCMD_DONE, Bar0.DEV_CMD_DONE);
    }

    private int intrStatusBytes() {
        return (profile.interrupts() + 63) / 64 * 8;
    }

    private int readByte(long at) {
        if (at < Bar0.WINDOW) {
            int a = (int) at;
            if (a >= Bar0.INTR_STATUS && a < Bar0.INTR_STATUS + intrStatusBytes()) {
                return pendingByte(a - Bar0.INTR_STATUS, false);
            }
            if (a >= Bar0.INTR_CTRL && a < Bar0.INTR_CTRL + Bar0.INTR_CTRL_SIZE * profile.interrupts()) {
                int rel = a - Bar0.INTR_CTRL;
                int field = rel % Bar0.INTR_CTRL_SIZE & ~3;
                return intr.read(rel / Bar0.INTR_CTRL_SIZE, field) >>> 8 * (rel & 3) & 0xff;
            }
            return LE.u8(regs, a);
        }
        if (at >= Bar0.MSIX_PBA && at < Bar0.MSIX_PBA + intrStatusBytes()) {
            return pendingByte((int) (at - Bar0.MSIX_PBA), true);
        }
        return 0; // MSI-X table (QEMU keeps it) and reserved space
    }

    /** Byte {@code b} of a pending bitmap: the device's latches, or the MSI-X PBA. */
    private int pendingByte(int b, boolean pba) {
        int v = 0;
        for (int bit = 0; bit < 8; bit++) {
            int vector = b * 8 + bit;
            if (vector >= profile.interrupts()) {
                break;
            }
            if (pba ? intr.msixPending(vector) : intr.pending(vector)) {
                v |= 1 << bit;
            }
        }
        return v;
    }

    private static boolean storedByte(long at) {
        return at >= Bar0.DEVCMD_DONE && at < Bar0.DEVCMD_COMP
                || at >= Bar0.DEVCMD_DATA && at < Bar0.DEVCMD_END;
    }

    private void writeBar0(long offset, MemorySegment src) {
        long end = offset + src.byteSize();
        boolean ignored = false;
        // Stored bytes land first; actions run after, in address order.
        for (long at = offset; at < end; at++) {
            if (storedByte(at)) {
                LE.put8(regs, at, LE.u8(src, at - offset));
            } else if (!(at >= Bar0.DEVCMD_DOORBELL && at < Bar0.DEVCMD_DONE) && !intrField(at)) {
                ignored = true;
            }
        }
        if (offset < Bar0.DEVCMD_DONE && end > Bar0.DEVCMD_DOORBELL) {
            int v = merge(LE.u32(regs, Bar0.DEVCMD_DOORBELL), Bar0.DEVCMD_DOORBELL, offset, src);
            LE.put32(regs, Bar0.DEVCMD_DOORBELL, v);
            if (v == 1) {
                runDevcmd();
            }
        }
        long intrEnd = Bar0.INTR_CTRL + (long) Bar0.INTR_CTRL_SIZE * profile.interrupts();
        if (offset < intrEnd && end > Bar0.INTR_CTRL) {
            long from = Math.max(offset, Bar0.INTR_CTRL) & ~3L;
            for (long reg = from; reg < Math.min(end, intrEnd); reg += 4) {
                int rel = (int) (reg - Bar0.INTR_CTRL);
                int i = rel / Bar0.INTR_CTRL_SIZE, field = rel % Bar0.INTR_CTRL_SIZE;
                if (field > Bar0.INTR_COAL) {
                    continue;
                }
                int current = field == Bar0.INTR_CREDITS ? 0 : intr.read(i, field);
                intr.write(i, field, merge(current, reg, offset, src));
            }
        }
        if (ignored) {
            refusals.refuse("ionic-bar0-readonly", "BAR 0 write of " + src.byteSize() + " bytes at 0x"
                    + Long.toHexString(offset) + " touches read-only or reserved space");
        }
    }

    private boolean intrField(long at) {
        long rel = at - Bar0.INTR_CTRL;
        return rel >= 0 && rel < (long) Bar0.INTR_CTRL_SIZE * profile.interrupts()
                && rel % Bar0.INTR_CTRL_SIZE < Bar0.INTR_COAL + 4;
    }

    /** The u32 register at {@code reg} after a write of {@code src} at {@code offset}. */
    private static int merge(int current, long reg, long offset, MemorySegment src) {
        int v = current;
        long end = offset + src.byteSize();
        for (long at = Math.max(reg, offset); at < Math.min(reg + 4, end); at++) {
            int shift = (int) (at - reg) * 8;
            v = v & ~(0xff << shift) | LE.u8(src, at - offset) << shift;
        }
        return v;
    }

    private final class Bar0Handler implements RegionHandler {
        @Override
        public void read(long offset, MemorySegment dst) {
            long n = dst.byteSize();
            if (offset + n <= Bar0.INTR_STATUS) {
                MemorySegment.copy(regs, offset, dst, 0, n); // dev_info and dev_cmd: plain storage
                return;
            }
            for (long i = 0; i < n; i++) {
                LE.put8(dst, i, readByte(offset + i));
            }
        }

        @Override
        public void write(long offset, MemorySegment src) {
            try {
                writeBar0(offset, src);
            } catch (RuntimeException e) {
                refusals.refuse("ionic-bar0-internal", "BAR 0 write failed: " + e);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // BAR 2: doorbells

    private void doorbell(long offset, long value) {
        int page = (int) (offset / DOORBELL_PAGE);
        int qtype = (int) (offset % DOORBELL_PAGE) >>> 3;
        try {
            if (lif.doorbell(page, qtype, value)) {
                return;
            }
            if (rdma.doorbell(page, qtype, value)) {
                return;
            }
            refusals.refuse("ionic-db-qtype", "doorbell for queue type " + qtype + " that nothing serves");
        } catch (RuntimeException e) {
            refusals.refuse("ionic-db-internal", "doorbell failed: " + e);
        }
    }

    private final class Bar2Handler implements RegionHandler {
        @Override
        public void read(long offset, MemorySegment dst) {
            dst.fill((byte) 0);
        }

        @Override
        public void write(long offset, MemorySegment src) {
            long size = src.byteSize();
            int slot = (int) (offset % DOORBELL_PAGE) >>> 3;
            if (size == 8 && (offset & 7) == 0) {
                doorbellLowValid[slot] = false;
                doorbell(offset, LE.u64(src, 0));
            } else if (size == 4 && (offset & 7) == 0) {
                doorbellLow[slot] = Integer.toUnsignedLong(LE.u32(src, 0));
                doorbellLowValid[slot] = true;
            } else if (size == 4 && (offset & 7) == 4 && doorbellLowValid[slot]) {
                doorbellLowValid[slot] = false;
                doorbell(offset - 4, doorbellLow[slot] | (long) LE.u32(src, 0) << 32);
            } else {
                refusals.refuse("ionic-db-width", "doorbell write of " + size + " bytes at 0x" + Long.toHexString(offset));
            }
        }
    }
}
