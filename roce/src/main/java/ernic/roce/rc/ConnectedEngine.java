package ernic.roce.rc;

import ernic.counters.Counters;
import ernic.roce.TransportHeader;

/**
 * What each transport engine of a connected QP on the wire has: the QP's attributes (its path MTU among them), the
 * peer's QP number for every BTH, the sink its packets go to, the counters it counts into, and the header and
 * payload reference it fills for each packet (reused: nothing is allocated per packet).
 */
abstract class ConnectedEngine {
    final RcAttributes attr;
    final int destQp;
    final int pmtu;
    final RcPacketSink sink;
    final Counters<RcCounter> counters;
    final TransportHeader out = new TransportHeader();
    final RcPayload payload = new RcPayload();

    ConnectedEngine(RcAttributes attr, int destQp, RcPacketSink sink, Counters<RcCounter> counters) {
        this.attr = attr;
        this.destQp = destQp & Psn.MASK;
        this.pmtu = attr.pathMtu();
        this.sink = sink;
        this.counters = counters;
    }
}
