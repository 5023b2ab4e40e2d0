package ernic.mesh;

import ernic.counters.Counter;

/** The counters a mesh node keeps per peer (a family labelled {@code peer}, the peer's id). */
public enum PeerCounter implements Counter {
    BYTES_SENT("bytesSent"),
    MESSAGES_SENT("messagesSent"),
    BYTES_RECEIVED("bytesReceived"),
    MESSAGES_RECEIVED("messagesReceived"),
    /** Bytes queued now for the peer's own connection: a gauge, set when the sets are read. */
    QUEUE_DEPTH("queueDepth") {
        @Override
        public boolean gauge() {
            return true;
        }
    },
    /** Connections established with the peer after the first (re-registrations, on the manager). */
    RECONNECTS("reconnects"),
    /** Messages to or from the peer that went by way of the manager (on the manager: relayed to the peer). */
    RELAYED_MESSAGES("relayedMessages"),
    RELAYED_BYTES("relayedBytes"),
    /** Messages for the peer their sender took back while they were still queued (counted in messagesSent). */
    TAKEN_BACK("takenBack");

    private final String key;

    PeerCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
