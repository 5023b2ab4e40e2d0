/**
 * The client side of vfio-user, as QEMU speaks it, for tests, benchmarks and the driver model: the
 * socket with its fds ({@code ClientSocket}), the message exchange with its reader role
 * ({@code ClientExchange}) and the typed commands ({@link ernic.vfiouser.client.VfioUserClient}).
 * Uses the same codec ({@code sys.ScmRights}, {@code wire.MessageStream}) as the server, and the
 * server package's {@code Capabilities} and {@code IrqType}; no server-side code depends on it.
 */
package ernic.vfiouser.client;
