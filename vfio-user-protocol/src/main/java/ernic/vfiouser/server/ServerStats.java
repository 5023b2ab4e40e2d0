package ernic.vfiouser.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the server saw of its clients, readable from any thread: how a client set itself up
 * (version, shared memory, interrupt eventfds) and how much it used the device.
 */
public final class ServerStats {
    public final AtomicLong connections = new AtomicLong();
    public final AtomicLong versionsNegotiated = new AtomicLong();
    public final AtomicLong dmaMapsWithFd = new AtomicLong();
    public final AtomicLong dmaMapsWithoutFd = new AtomicLong();
    public final AtomicLong dmaUnmaps = new AtomicLong();
    public final AtomicLong irqEventfds = new AtomicLong();
    public final AtomicLong regionReads = new AtomicLong();
    public final AtomicLong regionWrites = new AtomicLong();
    public final AtomicLong configReads = new AtomicLong();
    public final AtomicLong configWrites = new AtomicLong();
    public final AtomicLong resets = new AtomicLong();
    public final AtomicLong errorReplies = new AtomicLong();
    public final AtomicLong protocolCloses = new AtomicLong();
    /** The JSON the last client proposed in VERSION. */
    public volatile String lastClientVersionJson;

    @Override
    public String toString() {
        return "connections=" + connections + " versions=" + versionsNegotiated + " dmaMapsWithFd=" + dmaMapsWithFd
                + " dmaMapsWithoutFd=" + dmaMapsWithoutFd + " irqEventfds=" + irqEventfds + " regionReads="
                + regionReads + " regionWrites=" + regionWrites + " configReads=" + configReads + " configWrites="
                + configWrites + " resets=" + resets + " errorReplies=" + errorReplies + " protocolCloses="
                + protocolCloses;
    }
}
