package ernic.ionic.p4hook;

import ernic.counters.Counter;

/**
 * The hooks' counters (prefix {@code p4.}, keys such as {@code eth.tx_frames}): frames by direction and verdict, device
 * commands 70-72.
 */
public enum P4HookCounter implements Counter.Grouped {
    /**
     * Frames from the guest the program ran on, and where they went: to_tap and to_guest count every frame sent (a
     * frame's own output and its copies), dropped the frames of which nothing left.
     */
    ETH_TX_FRAMES, ETH_TX_TO_TAP, ETH_TX_TO_GUEST, ETH_TX_DROPPED,
    /** Frames from the TAP the program ran on, and where they went. */
    ETH_RX_FRAMES, ETH_RX_TO_GUEST, ETH_RX_TO_TAP, ETH_RX_DROPPED,
    /** Frames the program left shorter than an Ethernet header (dropped; also in the dropped counts). */
    ETH_RUNTS,
    /**
     * Copies of a frame sent besides its own output: clones (clone_ingress_pkt_to_egress, clone_egress_pkt_to_egress)
     * and multicast copies (mcast_grp); each is in the to_tap and to_guest counts too.
     */
    ETH_COPIES_SENT,
    /** Digests dropped because {@value P4Hooks#DIGEST_QUEUE} were waiting for the guest (devcmd 71 what 1). */
    DIGESTS_LOST,
    /** Device commands 70 (read), 71 (table write) and 72 (control) that ran. */
    DEVCMD_READ, DEVCMD_TABLE_WRITE, DEVCMD_CONTROL,
    /** Device commands refused: beyond the guest's scope (EPERM), malformed (EINVAL). */
    DEVCMD_OUT_OF_SCOPE, DEVCMD_INVALID
}
