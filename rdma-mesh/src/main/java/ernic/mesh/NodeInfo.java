package ernic.mesh;

import java.net.InetSocketAddress;

/**
 * One node of the topology as the manager broadcasts it.
 *
 * @param id      node id (the manager is 0)
 * @param alive   whether the manager currently hears from it
 * @param address where it accepts direct connections (null for the manager)
 */
public record NodeInfo(int id, boolean alive, InetSocketAddress address) {
}
