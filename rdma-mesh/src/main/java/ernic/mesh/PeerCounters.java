package ernic.mesh;

import java.util.LinkedHashMap;
import java.util.Map;

/** Counters of one peer as seen by one node; touched only on the node's event loop. */
final class PeerCounters {
    long bytesSent;
    long messagesSent;
    long bytesReceived;
    long messagesReceived;
    /** Connections established with this peer (registrations, for the manager's view of a worker). */
    long connections;
    /** Messages to or from this peer that went by way of the manager (on the manager: relayed to this peer). */
    long relayedMessages;
    long relayedBytes;
    /** Messages to this peer whose sender took them back while they were still queued (counted in messagesSent). */
    long takenBack;

    void connected() {
        connections++;
    }

    Map<String, Long> snapshot(long queueDepth) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("bytesSent", bytesSent);
        m.put("messagesSent", messagesSent);
        m.put("bytesReceived", bytesReceived);
        m.put("messagesReceived", messagesReceived);
        m.put("queueDepth", queueDepth);
        m.put("reconnects", Math.max(0, connections - 1));
        m.put("relayedMessages", relayedMessages);
        m.put("relayedBytes", relayedBytes);
        m.put("takenBack", takenBack);
        return m;
    }
}
