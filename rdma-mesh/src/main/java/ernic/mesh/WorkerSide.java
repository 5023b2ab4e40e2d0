package ernic.mesh;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A worker's part: it registers with the manager, follows the topology and the GID table the manager sends,
 * keeps direct connections to the other workers (the {@link WorkerDialer} makes them; this node accepts those of
 * lower ids) and takes DATA from them and from the manager.
 */
final class WorkerSide extends Side {
    private final WorkerDialer dialer;
    /** The topology as the manager last sent it, by node id, and the nodes it kept ({@link #kept}). */
    private final TreeMap<Integer, NodeInfo> topology = new TreeMap<>();
    /**
     * Nodes the manager's topology no longer lists but this node still has a direct connection to: a manager that
     * restarted does not know them until they register again. They stay alive here while that connection lasts,
     * so the QPs to them run on; when it closes they are gone.
     */
    private final Set<Integer> kept = new TreeSet<>();
    /** This node's claims other nodes own, as last logged. */
    private Set<Gid> lostClaims = Set.of();

    WorkerSide(SideParts parts, WorkerDialer dialer) {
        super(parts, MeshLink.Kind.DIRECT_IN);
        this.dialer = dialer;
    }

    @Override
    public long sendTimeoutNanos(long configured) {
        return configured;
    }

    @Override
    public void started() {
        MeshNode.log.info("mesh worker: listening on port {}, manager {}", self.boundPort(), dialer.manager());
        dialer.connectManager();
    }

    @Override
    public void linkActive(MeshLink link) {
        switch (link.kind()) {
            case UPLINK -> link.write(new Wire.Register(Wire.MAGIC, Wire.VERSION, self.id(), self.instanceNonce(),
                    self.boundPort()));
            case DIRECT_OUT -> link.write(new Wire.Hello(Wire.MAGIC, Wire.VERSION, self.id(), self.instanceNonce(),
                    link.expectedPeer()));
            default -> {
            }
        }
    }

    @Override
    public void handshake(MeshLink link, Wire.Frame frame) {
        switch (link.kind()) {
            case DIRECT_IN -> {
                if (frame instanceof Wire.Hello h) {
                    onHello(link, h);
                } else {
                    links.protocolError(link, "expected HELLO, got " + Wire.name(frame));
                }
            }
            case UPLINK -> {
                switch (frame) {
                    case Wire.RegisterAck a -> onRegisterAck(link, a);
                    case Wire.Refuse r -> links.refused(link, r);
                    default -> links.protocolError(link,
                            "expected REGISTER_ACK, got " + Wire.name(frame));
                }
            }
            case DIRECT_OUT -> {
                switch (frame) {
                    case Wire.HelloAck a -> onHelloAck(link, a);
                    case Wire.Refuse r -> links.refused(link, r);
                    default -> links.protocolError(link, "expected HELLO_ACK, got " + Wire.name(frame));
                }
            }
            case DOWNLINK -> links.protocolError(link, "a worker has no DOWNLINK");
        }
    }

    private void onRegisterAck(MeshLink link, Wire.RegisterAck a) {
        if (!links.speaksOurs(link, "registration answer", a)) {
            return;
        }
        int id = a.nodeId();
        int before = self.id();
        if (before >= 0 && id != before) {
            MeshNode.log.warn("mesh {}: registered again as node {}: the manager no longer knew this instance",
                    self.describe(), id);
            for (MeshLink d : new ArrayList<>(router.peerLinks())) {
                router.removePeer(d.peerId(), d);
                d.close();
            }
            gids.apply(before, Set.of());
        }
        self.setId(id);
        link.opened(0);
        dialer.uplinkOpened();
        peers.connected(0);
        MeshNode.log.info("mesh worker: registered as node {}", id);
        // What it owns the manager decides, and tells every node (this one too).
        link.write(new Wire.Gids(self.declaredGids(), self.learnedGids()));
        listeners.registered(id);
        listeners.writable(0);
    }

    private void onHello(MeshLink link, Wire.Hello h) {
        if (!links.speaksOurs(link, "handshake", h)) {
            return;
        }
        int me = self.id();
        int peer = h.nodeId();
        if (me < 0 || h.target() != me) {
            MeshNode.log.info("mesh {}: refused a direct connection from node {} meant for node {}", self.describe(),
                    peer, h.target());
            links.refuseAndClose(link, new Wire.Refuse(Wire.REFUSE_NOT_ME, "this is node " + me));
            return;
        }
        if (peer <= 0 || peer >= me) {
            links.protocolError(link, "HELLO from node " + peer + " to node " + me + " (the lower id connects)");
            return;
        }
        if (!config.directPeers().test(peer)) {
            MeshNode.log.info("mesh {}: refused a direct connection from node {}: disabled", self.describe(), peer);
            links.refuseAndClose(link,
                    new Wire.Refuse(Wire.REFUSE_DIRECT_DISABLED, "direct connections disabled"));
            return;
        }
        link.opened(peer);
        MeshLink old = router.putPeer(peer, link);
        if (old != null && old != link) {
            old.close();
        }
        peers.connected(peer);
        link.write(new Wire.HelloAck(me, self.instanceNonce()));
        MeshNode.log.info("mesh {}: direct connection from node {}", self.describe(), peer);
        listeners.writable(peer);
    }

    private void onHelloAck(MeshLink link, Wire.HelloAck a) {
        if (!links.speaksOurs(link, "handshake answer", a)) {
            return;
        }
        if (a.nodeId() != link.expectedPeer()) {
            links.protocolError(link, "HELLO_ACK from node " + a.nodeId() + ", expected node " + link.expectedPeer());
            return;
        }
        link.opened(a.nodeId());
        peers.connected(a.nodeId());
        MeshNode.log.info("mesh {}: direct connection to node {}", self.describe(), a.nodeId());
        listeners.writable(a.nodeId());
    }

    @Override
    public void control(MeshLink link, Wire.Frame frame) {
        if (link.kind() != MeshLink.Kind.UPLINK) {
            links.protocolError(link, Wire.name(frame) + " on a " + link.kind() + " connection");
            return;
        }
        switch (frame) {
            case Wire.Topology t -> onTopology(link, t);
            case Wire.GidUpdate u -> onGidUpdate(u);
            default -> links.protocolError(link, Wire.name(frame) + " from the manager");
        }
    }

    private void onTopology(MeshLink link, Wire.Topology t) {
        if (t.nodes().size() > config.maxNodes() * 4) {
            links.protocolError(link, "topology of " + t.nodes().size() + " nodes");
            return;
        }
        TreeMap<Integer, NodeInfo> next = new TreeMap<>();
        for (NodeInfo n : t.nodes()) {
            next.put(n.id(), n);
        }
        kept.retainAll(topology.keySet());
        for (NodeInfo n : topology.values()) {
            if (next.containsKey(n.id())) {
                kept.remove(n.id());
            } else if (n.alive() && router.hasPeer(n.id())) {
                next.put(n.id(), n);
                kept.add(n.id());
            }
        }
        Set<Integer> ids = new TreeSet<>(topology.keySet());
        ids.addAll(next.keySet());
        List<Integer> changed = new ArrayList<>();
        for (int id : ids) {
            if (isAlive(id) != (next.containsKey(id) && next.get(id).alive())) {
                changed.add(id);
            }
        }
        topology.clear();
        topology.putAll(next);
        dialer.maintainDirect(ticker.nanoTime(), topology);
        for (int id : changed) {
            if (id != self.id()) {
                listeners.nodeState(id, isAlive(id));
            }
        }
        listeners.topology(List.copyOf(topology.values()));
    }

    private void onGidUpdate(Wire.GidUpdate u) {
        counters.add(MeshCounter.GID_RECORDS_RECEIVED, u.records().size());
        for (Wire.GidRecord r : u.records()) {
            gids.apply(r.nodeId(), r.removed() ? Set.of() : r.gids());
        }
        reportLost();
    }

    /** Logs, when it changes, which of this node's claims the manager gave to other nodes (conflicts it lost). */
    private void reportLost() {
        Set<Gid> lost = new TreeSet<>();
        Set<Gid> owned = gids.of(self.id());
        for (Gid g : self.declaredGids()) {
            if (!owned.contains(g) && gids.owner(g).isPresent()) {
                lost.add(g);
            }
        }
        for (Gid g : self.learnedGids()) {
            if (!owned.contains(g) && gids.owner(g).isPresent()) {
                lost.add(g);
            }
        }
        if (!lost.equals(lostClaims)) {
            lostClaims = lost;
            for (Gid g : lost) {
                MeshNode.log.warn("mesh {}: GID {} is claimed by this node but node {} owns it (it claimed it first)",
                        self.describe(), g, gids.owner(g).getAsInt());
            }
        }
    }

    @Override
    public void data(MeshLink link, int src, int dst, ByteBuf frame, int start) {
        int me = self.id();
        if (link.kind() == MeshLink.Kind.UPLINK) {
            if (dst != me) {
                links.protocolError(link, "DATA for node " + dst + " delivered to node " + me);
            } else {
                links.deliver(src, frame, src != 0);
            }
        } else if (src != link.peerId() || dst != me) {
            links.protocolError(link, "DATA " + src + "->" + dst + " on the direct connection " + link.peerId()
                    + "<->" + me);
        } else {
            links.deliver(src, frame, false);
        }
    }

    @Override
    public void linkWritable(MeshLink link) {
        if (link.kind() != MeshLink.Kind.UPLINK) {
            listeners.writable(link.peerId());
            return;
        }
        // The manager's connection also carries every node without a direct one.
        listeners.writable(0);
        for (NodeInfo n : topology.values()) {
            if (n.id() != 0 && n.id() != self.id() && n.alive() && !router.hasPeer(n.id())) {
                listeners.writable(n.id());
            }
        }
    }

    @Override
    public void linkClosed(MeshLink link, long now) {
        if (link.kind() == MeshLink.Kind.UPLINK) {
            if (router.uplink() == link) {
                router.setUplink(null);
                dialer.uplinkLost(now);
                if (link.isOpen()) {
                    warnings.warn("uplink-lost", "mesh {}: connection to the manager lost; connecting again",
                            self.describe());
                }
            }
            return;
        }
        int peer = link.peerId();
        if (peer >= 0 && router.removePeer(peer, link)) {
            if (link.kind() == MeshLink.Kind.DIRECT_OUT) {
                dialer.directLost(peer, now);
            }
            if (link.isOpen()) {
                MeshNode.log.info("mesh {}: direct connection to node {} closed", self.describe(), peer);
                listeners.writable(peer);
            }
            if (kept.remove(peer)) { // the manager does not know it: with its connection it is gone
                topology.remove(peer);
                listeners.nodeState(peer, false);
                listeners.topology(List.copyOf(topology.values()));
            }
        }
    }

    @Override
    public void advertised(Set<Gid> declared, Set<Gid> learned) {
        MeshLink up = router.connectionTo(Router.MANAGER);
        if (up != null && up.isOpen()) { // else the registration sends them
            up.write(new Wire.Gids(declared, learned));
        }
    }

    @Override
    public void tick(long now) {
        dialer.tick(now, topology);
    }

    @Override
    public boolean isAlive(int id) {
        NodeInfo n = topology.get(id);
        return n != null && n.alive();
    }

    @Override
    public List<NodeInfo> topology() {
        return List.copyOf(topology.values());
    }
}
