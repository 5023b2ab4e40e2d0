package ernic.roce.rc;

import ernic.roce.TransportHeader;

import java.lang.foreign.MemorySegment;

/** The receive side of a connected QP on the wire: {@link RcResponder} (reliable) or {@link UcResponder}. */
public interface ConnectedResponder {
    /**
     * Takes one request packet: its headers and its {@code length} bytes of payload at {@code offset} of
     * {@code data}. Any response goes to the packet sink before it returns.
     */
    void receive(TransportHeader r, MemorySegment data, long offset, int length, long now);
}
