/**
 * UNIX stream sockets that carry fds, as Netty 4.2 epoll channels: the listener and the accepted
 * connection of the vfio-user server. Depends on {@code sys} (the calls) and {@code wire}
 * ({@link ernic.vfiouser.wire.FdChunk}); only the server package uses it.
 */
package ernic.vfiouser.transport;
