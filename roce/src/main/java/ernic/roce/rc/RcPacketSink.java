package ernic.roce.rc;

import ernic.roce.TransportHeader;

/** Where an RC engine's packets go: the device builds the frame (outer headers, ICRC) around them. */
@FunctionalInterface
public interface RcPacketSink {
    /**
     * Sends one packet: its transport headers and its payload by reference. Both are reused by the engine
     * after the call returns, so an implementation copies what it keeps.
     */
    void transmit(TransportHeader header, RcPayload payload);
}
