package ernic.mesh;

import ernic.counters.Counter;

/** The node-wide counters of a mesh node (registered under {@code mesh.}; in the stats file as {@code node.KEY}). */
public enum MeshCounter implements Counter {
    /** Handshakes refused for another magic number or version. */
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
    GID_RECORDS_RECEIVED("gidRecordsReceived");

    private final String key;

    MeshCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
