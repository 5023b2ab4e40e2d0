package ernic.mesh;

import java.util.Set;

/**
 * This node as a {@link Side} sees it: its id (a worker's is set at registration), its instance, its listening
 * port, its name in log lines, whether it is closing, and the GIDs it claims. {@link MeshNode} hands one over.
 */
interface ThisNode {
    /** 0 on the manager, -1 on a worker not yet registered. */
    int id();

    void setId(int id);

    long instanceNonce();

    int boundPort();

    /** "manager", "worker 3" or "worker (unregistered)", for log lines. */
    String describe();

    boolean isClosed();

    /** The GIDs this node declares (kept while it has no id). */
    Set<Gid> declaredGids();

    /** The GIDs this node learned from its guest (a snapshot). */
    Set<Gid> learnedGids();
}
