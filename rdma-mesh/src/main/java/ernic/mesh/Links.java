package ernic.mesh;

import ernic.counters.OncePerCause;
import ernic.counters.Counters;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Every connection of a node and what happens on them, alike for both roles: frames in (decoded, checked, handed
 * to the node's {@link Side}), connections that come, drain or go, protocol errors, refusals, and the periodic
 * health check (heartbeats, silence, send time-outs). On the node's event loop.
 */
final class Links {
    private final MeshNode node;
    private final Set<MeshLink> all = new LinkedHashSet<>();
    private final Counters<MeshCounter> counters;

    Links(MeshNode node, Counters<MeshCounter> counters) {
        this.node = node;
        this.counters = counters;
    }

    void add(MeshLink l) {
        all.add(l);
    }

    /** Every connection now (a copy). */
    List<MeshLink> all() {
        return new ArrayList<>(all);
    }

    /** Closes every connection; returns their channels. */
    List<Channel> closeAll() {
        List<Channel> closing = new ArrayList<>();
        for (MeshLink l : all()) {
            if (l.channel() != null) {
                closing.add(l.channel());
            }
            l.close();
        }
        return closing;
    }

    String describe() {
        return node.describe();
    }

    OncePerCause warnings() {
        return node.warnings();
    }

    /** Whether a new connection must authenticate before its link speaks. */
    boolean authRequired() {
        return node.auth().required();
    }

    // ---------------------------------------------------------------- events of one link

    void linkActive(MeshLink link) {
        node.side().linkActive(link);
    }

    void linkWritable(MeshLink link) {
        if (link.isOpen()) {
            node.side().linkWritable(link);
        }
    }

    void linkClosed(MeshLink link) {
        all.remove(link);
        if (!node.isClosed()) {
            node.side().linkClosed(link, node.ticker().nanoTime());
        }
    }

    void protocolError(MeshLink link, String reason) {
        counters.inc(MeshCounter.PROTOCOL_ERRORS);
        node.warnings().warn("protocol-violation", "mesh {}: protocol violation by {} ({}): {}: closing the"
                + " connection", describe(), peerName(link), link.remote(), reason);
        link.close();
    }

    /** A link dropped a message for {@code dst} that its sender took back. */
    void takenBack(int dst) {
        node.peers().of(dst).inc(PeerCounter.TAKEN_BACK);
    }

    /** One frame as received (type and body): decoded, checked, and handed to whoever handles it. */
    void onFrame(MeshLink link, ByteBuf f) {
        int start = f.readerIndex();
        if (link.isOpen() && Wire.isData(f)) {
            // The data path: its fields go on, with no record.
            long route;
            try {
                f.skipBytes(1);
                route = Wire.Data.route(f);
            } catch (Wire.BadFrame e) {
                protocolError(link, e.getMessage());
                return;
            }
            node.side().data(link, Wire.Data.source(route), Wire.Data.destination(route), f, start);
            return;
        }
        Wire.Frame frame;
        try {
            frame = Wire.decode(f);
        } catch (Wire.BadFrame e) {
            protocolError(link, e.getMessage());
            return;
        }
        Side side = node.side();
        if (!link.isOpen()) {
            side.handshake(link, frame);
            return;
        }
        switch (frame) {
            case Wire.Data d -> side.data(link, d.source(), d.destination(), f, start); // taken above
            case Wire.Heartbeat h -> {
                if (h == Wire.Heartbeat.REQUEST) {
                    counters.inc(MeshCounter.HEARTBEATS_RECEIVED);
                    link.answer();
                }
            }
            case Wire.Refuse r -> refused(link, r);
            case Wire.Topology t -> side.control(link, t);
            case Wire.Gids g -> side.control(link, g);
            case Wire.GidUpdate g -> side.control(link, g);
            case Wire.Handshake h -> protocolError(link, "unexpected " + Wire.name(h) + " on an open " + link.kind());
        }
    }

    /** Hands a received payload to the listeners; {@code frame} is read up to it. */
    void deliver(int src, ByteBuf frame, boolean relayed) {
        int len = frame.readableBytes();
        Counters<PeerCounter> pc = node.peers().of(src);
        pc.add(PeerCounter.BYTES_RECEIVED, len);
        pc.inc(PeerCounter.MESSAGES_RECEIVED);
        if (relayed) {
            pc.inc(PeerCounter.RELAYED_MESSAGES);
            pc.add(PeerCounter.RELAYED_BYTES, len);
        }
        node.listeners().message(src, frame.readRetainedSlice(len));
    }

    /** True when {@code h} speaks this protocol; otherwise refuses it, counted, and closes. */
    boolean speaksOurs(MeshLink link, String what, Wire.Handshake h) {
        if (h.speaksOurs()) {
            return true;
        }
        counters.inc(MeshCounter.REFUSED_HANDSHAKES);
        node.warnings().warn("refused-handshake",
                "mesh {}: refused {} from {}: magic 0x{} version {}, this node speaks magic 0x{} version {}",
                describe(), what, link.remote(), Integer.toHexString(h.magic()), h.version(),
                Integer.toHexString(Wire.MAGIC), Wire.VERSION);
        refuseAndClose(link, new Wire.Refuse(Wire.REFUSE_VERSION,
                "magic/version mismatch: expected 0x" + Integer.toHexString(Wire.MAGIC) + " v" + Wire.VERSION));
        return false;
    }

    void refuseAndClose(MeshLink link, Wire.Refuse r) {
        link.refuseAndClose(r.encode(node.alloc()));
    }

    /** A REFUSE from the peer: the connection it came on is finished. */
    void refused(MeshLink link, Wire.Refuse r) {
        if (link.kind() == MeshLink.Kind.UPLINK) {
            counters.inc(MeshCounter.REGISTRATIONS_REFUSED);
            node.warnings().warn("registration-refused",
                    "mesh {}: registration refused by the manager at {} (reason {}): {}", describe(),
                    link.remote(), r.reason(), r.text());
        } else {
            node.warnings().warn("direct-refused", "mesh {}: direct connection refused by {} (reason {}): {}",
                    describe(), link.remote(), r.reason(), r.text());
        }
        link.close();
    }

    String peerName(MeshLink l) {
        if (l.peerId() < 0) {
            return "an unregistered peer";
        }
        return l.peerId() == 0 ? "the manager" : "node " + l.peerId();
    }

    // ---------------------------------------------------------------- health

    /** Checks every connection at {@code now} (see {@link MeshLink#health}) and closes those that must go. */
    void health(long now, long intervalNanos, long sendTimeoutNanos) {
        for (MeshLink l : all()) {
            switch (l.health(now, intervalNanos, sendTimeoutNanos)) {
                case FINE -> {
                }
                case HEARTBEAT_SENT -> counters.inc(MeshCounter.HEARTBEATS_SENT);
                case SEND_TIMED_OUT -> {
                    counters.inc(MeshCounter.SEND_TIMEOUTS);
                    node.warnings().warn("send-timeout", "mesh {}: nothing sent to {} ({}) for {} ms with {} bytes"
                            + " queued: shutting the connection down", describe(), peerName(l), l.remote(),
                            TimeUnit.NANOSECONDS.toMillis(sendTimeoutNanos), l.queuedBytes());
                    l.close();
                }
                case AUTH_TIMED_OUT -> {
                    node.auth().failed(MeshAuth.Failure.TIMEOUT, l.channel().remoteAddress(),
                            TimeUnit.NANOSECONDS.toMillis(3 * intervalNanos) + " ms");
                    l.close();
                }
                case HANDSHAKE_TIMED_OUT -> {
                    node.warnings().warn("handshake-timeout",
                            "mesh {}: {} from {} did not complete its handshake in three intervals: closing",
                            describe(), l.kind(), l.remote());
                    l.close();
                }
                case SILENT -> {
                    counters.inc(MeshCounter.SILENT_CONNECTIONS_CLOSED);
                    node.warnings().warn("silent-peer", "mesh {}: heard nothing from {} for {} ms: closing the"
                            + " connection", describe(), peerName(l), TimeUnit.NANOSECONDS.toMillis(l.quietNanos()));
                    l.close();
                }
            }
        }
    }
}
