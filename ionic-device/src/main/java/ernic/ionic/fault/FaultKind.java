package ernic.ionic.fault;

import ernic.counters.Counter;

import java.util.Locale;
import java.util.StringJoiner;

/** The events a fault can be injected into. */
public enum FaultKind implements Counter {
    /** An RDMA STATS_VALS admin command completes with an error status (the RDMA admin queue counts these). */
    STATS_VALS,
    /** A frame received from the wire vanishes: no buffer is used, no guest-visible counter moves. */
    RX_LOST,
    /** A frame received from the wire is dropped as if the guest had posted no buffer (counted as such). */
    RX_NOBUF,
    /** A transmitted frame is completed to the guest but never leaves the device. */
    TX_DROP,
    /**
     * {@code --roce}: a RoCEv2 packet the wire end sends, or one it receives for this device, is lost on the wire
     * (after its checks on the way in): the RC transport's ACKs, NAKs and timers recover.
     */
    ROCE_DROP,
    /** {@code --roce}: a RoCEv2 packet is sent, or taken, twice: the receiver's duplicate handling sees the second. */
    ROCE_DUPLICATE,
    /**
     * {@code --roce}: a RoCEv2 packet is held back and sent (or taken) after the next one of its direction, or at the
     * next wake-up of the device when none follows: the receiver sees it out of order.
     */
    ROCE_REORDER,
    /**
     * {@code --roce}: one byte of a RoCEv2 packet (the last one before its ICRC) is changed after the ICRC was
     * computed, so the receiver's ICRC check drops it: on the way out the peer's, on the way in this device's.
     */
    ROCE_CORRUPT,
    /**
     * An RC RDMA WRITE, WRITE_IMM, READ or atomic completes with a remote access error, as if the responder had
     * refused its rkey (NAK remote access error): nothing of it reaches the responder.
     */
    RDMA_REM_ACCESS,
    /**
     * An RC SEND, SEND_IMM, SEND_INV or WRITE_IMM completes with RNR retry exceeded, as if the responder had had
     * no receive posted for every retry: nothing of it reaches the responder.
     */
    RDMA_RNR,
    /**
     * An RC SEND, WRITE, READ or atomic completes with transport retry exceeded, as if no acknowledgement had
     * come back for every retry: nothing of it reaches the responder.
     */
    RDMA_RETRY_EXC,
    /** An RC SEND, WRITE, READ or atomic is carried out, and so completes, a given time later. */
    RDMA_LATENCY;

    /**
     * The {@code --inject} spelling: {@code stats-vals}, {@code rx-lost}, {@code rx-nobuf}, {@code tx-drop},
     * {@code roce-drop}, {@code roce-duplicate}, {@code roce-reorder}, {@code roce-corrupt}, {@code rdma-rem-access},
     * {@code rdma-rnr}, {@code rdma-retry-exc}, {@code rdma-latency}.
     */
    @Override
    public String key() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** An event of the RDMA data path: an operation of an RC QP (these take {@code qp=}). */
    public boolean rdma() {
        return ordinal() >= RDMA_REM_ACCESS.ordinal();
    }

    /** An event of the wire end: a RoCEv2 packet sent or received (these take {@code peer=}). */
    public boolean roce() {
        return ordinal() >= ROCE_DROP.ordinal() && ordinal() <= ROCE_CORRUPT.ordinal();
    }

    public static FaultKind parse(String s) {
        for (FaultKind k : values()) {
            if (k.key().equals(s.trim())) {
                return k;
            }
        }
        return null;
    }

    /** Every spelling, comma-separated, for messages. */
    static String keys() {
        StringJoiner j = new StringJoiner(", ");
        for (FaultKind k : values()) {
            j.add(k.key());
        }
        return j.toString();
    }
}
