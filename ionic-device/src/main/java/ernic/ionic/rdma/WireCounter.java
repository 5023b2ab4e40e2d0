package ernic.ionic.rdma;

import ernic.counters.Counter;

/**
 * RoCEv2 on the Ethernet port ({@code --roce}), under {@code roce.}: frames sent and taken, and each cause for which
 * a received RoCEv2 packet for this device is dropped. The RC and UC transports' own counts are under
 * {@code roce.rc.}.
 */
public enum WireCounter implements Counter.CamelCase {
    /** RoCEv2 frames sent out of the port, and received for a QP of this device. */
    TX_FRAMES, RX_FRAMES,
    /** Their bytes, whole frames (Ethernet header to ICRC). */
    TX_BYTES, RX_BYTES,
    /** RoCEv2 packets to an address of this guest that failed the parser's checks (lengths, opcodes, ...). */
    RX_MALFORMED,
    /** RoCEv2 packets for this device whose ICRC was wrong (damaged on the way): dropped. */
    RX_BAD_ICRC,
    /** Congestion notification packets received: counted, as no congestion control is done. */
    RX_CNP,
    /** Packets taken with the IP header's ECN field at CE (congestion experienced): counted, no CNP is sent. */
    RX_CE_MARKED,
    /** Packets for a QP that does not exist, is not on the wire (RC, UC) or is not UD (a datagram). */
    RX_UNKNOWN_QP,
    /** Packets whose source is not the QP's destination. */
    RX_WRONG_SOURCE,
    /** Packets of another transport than their QP's: UC packets for an RC QP, RC packets for a UC QP. */
    RX_WRONG_TRANSPORT,
    /** Packets for a QP whose engine for them does not run (a response before RTS). */
    RX_NOT_READY,
    /** Packets not sent: the WQE's or the MR's memory could no longer be read. */
    TX_UNREADABLE,
    /** RC and UC QPs placed on the wire (at RTR). */
    QPS_PLACED
}
