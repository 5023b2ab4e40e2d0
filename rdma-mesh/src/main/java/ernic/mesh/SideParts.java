package ernic.mesh;

import ernic.counters.OncePerCause;

import ernic.counters.Counters;
import io.netty.util.concurrent.Ticker;

/**
 * What {@link MeshNode} hands its {@link Side} at construction, instead of itself: this node ({@link ThisNode}), its
 * connections' common actions ({@link Links}), the routes ({@link Router}), GID ownership ({@link GidTable}), the
 * per-peer and node counters, the application's listeners, the configuration, the clock and the once-per-cause
 * warnings. {@link Side} keeps them in fields its subclasses use.
 */
record SideParts(ThisNode self, Links links, Router router, GidTable gids, PeerCounters peers, Listeners listeners,
        Counters<MeshCounter> counters, MeshConfig config, Ticker ticker, OncePerCause warnings) {
}
