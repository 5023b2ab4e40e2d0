package ernic.mesh;

import io.netty.buffer.ByteBuf;

/**
 * Lets a sender take back a payload it queued with {@link MeshNode#send(int, ByteBuf, Recall)} while it still waits
 * on its connection. The mesh asks once, on the node's event loop, when the payload reaches the head of the
 * connection's queue, just before it would be passed down to the socket; once passed down it is out of reach (it
 * arrives, or is lost with the connection). A payload whose connection closes first is never asked about. On a
 * worker that reaches {@code destination} by way of the manager, the question is asked on the worker's connection
 * to the manager; what the manager has, it relays.
 */
@FunctionalInterface
public interface Recall {
    /**
     * True takes {@code payload} back: it is released unsent and counted ({@code peer.<id>.takenBack}). The payload
     * still belongs to the mesh: read it, but neither keep, modify nor release it, and send nothing from here.
     */
    boolean recalled(int destination, ByteBuf payload);
}
