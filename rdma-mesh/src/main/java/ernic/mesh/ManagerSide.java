package ernic.mesh;

import ernic.counters.Counters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * The manager's part: it takes registrations into its {@link ManagerTable}, broadcasts what changed, decides who
 * owns which GID from every node's claims ({@link GidClaims}) and relays DATA between workers that have no direct connection. Its connections are the workers'
 * own ({@link MeshLink.Kind#DOWNLINK}), kept in the {@link Router} by worker id.
 */
final class ManagerSide extends Side {
    private final ByteBufAllocator alloc;
    /** Where a broadcast is scheduled: the node's loop. */
    private final Executor loop;
    private ManagerTable table;
    private boolean broadcastScheduled;

    ManagerSide(SideParts parts, ByteBufAllocator alloc, Executor loop) {
        super(parts, MeshLink.Kind.DOWNLINK);
        this.alloc = alloc;
        this.loop = loop;
    }

    @Override
    public long sendTimeoutNanos(long configured) {
        // Half the workers': a relay target that stopped reading is dropped before its senders drop the manager.
        return configured / 2;
    }

    @Override
    public void started() {
        self.setId(0);
        table = new ManagerTable(config.maxNodes(), self.instanceNonce(), ticker, gids,
                new GidClaims(counters));
        table.claim(0, self.declaredGids(), self.learnedGids());
        MeshNode.log.info("mesh manager: listening on port {}", self.boundPort());
    }

    @Override
    public void linkActive(MeshLink link) {
        // The worker speaks first.
    }

    @Override
    public void handshake(MeshLink link, Wire.Frame frame) {
        if (!(frame instanceof Wire.Register r)) {
            links.protocolError(link, "expected REGISTER, got " + Wire.name(frame));
            return;
        }
        if (!links.speaksOurs(link, "registration", r)) {
            return;
        }
        InetSocketAddress remote = (InetSocketAddress) link.remote();
        InetSocketAddress address = new InetSocketAddress(remote.getAddress(), r.port());
        switch (table.register(r.nonce(), address, r.requestedId())) {
            case ManagerTable.Refused refused -> {
                counters.inc(MeshCounter.REGISTRATIONS_REFUSED);
                warnings.warn("table-full", "mesh manager: refused registration from {}: {}", address,
                        refused.refusal().text());
                links.refuseAndClose(link, refused.refusal());
            }
            case ManagerTable.Admitted a -> admit(link, r, a);
        }
    }

    private void admit(MeshLink link, Wire.Register r, ManagerTable.Admitted a) {
        if (a.evicted() >= 0) {
            counters.inc(MeshCounter.EVICTIONS);
            peers.forget(a.evicted());
        }
        if (r.requestedId() > 0 && r.requestedId() != a.id()) {
            MeshNode.log.info("mesh manager: an instance this manager does not know asked for id {}, given out"
                    + " already; it gets id {}", r.requestedId(), a.id());
        }
        link.opened(a.id());
        MeshLink old = router.putPeer(a.id(), link);
        if (old != null && old != link) {
            old.close(); // the same instance on a new connection: the old one is finished
        }
        peers.connected(a.id());
        MeshNode.log.info("mesh manager: node {} registered from {}:{}", a.id(),
                ((InetSocketAddress) link.remote()).getAddress().getHostAddress(), r.port());
        for (Wire.Frame f : a.welcome()) {
            link.write(f);
            if (f instanceof Wire.GidUpdate u) {
                counters.add(MeshCounter.GID_RECORDS_SENT, u.records().size());
            }
        }
        if (a.revived()) {
            listeners.nodeState(a.id(), true);
        }
        scheduleBroadcast();
    }

    @Override
    public void control(MeshLink link, Wire.Frame frame) {
        if (!(frame instanceof Wire.Gids g)) {
            links.protocolError(link, Wire.name(frame) + " on a " + link.kind() + " connection");
            return;
        }
        if (table.claim(link.peerId(), g.declared(), g.learned())) {
            scheduleBroadcast();
        }
    }

    @Override
    public void data(MeshLink link, int src, int dst, ByteBuf frame, int start) {
        if (src != link.peerId()) {
            links.protocolError(link, "DATA claims source " + src);
        } else if (dst == 0) {
            links.deliver(src, frame, false);
        } else {
            relay(link, src, dst, frame, start);
        }
    }

    private void relay(MeshLink from, int src, int dst, ByteBuf f, int start) {
        MeshLink to = router.route(dst);
        if (to == null) {
            counters.inc(MeshCounter.RELAY_DROPPED);
            MeshNode.log.debug("mesh manager: dropped a message from node {} to node {}: no connection", src, dst);
            return;
        }
        int len = f.readableBytes();
        to.write(Wire.reframe(alloc, f.retainedSlice(start, f.writerIndex() - start)));
        Counters<PeerCounter> pc = peers.of(dst);
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
        listeners.writable(link.peerId());
    }

    @Override
    public void linkClosed(MeshLink link, long now) {
        if (link.isOpen() && router.removePeer(link.peerId(), link) && table.markDead(link.peerId())) {
            MeshNode.log.warn("mesh manager: node {} is dead (its connection closed)", link.peerId());
            listeners.nodeState(link.peerId(), false);
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
        if (!broadcastScheduled && !self.isClosed()) {
            broadcastScheduled = true;
            loop.execute(this::broadcast);
        }
    }

    private void broadcast() {
        broadcastScheduled = false;
        if (self.isClosed()) {
            return;
        }
        List<Wire.Frame> frames = table.broadcast();
        List<ByteBuf> encoded = new ArrayList<>(frames.size());
        for (Wire.Frame f : frames) {
            encoded.add(f.encode(alloc));
        }
        for (MeshLink l : router.peerLinks()) {
            if (!l.isOpen()) {
                continue;
            }
            for (int i = 0; i < frames.size(); i++) {
                l.write(encoded.get(i).retainedDuplicate());
                if (frames.get(i) instanceof Wire.GidUpdate u) {
                    counters.add(MeshCounter.GID_RECORDS_SENT, u.records().size());
                }
            }
        }
        for (ByteBuf b : encoded) {
            b.release();
        }
        for (Wire.Frame f : frames) {
            if (f instanceof Wire.Topology t) {
                listeners.topology(t.nodes());
            }
        }
    }
}
