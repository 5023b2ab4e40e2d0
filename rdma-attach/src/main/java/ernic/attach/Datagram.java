package ernic.attach;

import java.lang.foreign.MemorySegment;

/**
 * A datagram a guest QP sends, as an {@link Attachment} sees it: valid only during {@link Attachment#datagram}
 * (the device reuses one for every datagram, so an attachment keeps none of it).
 */
public interface Datagram {
    /** The destination QP number (24 bits). */
    int destQpn();

    /** The bytes after the GRH. */
    long length();

    /** Copies the {@link #length()} bytes into {@code dst} (at least that long); false when guest memory refused. */
    boolean copyTo(MemorySegment dst);

    /** The sender's GID (16 bytes, the address vector's source). */
    byte[] sourceGid();

    /** The destination MAC the guest addressed this peer by. */
    long destMac();

    /** The VLAN of the address vector, or -1 for none. */
    int vlan();
}
