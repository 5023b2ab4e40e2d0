package ernic.ionic.eth;

import ernic.counters.Counter;
import ernic.counters.Counters;
import ernic.ionic.layout.InfoBlock.LifStats;
import ernic.ionic.layout.InfoBlock.PortStats;
import ernic.ionic.layout.Mac;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The Ethernet counters: the LIF and port counters the guest reads from its statistics blocks, and
 * the device's own frame counters (where frames went): three enum-described sets, registered as
 * {@code eth.lif.*}, {@code eth.port.*} and {@code eth.device.*} (keys are the constants in lower case).
 * The port's size buckets are only written into the port block. Device thread only; no allocation to count.
 */
public final class EthStats {
    /** Counters of struct ionic_lif_stats, with their offsets in it. */
    public enum Lif implements Counter {
        RX_UCAST_BYTES(LifStats.RX_UCAST_BYTES), RX_UCAST_PACKETS(LifStats.RX_UCAST_PACKETS),
        RX_MCAST_BYTES(LifStats.RX_MCAST_BYTES), RX_MCAST_PACKETS(LifStats.RX_MCAST_PACKETS),
        RX_BCAST_BYTES(LifStats.RX_BCAST_BYTES), RX_BCAST_PACKETS(LifStats.RX_BCAST_PACKETS),
        RX_UCAST_DROP_BYTES(LifStats.RX_UCAST_DROP_BYTES), RX_UCAST_DROP_PACKETS(LifStats.RX_UCAST_DROP_PACKETS),
        RX_MCAST_DROP_BYTES(LifStats.RX_MCAST_DROP_BYTES), RX_MCAST_DROP_PACKETS(LifStats.RX_MCAST_DROP_PACKETS),
        RX_BCAST_DROP_BYTES(LifStats.RX_BCAST_DROP_BYTES), RX_BCAST_DROP_PACKETS(LifStats.RX_BCAST_DROP_PACKETS),
        RX_DMA_ERROR(LifStats.RX_DMA_ERROR),
        TX_UCAST_BYTES(LifStats.TX_UCAST_BYTES), TX_UCAST_PACKETS(LifStats.TX_UCAST_PACKETS),
        TX_MCAST_BYTES(LifStats.TX_MCAST_BYTES), TX_MCAST_PACKETS(LifStats.TX_MCAST_PACKETS),
        TX_BCAST_BYTES(LifStats.TX_BCAST_BYTES), TX_BCAST_PACKETS(LifStats.TX_BCAST_PACKETS),
        TX_UCAST_DROP_BYTES(LifStats.TX_UCAST_DROP_BYTES), TX_UCAST_DROP_PACKETS(LifStats.TX_UCAST_DROP_PACKETS),
        TX_MCAST_DROP_BYTES(LifStats.TX_MCAST_DROP_BYTES), TX_MCAST_DROP_PACKETS(LifStats.TX_MCAST_DROP_PACKETS),
        TX_BCAST_DROP_BYTES(LifStats.TX_BCAST_DROP_BYTES), TX_BCAST_DROP_PACKETS(LifStats.TX_BCAST_DROP_PACKETS),
        TX_DMA_ERROR(LifStats.TX_DMA_ERROR),
        RX_QUEUE_DISABLED(LifStats.RX_QUEUE_DISABLED), RX_QUEUE_EMPTY(LifStats.RX_QUEUE_EMPTY),
        RX_QUEUE_ERROR(LifStats.RX_QUEUE_ERROR), RX_DESC_FETCH_ERROR(LifStats.RX_DESC_FETCH_ERROR),
        RX_DESC_DATA_ERROR(LifStats.RX_DESC_DATA_ERROR),
        TX_QUEUE_DISABLED(LifStats.TX_QUEUE_DISABLED), TX_QUEUE_ERROR(LifStats.TX_QUEUE_ERROR),
        TX_DESC_FETCH_ERROR(LifStats.TX_DESC_FETCH_ERROR), TX_DESC_DATA_ERROR(LifStats.TX_DESC_DATA_ERROR);

        final int offset;

        Lif(int offset) {
            this.offset = offset;
        }
    }

    /** Counters of struct ionic_port_stats, with their offsets in it (size buckets kept apart). */
    public enum Port implements Counter {
        FRAMES_RX_OK(PortStats.FRAMES_RX_OK), FRAMES_RX_ALL(PortStats.FRAMES_RX_ALL),
        OCTETS_RX_OK(PortStats.OCTETS_RX_OK), OCTETS_RX_ALL(PortStats.OCTETS_RX_ALL),
        FRAMES_RX_UNICAST(PortStats.FRAMES_RX_UNICAST), FRAMES_RX_MULTICAST(PortStats.FRAMES_RX_MULTICAST),
        FRAMES_RX_BROADCAST(PortStats.FRAMES_RX_BROADCAST), FRAMES_RX_OVERSIZED(PortStats.FRAMES_RX_OVERSIZED),
        FRAMES_RX_DROPPED(PortStats.FRAMES_RX_DROPPED),
        FRAMES_TX_OK(PortStats.FRAMES_TX_OK), FRAMES_TX_ALL(PortStats.FRAMES_TX_ALL),
        FRAMES_TX_BAD(PortStats.FRAMES_TX_BAD), OCTETS_TX_OK(PortStats.OCTETS_TX_OK),
        OCTETS_TX_TOTAL(PortStats.OCTETS_TX_TOTAL), FRAMES_TX_UNICAST(PortStats.FRAMES_TX_UNICAST),
        FRAMES_TX_MULTICAST(PortStats.FRAMES_TX_MULTICAST), FRAMES_TX_BROADCAST(PortStats.FRAMES_TX_BROADCAST);

        final int offset;

        Port(int offset) {
            this.offset = offset;
        }
    }

    /** Where frames went, as the device sees it (not guest-visible; for the stats file and tests). */
    public enum Device implements Counter {
        /** TX frames handed to the frame sink. */
        TX_SENT,
        /** TX frames completed and discarded because no sink is attached. */
        TX_DISCARDED,
        /** TX frames an in-process endpoint claimed. */
        TX_CLAIMED,
        /** TX frames completed but dropped by the tx-drop fault. */
        TX_FAULT_DROPPED,
        /** TX descriptors refused (bad address, too long, offload not granted). */
        TX_ERRORS,
        /** Frames offered by the wire side. */
        RX_OFFERED,
        /** Frames written into guest buffers (wire and in-process). */
        RX_DELIVERED,
        /** Wire frames an in-process endpoint claimed. */
        RX_CLAIMED,
        /** Frames dropped because no buffer was posted (including the rx-nobuf fault). */
        RX_NO_BUFFER,
        /** Frames dropped because no receive queue is enabled. */
        RX_NO_QUEUE,
        /** Frames lost by the rx-lost fault. */
        RX_FAULT_LOST,
        /** Frames that did not fit the posted buffers (error completion). */
        RX_TOO_LONG,
        /** In-process frames queued for the guest, delivered from the queue, refused (backlog full). */
        GUEST_QUEUED, GUEST_QUEUE_DELIVERED, GUEST_QUEUE_REFUSED
    }

    /** A frame's destination, as the LIF and port counters split it: the index into the tables below. */
    private static final int UNICAST = 0, MULTICAST = 1, BROADCAST = 2;
    private static final Lif[] RX_PACKETS = {Lif.RX_UCAST_PACKETS, Lif.RX_MCAST_PACKETS, Lif.RX_BCAST_PACKETS};
    private static final Lif[] RX_BYTES = {Lif.RX_UCAST_BYTES, Lif.RX_MCAST_BYTES, Lif.RX_BCAST_BYTES};
    private static final Lif[] RX_DROP_PACKETS =
            {Lif.RX_UCAST_DROP_PACKETS, Lif.RX_MCAST_DROP_PACKETS, Lif.RX_BCAST_DROP_PACKETS};
    private static final Lif[] RX_DROP_BYTES =
            {Lif.RX_UCAST_DROP_BYTES, Lif.RX_MCAST_DROP_BYTES, Lif.RX_BCAST_DROP_BYTES};
    private static final Port[] RX_FRAMES =
            {Port.FRAMES_RX_UNICAST, Port.FRAMES_RX_MULTICAST, Port.FRAMES_RX_BROADCAST};
    private static final Lif[] TX_PACKETS = {Lif.TX_UCAST_PACKETS, Lif.TX_MCAST_PACKETS, Lif.TX_BCAST_PACKETS};
    private static final Lif[] TX_BYTES = {Lif.TX_UCAST_BYTES, Lif.TX_MCAST_BYTES, Lif.TX_BCAST_BYTES};
    private static final Port[] TX_FRAMES =
            {Port.FRAMES_TX_UNICAST, Port.FRAMES_TX_MULTICAST, Port.FRAMES_TX_BROADCAST};

    private final Counters<Lif> lif = new Counters<>(Lif.class);
    private final Counters<Port> port = new Counters<>(Port.class);
    private final Counters<Device> device = new Counters<>(Device.class);
    final long[] rxBuckets = new long[PortStats.SIZE_BUCKETS];
    final long[] txBuckets = new long[PortStats.SIZE_BUCKETS];
    private final LifStats lifView = new LifStats();
    private final PortStats portView = new PortStats();

    public long get(Lif c) {
        return lif.get(c);
    }

    public long get(Port c) {
        return port.get(c);
    }

    public long get(Device c) {
        return device.get(c);
    }

    /** The ionic_lif_stats counters, as a set for the registry. */
    public Counters<Lif> lifCounters() {
        return lif;
    }

    /** The ionic_port_stats counters (size buckets apart), as a set for the registry. */
    public Counters<Port> portCounters() {
        return port;
    }

    /** Where frames went, as a set for the registry. */
    public Counters<Device> deviceCounters() {
        return device;
    }

    void add(Lif c, long v) {
        lif.add(c, v);
    }

    void add(Port c, long v) {
        port.add(c, v);
    }

    void inc(Device c) {
        device.inc(c);
    }

    /** Counts a frame the guest received. */
    void rxDelivered(long dstMac, int length) {
        int to = destination(dstMac);
        add(RX_PACKETS[to], 1);
        add(RX_BYTES[to], length);
        add(RX_FRAMES[to], 1);
        add(Port.FRAMES_RX_OK, 1);
        add(Port.OCTETS_RX_OK, length);
        inc(Device.RX_DELIVERED);
    }

    /** Counts a frame the device received from the wire (before any drop). */
    void rxWire(int length) {
        add(Port.FRAMES_RX_ALL, 1);
        add(Port.OCTETS_RX_ALL, length);
        rxBuckets[PortStats.bucket(length)]++;
    }

    /** Counts a received frame the LIF dropped. */
    void rxDropped(long dstMac, int length) {
        int to = destination(dstMac);
        add(RX_DROP_PACKETS[to], 1);
        add(RX_DROP_BYTES[to], length);
        add(Port.FRAMES_RX_DROPPED, 1);
    }

    /** Counts a frame the guest transmitted (as the LIF and port see it: sent). */
    void txSent(long dstMac, int length) {
        int to = destination(dstMac);
        add(TX_PACKETS[to], 1);
        add(TX_BYTES[to], length);
        add(TX_FRAMES[to], 1);
        add(Port.FRAMES_TX_OK, 1);
        add(Port.FRAMES_TX_ALL, 1);
        add(Port.OCTETS_TX_OK, length);
        add(Port.OCTETS_TX_TOTAL, length);
        txBuckets[PortStats.bucket(length)]++;
    }

    /** Which of the per-destination counters below a frame to {@code dstMac} counts under. */
    private static int destination(long dstMac) {
        return dstMac == Mac.BROADCAST ? BROADCAST : Mac.isMulticast(dstMac) ? MULTICAST : UNICAST;
    }

    /** Fills {@code seg} (at least LifStats.WRITTEN bytes) with the ionic_lif_stats image. */
    void writeLif(MemorySegment seg) {
        seg.asSlice(0, LifStats.WRITTEN).fill((byte) 0);
        LifStats v = lifView.wrap(seg, 0);
        for (Lif c : Lif.values()) {
            v.set(c.offset, lif.get(c));
        }
    }

    /** Fills {@code seg} (at least PortStats.WRITTEN bytes) with the ionic_port_stats image. */
    void writePort(MemorySegment seg) {
        seg.asSlice(0, PortStats.WRITTEN).fill((byte) 0);
        PortStats v = portView.wrap(seg, 0);
        for (Port c : Port.values()) {
            v.set(c.offset, port.get(c));
        }
        for (int i = 0; i < PortStats.SIZE_BUCKETS; i++) {
            v.set(PortStats.FRAMES_RX_SIZE_BUCKETS + 8 * i, rxBuckets[i]);
            v.set(PortStats.FRAMES_TX_SIZE_BUCKETS + 8 * i, txBuckets[i]);
        }
    }

    /** Zeroes the LIF counters (RESET, LIF_SETATTR STATS_CTRL). */
    void clearLif() {
        lif.reset();
    }

    /** Zeroes the port counters (RESET, PORT_RESET). */
    void clearPort() {
        port.reset();
        Arrays.fill(rxBuckets, 0);
        Arrays.fill(txBuckets, 0);
    }

    /** Zeroes everything (power-on). */
    void clearAll() {
        clearLif();
        clearPort();
        device.reset();
    }
}
