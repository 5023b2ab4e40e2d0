package ernic.ipstack;

import ernic.counters.Counter;

/** The store's wire side: frames it claimed, what it answered, TCP connections, and every drop by reason. */
public enum NetCounter implements Counter {
    FRAMES("net.frames"),
    FRAMES_OUT("net.frames_out"),
    ARP_REPLIES("net.arp_replies"),
    ICMP_ECHO_REPLIES("net.icmp_echo_replies"),
    SEGMENTS_IN("tcp.segments_in"),
    SEGMENTS_OUT("tcp.segments_out"),
    CONNECTIONS("tcp.connections"),
    CONNECTIONS_OPEN("tcp.connections_open"),
    CONNECTIONS_REFUSED("tcp.connections_refused"),
    RESETS_IN("tcp.resets_in"),
    RESETS_OUT("tcp.resets_out"),
    RETRANSMITS("tcp.retransmits"),
    FAST_RETRANSMITS("tcp.fast_retransmits"),
    TIMEOUTS("tcp.timeouts"),
    IDLE_TIMEOUTS("tcp.idle_timeouts"),
    OUT_OF_ORDER("tcp.out_of_order"),
    WINDOW_PROBES("tcp.window_probes"),
    /** Data held back because the guest's queue for in-process frames was full. */
    SINK_FULL("tcp.guest_queue_full"),
    /** Connections resumed as soon as the guest's queue had room again ({@link IpEndpoint#roomAgain}), not by a tick. */
    ROOM_WAKES("tcp.guest_queue_wakes"),
    DROP_LENGTH("drop.length"),
    DROP_IP_HEADER("drop.ip_header"),
    DROP_IP_CHECKSUM("drop.ip_checksum"),
    DROP_FRAGMENT("drop.fragment"),
    DROP_ADDRESS("drop.address"),
    DROP_PROTOCOL("drop.protocol"),
    DROP_ARP("drop.arp"),
    DROP_ICMP("drop.icmp"),
    DROP_TCP_CHECKSUM("drop.tcp_checksum"),
    DROP_TCP_HEADER("drop.tcp_header"),
    DROP_TCP_FLAGS("drop.tcp_flags"),
    DROP_TCP_SEQUENCE("drop.tcp_sequence"),
    DROP_TCP_NO_CONNECTION("drop.tcp_no_connection");

    private final String key;

    NetCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
