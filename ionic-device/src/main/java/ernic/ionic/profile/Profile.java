package ernic.ionic.profile;

/**
 * What a NIC profile sets: how the device describes itself to the driver (MSI-X vectors, IDENTIFY,
 * LIF_IDENTIFY, PORT_INIT, LIF_INIT) and how often it rewrites the statistics blocks.
 *
 * @param name             the layers it was built from, for logs
 * @param interrupts       MSI-X vectors and dev identity nintrs (2..128)
 * @param ethQueues        Ethernet RX and TX queue count each (1..256)
 * @param rdmaEqs          RDMA event queue count in LIF identity (4..256; ionic_rdma needs 4)
 * @param linkSpeedMbps    link speed reported in lif_info and port_info
 * @param transceiver      transceiver reported in port_info.status.xcvr
 * @param maxMtu           largest MTU; LIF identity max_frame_size is maxMtu + 18
 * @param firmwareVersion  dev_info fw_version (printable ASCII, at most 31 characters)
 * @param statsIntervalMs  how often the LIF and port statistics blocks are rewritten (0 = only at init)
 */
public record Profile(String name, int interrupts, int ethQueues, int rdmaEqs, int linkSpeedMbps,
                      Transceiver transceiver, int maxMtu, String firmwareVersion, int statsIntervalMs) {
    public static final int MAX_INTERRUPTS = 128;
    /** Ethernet header + VLAN tag: max_frame_size - 18 = max_mtu in the driver. */
    public static final int FRAME_OVERHEAD = 18;
    public static final int MIN_MTU = 68, MAX_MTU = 9198;

    public Profile {
        check(interrupts >= 2 && interrupts <= MAX_INTERRUPTS, "interrupts", interrupts, "2..128");
        check(ethQueues >= 1 && ethQueues <= 256, "eth_queues", ethQueues, "1..256");
        check(rdmaEqs >= 4 && rdmaEqs <= 256, "rdma_eqs", rdmaEqs, "4..256");
        check(linkSpeedMbps >= 10 && linkSpeedMbps <= 800_000, "link_speed_mbps", linkSpeedMbps, "10..800000");
        if (transceiver == null) {
            throw new IllegalArgumentException("transceiver missing");
        }
        check(maxMtu >= MIN_MTU && maxMtu <= MAX_MTU, "max_mtu", maxMtu, MIN_MTU + ".." + MAX_MTU);
        if (firmwareVersion == null || firmwareVersion.isEmpty() || firmwareVersion.length() > 31
                || !firmwareVersion.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
            throw new IllegalArgumentException("firmware_version must be 1..31 printable ASCII characters: '"
                    + firmwareVersion + "'");
        }
        check(statsIntervalMs == 0 || statsIntervalMs >= 10 && statsIntervalMs <= 3_600_000, "stats_interval_ms",
                statsIntervalMs, "0 or 10..3600000");
    }

    /** LIF identity max_frame_size. */
    public int maxFrameSize() {
        return maxMtu + FRAME_OVERHEAD;
    }

    private static void check(boolean ok, String key, long value, String range) {
        if (!ok) {
            throw new IllegalArgumentException(key + " = " + value + " is out of range (" + range + ")");
        }
    }
}
