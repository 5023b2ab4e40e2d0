package ernic.mesh;

import io.netty.buffer.ByteBuf;

import java.util.List;
import java.util.Set;

/** Callbacks of a {@link MeshNode}; every one runs on the node's event loop. */
public interface MeshListener {
    /** A payload from {@code sourceNode}. The listener owns {@code payload} and must release it. */
    void onMessage(int sourceNode, ByteBuf payload);

    /** This node got its id from the manager (again, after a reconnect; a different one if it was evicted). */
    default void onRegistered(int nodeId) {
    }

    /** The topology changed (membership or liveness). */
    default void onTopology(List<NodeInfo> nodes) {
    }

    /** A node became alive or dead (or left the table: then {@code alive} is false). */
    default void onNodeState(int nodeId, boolean alive) {
    }

    /** The set of GIDs {@code nodeId} owns changed; an empty set when it left the table. */
    default void onGidOwnership(int nodeId, Set<Gid> gids) {
    }

    /**
     * Sending to {@code nodeId} may succeed again: its connection fell below its low watermark, or its route
     * changed. Retry what got {@link SendResult#BUSY}.
     */
    default void onWritable(int nodeId) {
    }
}
