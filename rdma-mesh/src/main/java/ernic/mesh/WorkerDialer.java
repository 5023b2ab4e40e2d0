package ernic.mesh;

import ernic.counters.OncePerCause;

import io.netty.channel.ChannelFuture;
import io.netty.util.concurrent.Ticker;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * A worker's outgoing connections: to the manager (resolved off the loop, every address tried in turn, again
 * after the reconnect delay while there is none) and directly to every alive worker with a higher id (again after
 * the reconnect delay when one fails or drops). The connections it makes are kept in the {@link Router}.
 */
final class WorkerDialer {
    /** How the dialer makes a connection: a new link of a kind for a peer (-1: the manager), and its socket. */
    interface Dial {
        MeshLink newLink(MeshLink.Kind kind, int expectedPeer);

        ChannelFuture connect(InetSocketAddress target, MeshLink link);
    }

    private final ThisNode self;
    private final Router router;
    private final MeshConfig config;
    private final Ticker ticker;
    private final OncePerCause warnings;
    private final Dial dial;
    /** Runs a task on the node's loop (at once when already there): where a resolution off the loop comes back. */
    private final Executor onLoop;
    private final MeshAddress manager;
    private boolean uplinkConnecting;
    private long nextUplinkAttempt;
    private final Set<Integer> directConnecting = new HashSet<>();
    private final Map<Integer, Long> nextDirectAttempt = new HashMap<>();

    WorkerDialer(SideParts parts, Dial dial, Executor onLoop, MeshAddress manager) {
        this.self = parts.self();
        this.router = parts.router();
        this.config = parts.config();
        this.ticker = parts.ticker();
        this.warnings = parts.warnings();
        this.dial = dial;
        this.onLoop = onLoop;
        this.manager = manager;
    }

    MeshAddress manager() {
        return manager;
    }

    /** Dials what is missing and due at {@code now}: the manager, then the direct connections. */
    void tick(long now, Map<Integer, NodeInfo> topology) {
        if (router.uplink() == null && !uplinkConnecting && now - nextUplinkAttempt >= 0) {
            connectManager();
        }
        maintainDirect(now, topology);
    }

    /** The manager's connection is up: nothing to dial until it is lost. */
    void uplinkOpened() {
        uplinkConnecting = false;
    }

    /** The manager's connection was lost at {@code now}: dial again after the reconnect delay. */
    void uplinkLost(long now) {
        uplinkConnecting = false;
        nextUplinkAttempt = now + config.reconnectDelay().toNanos();
    }

    /** A direct connection this node dialed closed at {@code now}: dial again after the reconnect delay. */
    void directLost(int peer, long now) {
        nextDirectAttempt.put(peer, now + config.reconnectDelay().toNanos());
    }

    /** Closes direct connections to nodes no longer alive and dials the alive ones above this node's id. */
    void maintainDirect(long now, Map<Integer, NodeInfo> topology) {
        int me = self.id();
        if (me <= 0 || self.isClosed()) {
            return;
        }
        for (MeshLink d : new ArrayList<>(router.peerLinks())) {
            NodeInfo n = topology.get(d.peerId());
            if (n == null || !n.alive()) {
                router.removePeer(d.peerId(), d);
                d.close();
            }
        }
        for (NodeInfo n : topology.values()) {
            int id = n.id();
            if (id <= me || !n.alive() || n.address() == null || !config.directPeers().test(id)) {
                continue;
            }
            if (router.hasPeer(id) || directConnecting.contains(id)) {
                continue;
            }
            Long next = nextDirectAttempt.get(id);
            if (next != null && now - next < 0) {
                continue;
            }
            connectDirect(n, topology);
        }
    }

    private void connectDirect(NodeInfo n, Map<Integer, NodeInfo> topology) {
        int id = n.id();
        directConnecting.add(id);
        connectAny(List.of(n.address()), 0, MeshLink.Kind.DIRECT_OUT, id, link -> {
            directConnecting.remove(id);
            NodeInfo now = topology.get(id);
            if (self.isClosed() || now == null || !now.alive() || router.hasPeer(id)) {
                link.close();
                return;
            }
            router.putPeer(id, link);
        }, () -> {
            directConnecting.remove(id);
            directLost(id, ticker.nanoTime());
            MeshNode.log.debug("mesh {}: cannot connect to node {} at {}", self.describe(), id, n.address());
        });
    }

    /** Dials the manager (once the node listens: registration names its port). */
    void connectManager() {
        uplinkConnecting = true;
        resolve(manager, addresses -> {
            if (self.isClosed()) {
                return;
            }
            if (addresses.isEmpty()) {
                managerUnreachable();
                return;
            }
            connectAny(addresses, 0, MeshLink.Kind.UPLINK, 0, link -> {
                if (self.isClosed()) {
                    link.close();
                    return;
                }
                router.setUplink(link);
            }, this::managerUnreachable);
        });
    }

    private void managerUnreachable() {
        uplinkLost(ticker.nanoTime());
        MeshNode.log.debug("mesh {}: cannot reach the manager at {}", self.describe(), manager);
    }

    /** Resolves off the loop (unless it is a literal) and calls back on the loop; empty when it fails. */
    private void resolve(MeshAddress a, Consumer<List<InetSocketAddress>> then) {
        if (config.resolver() == null && a.isLiteral()) {
            then.accept(lookup(a));
            return;
        }
        CompletableFuture.supplyAsync(() -> lookup(a), config.blockingExecutor())
                .whenComplete((list, err) -> onLoop.execute(() -> then.accept(err == null ? list : List.of())));
    }

    private List<InetSocketAddress> lookup(MeshAddress a) {
        try {
            List<InetAddress> ips = config.resolver() != null
                    ? config.resolver().apply(a.host())
                    : Arrays.asList(InetAddress.getAllByName(a.host()));
            List<InetSocketAddress> out = new ArrayList<>();
            for (InetAddress ip : ips) {
                out.add(new InetSocketAddress(ip, a.port()));
            }
            return out;
        } catch (UnknownHostException | RuntimeException e) {
            warnings.warn("resolve", "mesh {}: cannot resolve {}: {}", self.describe(), a.host(), e.toString());
            return List.of();
        }
    }

    /** Tries each address in turn; {@code connected} gets the link of the first that answers. */
    private void connectAny(List<InetSocketAddress> addresses, int i, MeshLink.Kind kind, int peer,
                            Consumer<MeshLink> connected, Runnable failed) {
        if (self.isClosed()) {
            failed.run();
            return;
        }
        MeshLink link = dial.newLink(kind, peer);
        InetSocketAddress target = addresses.get(i);
        dial.connect(target, link).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                connected.accept(link);
            } else if (i + 1 < addresses.size()) {
                MeshNode.log.debug("mesh {}: cannot connect to {}: {}; trying the next address", self.describe(),
                        target, f.cause().toString());
                connectAny(addresses, i + 1, kind, peer, connected, failed);
            } else {
                failed.run();
            }
        });
    }
}
