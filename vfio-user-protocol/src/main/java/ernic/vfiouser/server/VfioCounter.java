package ernic.vfiouser.server;

import ernic.counters.Counter;

/**
 * What the server saw of its clients: how a client set itself up (version, shared memory, interrupt
 * eventfds) and how much it used the device. Held in a {@link ernic.counters.Counters} owned by the
 * device loop ({@link VfioUserServer#counters()}); registered under {@code vfio.}.
 */
public enum VfioCounter implements Counter {
    CONNECTIONS("connections"),
    VERSIONS_NEGOTIATED("versions_negotiated"),
    DMA_MAPS_WITH_FD("dma_maps_with_fd"),
    DMA_MAPS_WITHOUT_FD("dma_maps_without_fd"),
    DMA_UNMAPS("dma_unmaps"),
    IRQ_EVENTFDS("irq_eventfds"),
    REGION_READS("region_reads"),
    REGION_WRITES("region_writes"),
    CONFIG_READS("config_reads"),
    CONFIG_WRITES("config_writes"),
    RESETS("resets"),
    ERROR_REPLIES("error_replies"),
    PROTOCOL_CLOSES("protocol_closes");

    private final String key;

    VfioCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
