package ernic.ionic.p4hook;

import ernic.counters.Counter;

/** The hooks' counters (prefix {@code p4.}): frames by direction and verdict, device commands 70-72. */
public enum P4HookCounter implements Counter {
    /** Frames from the guest the program ran on, and where they went. */
    ETH_TX_FRAMES("eth.tx_frames"), ETH_TX_TO_TAP("eth.tx_to_tap"), ETH_TX_TO_GUEST("eth.tx_to_guest"),
    ETH_TX_DROPPED("eth.tx_dropped"),
    /** Frames from the TAP the program ran on, and where they went. */
    ETH_RX_FRAMES("eth.rx_frames"), ETH_RX_TO_GUEST("eth.rx_to_guest"), ETH_RX_TO_TAP("eth.rx_to_tap"),
    ETH_RX_DROPPED("eth.rx_dropped"),
    /** Frames the program left shorter than an Ethernet header (dropped; also in the dropped counts). */
    ETH_RUNTS("eth.runts"),
    /** Device commands 70 (read), 71 (table write) and 72 (control) that ran. */
    DEVCMD_READ("devcmd.read"), DEVCMD_TABLE_WRITE("devcmd.table_write"), DEVCMD_CONTROL("devcmd.control"),
    /** Device commands refused: beyond the guest's scope (EPERM), malformed (EINVAL). */
    DEVCMD_OUT_OF_SCOPE("devcmd.out_of_scope"), DEVCMD_INVALID("devcmd.invalid");

    private final String key;

    P4HookCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
