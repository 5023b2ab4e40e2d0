/**
 * The vfio-user wire format (docs/interop/vfio-user.rst in QEMU): the command numbers, the 16-byte
 * header, one record per payload, and the framing of the inbound stream with the rule that gives a
 * read's fds to a message ({@link ernic.vfiouser.wire.MessageStream}, shared by the server's
 * {@link ernic.vfiouser.wire.MessageFramer} and the client). Depends only on {@code sys}; the
 * transport, the server and the client build on it. It knows no device.
 */
package ernic.vfiouser.wire;
