package ernic.ionic.fault;

import java.util.Locale;

/** The events a fault can be injected into. */
public enum FaultKind {
    /** An RDMA STATS_VALS admin command completes with an error status (the RDMA admin queue counts these). */
    STATS_VALS,
    /** A frame received from the wire vanishes: no buffer is used, no guest-visible counter moves. */
    RX_LOST,
    /** A frame received from the wire is dropped as if the guest had posted no buffer (counted as such). */
    RX_NOBUF,
    /** A transmitted frame is completed to the guest but never leaves the device. */
    TX_DROP;

    /** The {@code --inject} spelling: {@code stats-vals}, {@code rx-lost}, {@code rx-nobuf}, {@code tx-drop}. */
    public String key() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static FaultKind parse(String s) {
        for (FaultKind k : values()) {
            if (k.key().equals(s.trim())) {
                return k;
            }
        }
        return null;
    }
}
