package ernic.server;

import ernic.ionic.IonicDevice;
import ernic.ionic.fault.FaultPlan;
import ernic.ionic.p4hook.P4Hooks;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.trace.PcapTrace;
import ernic.mesh.Gid;
import ernic.mesh.MeshConfig;
import ernic.counters.CounterRegistry;
import ernic.mesh.MeshNode;
import ernic.mesh.MeshSpec;
import ernic.mesh.NodeInfo;
import ernic.server.metrics.MetricsEndpoint;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.VfioUserDevice;
import ernic.vfiouser.server.VfioUserServer;
import ernic.vfiouser.transport.ListeningSocket;
import io.netty.channel.EventLoopGroup;

import ernic.ionic.layout.Mac;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashSet;
import java.util.Set;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One running server: the device thread, the device, its TAP and the vfio-user listener, wired
 * together once. {@code ernic serve} and the tests build servers the same way, through here.
 */
public final class ErnicServer implements AutoCloseable {
    public enum DeviceKind { ionic, sample }

    /**
     * What to serve and where.
     *
     * @param nicProfile built-in profile names and ini files, comma-separated (ionic)
     * @param inject     fault patterns (ionic)
     * @param tap        host TAP interface for the Ethernet side, or null (ionic)
     * @param mac        the station MAC (ionic), or null for one derived from the socket path
     * @param statsFile  where to write the JSON stats snapshot about once a second, or null
     * @param backend    what stands behind the RDMA side, a {@link Backends} form ({@code loopback}, {@code none},
     *                   {@code tcp:manager:listen:PORT}, {@code tcp:worker:HOST:PORT}, {@code nvmeof[:...]},
     *                   {@code s3[:...]}), or null for loopback
     * @param guestGids  the guest's GIDs this server advertises in the mesh (IP literals, comma-separated; the
     *                   link-local GID of the station MAC is always added), or null
     * @param p4         the P4 engine's options (ionic), or null when the engine is off
     * @param roce       {@code --roce}: RoCEv2 on the TAP (ionic; needs a TAP)
     */
    public record Settings(DeviceKind device, VfioUserServer.Options vfioUser, String nicProfile, List<String> inject,
                           String tap, String mac, String statsFile, String backend, String guestGids, P4Options p4,
                           boolean roce) {
        public static Settings ionic(String socket) {
            return new Settings(DeviceKind.ionic, VfioUserServer.Options.defaults(socket), ProfileLoader.DEFAULT,
                    List.of(), null, null, null, null, null, null, false);
        }

        /** {@code --roce}: RoCEv2 on the TAP for destinations no one here owns (docs/roce.md). */
        public Settings withRoce(boolean on) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, mac, statsFile, backend, guestGids, p4, on);
        }

        public Settings withTap(String name) {
            return new Settings(device, vfioUser, nicProfile, inject, name, mac, statsFile, backend, guestGids, p4, roce);
        }

        /** {@code --mac}: the station MAC, xx:xx:xx:xx:xx:xx. */
        public Settings withMac(String station) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, station, statsFile, backend, guestGids, p4, roce);
        }

        public Settings withInject(List<String> specs) {
            return new Settings(device, vfioUser, nicProfile, List.copyOf(specs), tap, mac, statsFile, backend,
                    guestGids, p4, roce);
        }

        public Settings withNicProfile(String spec) {
            return new Settings(device, vfioUser, spec, inject, tap, mac, statsFile, backend, guestGids, p4, roce);
        }

        public Settings withStatsFile(String path) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, mac, path, backend, guestGids, p4, roce);
        }

        /** {@code --backend}: a {@link Backends} form. */
        public Settings withBackend(String backendSpec) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, mac, statsFile, backendSpec, guestGids, p4, roce);
        }

        /** The P4 engine's options, or null for none. */
        public Settings withP4(P4Options options) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, mac, statsFile, backend, guestGids, options, roce);
        }

        public Settings withMesh(String backendSpec, String gids) {
            return new Settings(device, vfioUser, nicProfile, inject, tap, mac, statsFile, backendSpec, gids, p4, roce);
        }

        /** The GIDs to advertise: the IPv6 link-local address the guest derives from the MAC, then those given. */
        Set<Gid> advertisedGids() {
            Set<Gid> gids = new LinkedHashSet<>();
            long m = stationMac();
            byte[] ll = new byte[16];
            ll[0] = (byte) 0xfe;
            ll[1] = (byte) 0x80;
            ll[8] = (byte) ((m >>> 40) ^ 0x02); // EUI-64: universal/local bit flipped, ff:fe in the middle
            ll[9] = (byte) (m >>> 32);
            ll[10] = (byte) (m >>> 24);
            ll[11] = (byte) 0xff;
            ll[12] = (byte) 0xfe;
            ll[13] = (byte) (m >>> 16);
            ll[14] = (byte) (m >>> 8);
            ll[15] = (byte) m;
            gids.add(Gid.of(ll));
            gids.addAll(Gid.parseList(guestGids));
            return gids;
        }

        /**
         * The station MAC: the one given, or a locally administered unicast address derived from the
         * socket path, so servers on one host (one socket each) never share a MAC on a segment.
         */
        long stationMac() {
            if (mac != null) {
                return Mac.parse(mac);
            }
            long h = 0xcbf29ce484222325L; // FNV-1a over the absolute socket path
            for (byte b : Path.of(vfioUser.socketPath()).toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8)) {
                h = (h ^ (b & 0xff)) * 0x100000001b3L;
            }
            return 0x02_00_00_00_00_00L | (h & 0x00_00_ff_ff_ff_ffL) | 0x00_ee_00_00_00_00L;
        }
    }

    private final EventLoopGroup loop;
    private final VfioUserDevice device;
    private final TapPort tap;
    private final VfioUserServer server;
    private final List<AutoCloseable> owned;
    private StatsFile statsFile;
    private MeshNode mesh;
    private PcapTrace trace;
    private ScheduledFuture<?> traceFlush;
    /** Every counter of this server (vfio-user, the device, the mesh): what the stats file walks. Device loop only. */
    private final CounterRegistry registry = new CounterRegistry();

    private ErnicServer(EventLoopGroup loop, VfioUserDevice device, TapPort tap, VfioUserServer server,
                        List<AutoCloseable> owned) {
        this.loop = loop;
        this.device = device;
        this.tap = tap;
        this.server = server;
        this.owned = owned;
        server.registerCounters(registry);
        if (device instanceof IonicDevice ionic) {
            ionic.registerCounters(registry);
        }
        if (tap != null) {
            tap.registerCounters(registry);
        }
    }

    /** The server's counter registry (device loop only: take snapshots there). */
    public CounterRegistry counterRegistry() {
        return registry;
    }

    /** Builds and starts everything; a bad profile or fault spec is an IllegalArgumentException. */
    public static ErnicServer start(Settings s) throws IOException {
        Backend backend = Backends.parse(s.backend());
        // The mesh's secret is read (and a bad secret file refused) before anything starts.
        MeshConfig meshConfig = backend.mesh() == null ? null
                : backend.mesh().config(MeshConfig.defaults().withSendTimeoutFromEnvironment());
        if (backend.needsIonic() && s.device() != DeviceKind.ionic) {
            throw new IllegalArgumentException("--backend " + backend.form() + " needs --device ionic");
        }
        P4Hooks p4 = null;
        if (s.p4() != null) {
            if (s.device() != DeviceKind.ionic) {
                throw new IllegalArgumentException("--p4 needs --device ionic");
            }
            p4 = s.p4().load();
        }
        FaultPlan faults = FaultPlan.none();
        if (s.inject() != null && !s.inject().isEmpty()) {
            if (s.device() != DeviceKind.ionic) {
                throw new IllegalArgumentException("--inject needs --device ionic");
            }
            faults = FaultPlan.parse(s.inject()); // a bad value is one line, before anything is opened
        }
        if (s.statsFile() != null) {
            Path parent = Path.of(s.statsFile()).toAbsolutePath().getParent();
            if (parent == null || !Files.isDirectory(parent)) {
                throw new IllegalArgumentException("--stats-file " + s.statsFile() + ": directory " + parent
                        + " does not exist");
            }
        }
        if (s.roce() && s.device() != DeviceKind.ionic) {
            throw new IllegalArgumentException("--roce needs --device ionic");
        }
        Path dir = Path.of(s.vfioUser().socketPath()).toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        // The socket first: from here a client can connect (and waits in the backlog) while the device thread, the
        // device and its backend start, most of a start's CPU (docs/operations.md, "Start and footprint"). With a
        // TAP, once the TAP exists, as before: scripts that put the TAP in a bridge when the socket appears (the
        // lab, the guest harness) find it there.
        ListeningSocket socket = s.tap() == null ? ListeningSocket.open(s.vfioUser().socketPath(),
                s.vfioUser().socketMode()) : null;
        EventLoopGroup loop;
        try {
            loop = VfioUserServer.newDeviceLoop("ernic-device", s.vfioUser().busyPollMicros());
        } catch (RuntimeException e) {
            if (socket != null) {
                socket.close();
            }
            throw e;
        }
        List<AutoCloseable> owned = new ArrayList<>();
        try {
            TapPort tap = null;
            VfioUserDevice device;
            switch (s.device()) {
                case sample -> {
                    SampleDevice sample = new SampleDevice();
                    owned.add(sample);
                    device = sample;
                }
                case ionic -> {
                    long mac = s.stationMac();
                    IonicDevice ionic = new IonicDevice(ProfileLoader.load(s.nicProfile()), faults,
                            mac, String.format("ERNIC%012x", mac));
                    if (s.tap() != null) {
                        tap = TapPort.open(s.tap(), loop.next(), ionic::receive);
                        owned.add(tap);
                        ionic.lif().sink(tap::transmit);
                    }
                    if (s.roce()) {
                        if (tap == null) {
                            throw new IllegalArgumentException("--roce needs --tap: RoCEv2 goes out of the Ethernet port");
                        }
                        ionic.roce();
                    }
                    backend.prepare(ionic);
                    if (p4 != null) {
                        ionic.p4(p4);
                    }
                    device = ionic;
                }
                default -> throw new IllegalStateException();
            }
            MeshSpec spec = backend.mesh();
            Set<Gid> gids = spec == null ? Set.of() : s.advertisedGids();
            if (socket == null) {
                socket = ListeningSocket.open(s.vfioUser().socketPath(), s.vfioUser().socketMode());
            }
            VfioUserServer server = VfioUserServer.start(device, s.vfioUser(), loop, socket);
            ErnicServer es = new ErnicServer(loop, device, tap, server, owned);
            if (device instanceof IonicDevice ionic) {
                try {
                    owned.add(backend.start(new BackendContext(ionic, server.eventLoop(), es.registry)));
                } catch (IOException | RuntimeException e) {
                    server.close(); // a namespace file refused: no socket left behind
                    throw e;
                }
            }
            if (spec != null) {
                es.joinMesh(spec, meshConfig, gids);
            }
            if (s.statsFile() != null) {
                es.statsFile = new StatsFile(Path.of(s.statsFile()), server.eventLoop(), es::snapshot)
                        .start(STATS_PERIOD_MS);
            }
            return es;
        } catch (IOException | RuntimeException e) {
            if (socket != null) {
                socket.close(); // unless the server took it over, which has closed it then
            }
            closeOnLoop(loop, owned);
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * Starts this server's mesh node on the device thread and puts the device's RDMA side in it. A manager that
     * cannot listen on its port is an IOException; a worker keeps trying to reach its manager.
     */
    private void joinMesh(MeshSpec spec, MeshConfig config, Set<Gid> gids) throws IOException {
        IonicDevice ionic = (IonicDevice) device;
        MeshNode node = spec.create(server.eventLoop(), config);
        if (node.eventLoop() != server.eventLoop()) {
            throw new IllegalStateException("the mesh must run on the device thread");
        }
        server.eventLoop().submit(() -> ionic.rdma().attachMesh(node)).syncUninterruptibly();
        node.advertiseGids(gids);
        var started = node.start().awaitUninterruptibly();
        if (!started.isSuccess()) {
            node.close().awaitUninterruptibly();
            server.close();
            throw new IOException("--backend " + spec.role().name().toLowerCase() + ": " + started.cause().getMessage(),
                    started.cause());
        }
        mesh = node;
        server.eventLoop().submit(() -> node.registerCounters(registry)).syncUninterruptibly();
    }

    /**
     * Serves this server's registry in the Prometheus text format (docs/monitoring.md); each scrape takes its
     * snapshot on the device loop. The caller closes the endpoint before this server.
     */
    public MetricsEndpoint startMetrics(MetricsEndpoint.Address at) throws IOException {
        return MetricsEndpoint.start(at, server.eventLoop(), this::samples);
    }

    /**
     * One snapshot of the registry, the one thing the metrics endpoint, the stats file and the device's counter map
     * are derived from; with the gauge {@code vfio.client_connected} (1 while QEMU is connected). The device's values
     * are brought up to date first ({@code rdma.hw.refusals}). Device loop only.
     */
    List<CounterRegistry.Sample> samples() {
        List<CounterRegistry.Sample> samples = device instanceof IonicDevice ionic ? ionic.snapshot(registry)
                : registry.snapshot();
        samples.add(new CounterRegistry.Sample(CLIENT_CONNECTED, Map.of(), server.connection() != null ? 1 : 0,
                true));
        return samples;
    }

    private static final String CLIENT_CONNECTED = "vfio.client_connected";

    /**
     * {@code --trace-rdma}: the device writes each RDMA operation to {@code t} as RoCEv2 frames (see
     * docs/monitoring.md, "Seeing the traffic"), with its counters under {@code rdma.trace.}; the buffered
     * frames go to the file every second and at {@link #close}, which also closes {@code t}.
     */
    public void traceRdma(PcapTrace t) {
        if (!(device instanceof IonicDevice ionic)) {
            throw new IllegalArgumentException("--trace-rdma needs --device ionic");
        }
        server.eventLoop().submit(() -> {
            registry.register("rdma.trace.", t.counters());
            ionic.rdma().traceRdma(t);
        }).syncUninterruptibly();
        trace = t;
        traceFlush = server.eventLoop().scheduleAtFixedRate(t::flush, TRACE_FLUSH_MS, TRACE_FLUSH_MS,
                TimeUnit.MILLISECONDS);
    }

    /** How often --trace-rdma hands its buffered frames to the file. */
    static final long TRACE_FLUSH_MS = 1000;

    /** Stops the trace: the last frames flushed, the file closed, the final counts taken. */
    private void stopTrace() {
        IonicDevice ionic = (IonicDevice) device;
        traceFlush.cancel(false);
        server.eventLoop().submit(() -> {
            ionic.rdma().traceRdma(null);
            trace.flush();
        }).awaitUninterruptibly();
        trace.close();
        server.eventLoop().submit(trace::reclaim).awaitUninterruptibly();
    }

    /** The mesh node, or null when the server is not in a mesh. */
    public MeshNode mesh() {
        return mesh;
    }

    /** Registry names the stats file sorts into its keys. */
    private static final String VFIO_REFUSED = "vfio.refused", HW = "rdma.hw.", QP_HW = "rdma.hw.qp.";

    /** How often --stats-file is rewritten. */
    static final long STATS_PERIOD_MS = 1000;

    /** The stats file writer, or null. */
    public StatsFile statsFile() {
        return statsFile;
    }

    /** The stats file's content; device thread only: {@link #stats} of one {@link #samples()}. */
    Map<String, Object> snapshot() {
        return stats(samples());
    }

    /**
     * The stats file's content made from one registry snapshot ({@link #samples()}); device thread only.
     * timestamp; the vfio-user server's counters; refusals of the vfio-user layer and of the device by cause; the
     * device's counters ({@link IonicDevice#counters(List)} of the same snapshot), its RDMA hw_counters, and each
     * live QP's counters; the mesh, the P4 program, the trace and the S3 store. Only what is no counter (the
     * topology, the GID table, file names, the last session's counters) is read from elsewhere.
     */
    Map<String, Object> stats(List<CounterRegistry.Sample> samples) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("timestamp", Instant.now().toString());
        m.put("device_kind", device instanceof IonicDevice ? "ionic" : "sample");
        Map<String, Object> vu = new LinkedHashMap<>();
        vu.put("connections", 0L);
        vu.put("client_connected", false);
        Map<String, Long> vfioRefusals = new java.util.TreeMap<>(), deviceRefusals = new java.util.TreeMap<>();
        Map<String, Long> hw = new LinkedHashMap<>();
        Map<Integer, Map<String, Long>> qpCounters = new java.util.TreeMap<>();
        for (CounterRegistry.Sample c : samples) {
            String cause = c.labels().get(CounterRegistry.CAUSE);
            String qp = c.labels().get("qp");
            if (c.name().equals(CLIENT_CONNECTED)) {
                vu.put("client_connected", c.value() != 0);
            } else if (cause != null && c.name().equals(VFIO_REFUSED)) {
                vfioRefusals.put(cause, c.value());
            } else if (cause != null && c.name().equals(IonicDevice.REFUSED)) {
                deviceRefusals.put(cause, c.value());
            } else if (qp != null && c.name().startsWith(QP_HW)) {
                qpCounters.computeIfAbsent(Integer.valueOf(qp), k -> new LinkedHashMap<>())
                        .put(c.name().substring(QP_HW.length()), c.value());
            } else if (!c.labels().isEmpty()) {
                continue;
            } else if (c.name().startsWith("vfio.")) {
                vu.put(c.name().substring("vfio.".length()), c.value());
            } else if (c.name().startsWith(HW)) {
                hw.put(c.name().substring(HW.length()), c.value());
            }
        }
        m.put("vfio_user", vu);
        Map<String, Object> refusals = new LinkedHashMap<>();
        refusals.put("vfio_user", vfioRefusals);
        if (device instanceof IonicDevice) {
            refusals.put("device", deviceRefusals);
        }
        m.put("refusals", refusals);
        if (device instanceof IonicDevice ionic) {
            m.put("device", ionic.counters(samples));
            m.put("hw_counters", hw);
            Map<String, Object> qps = new LinkedHashMap<>();
            qpCounters.forEach((id, c) -> qps.put(Integer.toString(id), c));
            m.put("qps", qps);
            m.put("last_session", ionic.lastSessionCounters());
        }
        if (mesh != null) {
            Map<String, Object> mm = new LinkedHashMap<>();
            mm.put("role", mesh.role().name().toLowerCase());
            mm.put("node_id", mesh.nodeId());
            mm.put("port", mesh.localPort());
            List<Map<String, Object>> nodes = new ArrayList<>();
            for (NodeInfo n : mesh.topology()) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("id", n.id());
                e.put("alive", n.alive());
                e.put("address", n.address() == null ? null : n.address().getHostString() + ":" + n.address().getPort());
                nodes.add(e);
            }
            mm.put("nodes", nodes);
            Map<String, Object> owners = new LinkedHashMap<>();
            mesh.gidTable().forEach((gid, node) -> owners.put(gid.toString(), node));
            mm.put("gids", owners);
            mm.put("learned_gids", mesh.learnedGids().stream().map(Gid::toString).toList());
            Map<String, Object> counters = new LinkedHashMap<>();
            Map<String, Map<String, Object>> peers = new java.util.TreeMap<>(
                    java.util.Comparator.comparingInt(Integer::parseInt));
            for (CounterRegistry.Sample c : samples) {
                String peer = c.labels().get("peer");
                if (peer != null && c.name().startsWith("mesh.peer.")) {
                    String key = c.name().substring("mesh.peer.".length());
                    peers.computeIfAbsent(peer, k -> new LinkedHashMap<>()).put(key, c.value());
                } else if (c.name().startsWith("mesh.node.")) {
                    counters.put(c.name().substring("mesh.".length()), c.value());
                }
            }
            peers.forEach((id, c) -> c.forEach((k, v) -> counters.put("peer." + id + "." + k, v)));
            mm.put("counters", counters);
            mm.put("peers", peers);
            m.put("mesh", mm);
        }
        if (device instanceof IonicDevice ionic && ionic.p4() != null) {
            // The p4.* totals are in "device"; the per-table family is here, with the program it belongs to.
            Map<String, Object> p4 = new LinkedHashMap<>();
            p4.put("program", ionic.p4().engine().name());
            p4.put("guest_scope", ionic.p4().scope().name().toLowerCase());
            p4.put("wqe_program", ionic.p4().forWqes());
            Map<String, Object> tables = new LinkedHashMap<>();
            for (CounterRegistry.Sample c : samples) {
                String table = c.labels().get("table");
                if (table != null && c.name().startsWith("p4.table.")) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> t = (Map<String, Object>) tables.computeIfAbsent(table, k -> new LinkedHashMap<>());
                    t.put(c.name().substring("p4.table.".length()), c.value());
                }
            }
            p4.put("tables", tables);
            m.put("p4", p4);
        }
        if (trace != null) {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("file", trace.file().toString());
            for (CounterRegistry.Sample c : samples) {
                if (c.name().startsWith("rdma.trace.")) {
                    t.put(c.name().substring("rdma.trace.".length()), c.value());
                }
            }
            m.put("trace_rdma", t);
        }
        Map<String, Object> store = new LinkedHashMap<>();
        for (CounterRegistry.Sample c : samples) {
            if (c.name().startsWith("s3.")) {
                store.put(c.name().substring("s3.".length()), c.value());
            }
        }
        if (!store.isEmpty()) {
            m.put("s3", store); // the S3 store's counters, when it runs
        }
        return m;
    }

    public VfioUserServer vfioUser() {
        return server;
    }

    public VfioUserDevice device() {
        return device;
    }

    /** The TAP, or null. */
    public TapPort tap() {
        return tap;
    }

    private static void closeOnLoop(EventLoopGroup loop, List<AutoCloseable> owned) {
        loop.submit(() -> {
            for (AutoCloseable r : owned) {
                r.close();
            }
            return null;
        }).awaitUninterruptibly();
    }

    @Override
    public void close() {
        if (trace != null) {
            stopTrace(); // before the last stats file, which then has the final counts
        }
        if (statsFile != null) {
            statsFile.close(); // the last snapshot, before the device is detached and reset
        }
        if (mesh != null && device instanceof IonicDevice ionic) {
            loop.submit(() -> ionic.rdma().detachMesh()).awaitUninterruptibly();
            mesh.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        server.close();
        closeOnLoop(loop, owned);
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
