package ernic.mesh;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** A node's {@link MeshListener}s, told on the node's event loop; one that throws is logged, the others still told. */
final class Listeners {
    /** Replaced whole on every change, so a loop over it needs no iterator and no copy. */
    private volatile MeshListener[] all = new MeshListener[0];
    private final Supplier<String> node;

    /** {@code node}: names the node in logs. */
    Listeners(Supplier<String> node) {
        this.node = node;
    }

    synchronized void add(MeshListener l) {
        MeshListener[] more = Arrays.copyOf(all, all.length + 1);
        more[all.length] = l;
        all = more;
    }

    synchronized void remove(MeshListener l) {
        List<MeshListener> left = new ArrayList<>(Arrays.asList(all));
        if (left.remove(l)) {
            all = left.toArray(MeshListener[]::new);
        }
    }

    /** Hands each listener its own duplicate of {@code payload} (no copy), then releases {@code payload}. */
    void message(int source, ByteBuf payload) {
        try {
            for (MeshListener l : all) {
                try {
                    l.onMessage(source, payload.retainedDuplicate());
                } catch (RuntimeException e) {
                    MeshNode.log.warn("mesh {}: listener failed on a message from node {}", node.get(), source, e);
                }
            }
        } finally {
            payload.release();
        }
    }

    void registered(int id) {
        each(l -> l.onRegistered(id));
    }

    void topology(List<NodeInfo> nodes) {
        each(l -> l.onTopology(nodes));
    }

    void nodeState(int id, boolean alive) {
        each(l -> l.onNodeState(id, alive));
    }

    void gidOwnership(int id, Set<Gid> gids) {
        each(l -> l.onGidOwnership(id, gids));
    }

    void writable(int id) {
        each(l -> l.onWritable(id));
    }

    private void each(Consumer<MeshListener> call) {
        for (MeshListener l : all) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                MeshNode.log.warn("mesh {}: listener failed", node.get(), e);
            }
        }
    }
}
