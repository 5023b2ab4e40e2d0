package ernic.mesh;

import ernic.counters.Counter;

/** The node-wide counters of a mesh node (registered under {@code mesh.}; in the stats file as {@code node.KEY}). */
public enum MeshCounter implements Counter {
    /** Handshakes refused for another magic number or version (of the mesh, or of its authentication). */
    REFUSED_HANDSHAKES("refusedHandshakes"),
    /** Connections closed for a frame this node cannot accept. */
    PROTOCOL_ERRORS("protocolErrors"),
    /** Connections shut down because they sent nothing for the send time-out with data queued. */
    SEND_TIMEOUTS("sendTimeouts"),
    /** Registrations refused (on the manager: a full table; on a worker: refusals it got). */
    REGISTRATIONS_REFUSED("registrationsRefused"),
    /** Dead nodes evicted from the manager's full table. */
    EVICTIONS("evictions"),
    /** Messages the manager could not relay: no connection to their destination. */
    RELAY_DROPPED("relayDropped"),
    HEARTBEATS_SENT("heartbeatsSent"),
    HEARTBEATS_RECEIVED("heartbeatsReceived"),
    /** Connections closed after three silent intervals. */
    SILENT_CONNECTIONS_CLOSED("silentConnectionsClosed"),
    GID_RECORDS_SENT("gidRecordsSent"),
    GID_RECORDS_RECEIVED("gidRecordsReceived"),
    /** Connections whose peer proved it holds the mesh's secret. */
    AUTH_PASSED("authPassed"),
    /** Peers refused: their proof did not match (another secret, or a replayed handshake). */
    AUTH_WRONG_PROOF("authWrongProof"),
    /** Peers refused: they spoke the mesh without authenticating (no secret), while this node has one. */
    AUTH_MISSING("authMissing"),
    /** Peers refused: they tried to authenticate, while this node has no secret. */
    AUTH_UNEXPECTED("authUnexpected"),
    /** Peers refused: what they sent first is no mesh handshake. */
    AUTH_GARBAGE("authGarbage"),
    /** Peers refused: they answered with a nonce this node had sent. */
    AUTH_REFLECTED("authReflected"),
    /** Connections closed for not authenticating within three intervals. */
    AUTH_TIMEOUTS("authTimeouts"),
    /** On the manager: claims of a GID another node claims already (the first owner keeps it; logged). */
    GID_CONFLICTS("gidConflicts"),
    /** GIDs this node learned from its guest's source addresses. */
    GIDS_LEARNED("gidsLearned"),
    /** Learned GIDs the guest stopped using (five minutes, no live QP or AH on them). */
    GIDS_AGED("gidsAged"),
    /** Source addresses not learned because this node has learned the most it may (64). */
    GIDS_LEARN_REFUSED("gidsLearnRefused");

    private final String key;

    MeshCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
