package ernic.mesh;

import ernic.counters.Counters;
import io.netty.buffer.ByteBuf;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The manager's part: it takes registrations into its {@link ManagerTable}, broadcasts what changed, decides who
 * owns which GID from every node's claims ({@link GidClaims}) and relays DATA between workers that have no direct connection. Its connections are the workers'
 * own ({@link MeshLink.Kind#DOWNLINK}), kept in the {@link Router} by worker id.
 */
final class ManagerSide implements Side {
    private final MeshNode node;
    private ManagerTable table;
    private boolean broadcastScheduled;

    ManagerSide(MeshNode node) {
        this.node = node;
    }

    @Override
    public MeshLink.Kind accepts() {
        return MeshLink.Kind.DOWNLINK;
    }

    @Override
    public long sendTimeoutNanos(long configured) {
        // Half the workers': a relay target that stopped reading is dropped before its senders drop the manager.
        return configured / 2;
    }

    @Override
    public void started() {
        node.setId(0);
        table = new ManagerTable(node.config().maxNodes(), node.instanceNonce(), node.ticker(), node.gids(),
                new GidClaims(node.counterSet()));
        table.claim(0, node.ownGids(), node.learned().set());
        MeshNode.log.info("mesh manager: listening on port {}", node.boundPort());
    }

    @Override
    public void linkActive(MeshLink link) {
        // The worker speaks first.
    }

    @Override
    public void handshake(MeshLink link, Wire.Frame frame) {
        if (!(frame instanceof Wire.Register r)) {
            node.links().protocolError(link, "expected REGISTER, got " + Wire.name(frame));
            return;
        }
        if (!node.links().speaksOurs(link, "registration", r)) {
            return;
        }
        InetSocketAddress remote = (InetSocketAddress) link.remote();
        InetSocketAddress address = new InetSocketAddress(remote.getAddress(), r.port());
        switch (table.register(r.nonce(), address, r.requestedId())) {
            case ManagerTable.Refused refused -> {
                node.counterSet().inc(MeshCounter.REGISTRATIONS_REFUSED);
                node.warnings().warn("table-full", "mesh manager: refused registration from {}: {}", address,
                        refused.refusal().text());
                node.links().refuseAndClose(link, refused.refusal());
            }
            case ManagerTable.Admitted a -> admit(link, r, a);
        }
    }

    private void admit(MeshLink link, Wire.Register r, ManagerTable.Admitted a) {
        if (a.evicted() >= 0) {
            node.counterSet().inc(MeshCounter.EVICTIONS);
            node.peers().forget(a.evicted());
        }
        if (r.requestedId() > 0 && r.requestedId() != a.id()) {
            MeshNode.log.info("mesh manager: an instance this manager does not know asked for id {}, given out"
                    + " already; it gets id {}", r.requestedId(), a.id());
        }
        link.opened(a.id());
        MeshLink old = node.router().putPeer(a.id(), link);
        if (old != null && old != link) {
            old.close(); // the same instance on a new connection: the old one is finished
        }
        node.peers().connected(a.id());
        MeshNode.log.info("mesh manager: node {} registered from {}:{}", a.id(),
                ((InetSocketAddress) link.remote()).getAddress().getHostAddress(), r.port());
        for (Wire.Frame f : a.welcome()) {
            link.write(f);
            if (f instanceof Wire.GidUpdate u) {
                node.counterSet().add(MeshCounter.GID_RECORDS_SENT, u.records().size());
            }
        }
        if (a.revived()) {
            node.listeners().nodeState(a.id(), true);
        }
        scheduleBroadcast();
    }

    @Override
    public void control(MeshLink link, Wire.Frame frame) {
        if (!(frame instanceof Wire.Gids g)) {
            node.links().protocolError(link, Wire.name(frame) + " on a " + link.kind() + " connection");
            return;
        }
        if (table.claim(link.peerId(), g.declared(), g.learned())) {
            scheduleBroadcast();
        }
    }

    @Override
    public void data(MeshLink link, int src, int dst, ByteBuf frame, int start) {
        if (src != link.peerId()) {
            node.links().protocolError(link, "DATA claims source " + src);
        } else if (dst == 0) {
            node.links().deliver(src, frame, false);
        } else {
            relay(link, src, dst, frame, start);
        }
    }

    private void relay(MeshLink from, int src, int dst, ByteBuf f, int start) {
        MeshLink to = node.router().route(dst);
        if (to == null) {
            node.counterSet().inc(MeshCounter.RELAY_DROPPED);
            MeshNode.log.debug("mesh manager: dropped a message from node {} to node {}: no connection", src, dst);
            return;
        }
        int len = f.readableBytes();
        to.write(Wire.reframe(node.alloc(), f.retainedSlice(start, f.writerIndex() - start)));
        Counters<PeerCounter> pc = node.peers().of(dst);
        pc.inc(PeerCounter.RELAYED_MESSAGES);
        pc.add(PeerCounter.RELAYED_BYTES, len);
        if (!to.isWritable()) {
            // Hold the sender back until the destination drains; the destination's send time-out (half the
            // workers') ends the wait if it has stopped reading.
            to.holdBack(from);
        }
    }

    @Override
    public void linkWritable(MeshLink link) {
        node.listeners().writable(link.peerId());
    }

    @Override
    public void linkClosed(MeshLink link, long now) {
        if (link.isOpen() && node.router().removePeer(link.peerId(), link) && table.markDead(link.peerId())) {
            MeshNode.log.warn("mesh manager: node {} is dead (its connection closed)", link.peerId());
            node.listeners().nodeState(link.peerId(), false);
            scheduleBroadcast();
        }
    }

    @Override
    public void advertised(Set<Gid> declared, Set<Gid> learned) {
        if (table.claim(0, declared, learned)) {
            scheduleBroadcast();
        }
    }

    @Override
    public void tick(long now) {
    }

    @Override
    public boolean isAlive(int id) {
        return table != null && table.isAlive(id);
    }

    @Override
    public List<NodeInfo> topology() {
        return table == null ? List.of() : table.topology();
    }

    /** Changes made in one task of the loop go out together, after it. */
    private void scheduleBroadcast() {
        if (!broadcastScheduled && !node.isClosed()) {
            broadcastScheduled = true;
            node.eventLoop().execute(this::broadcast);
        }
    }

    private void broadcast() {
        broadcastScheduled = false;
        if (node.isClosed()) {
            return;
        }
        List<Wire.Frame> frames = table.broadcast();
        List<ByteBuf> encoded = new ArrayList<>(frames.size());
        for (Wire.Frame f : frames) {
            encoded.add(f.encode(node.alloc()));
        }
        for (MeshLink l : node.router().peerLinks()) {
            if (!l.isOpen()) {
                continue;
            }
            for (int i = 0; i < frames.size(); i++) {
                l.write(encoded.get(i).retainedDuplicate());
                if (frames.get(i) instanceof Wire.GidUpdate u) {
                    node.counterSet().add(MeshCounter.GID_RECORDS_SENT, u.records().size());
                }
            }
        }
        for (ByteBuf b : encoded) {
            b.release();
        }
        for (Wire.Frame f : frames) {
            if (f instanceof Wire.Topology t) {
                node.listeners().topology(t.nodes());
            }
        }
    }
}
