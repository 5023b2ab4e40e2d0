package ernic.ionic.rdma;

import ernic.mesh.Gid;
import ernic.mesh.MeshListener;
import ernic.mesh.MeshNode;
import ernic.mesh.Recall;
import ernic.mesh.SendResult;
import io.netty.buffer.ByteBuf;

import java.util.OptionalInt;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

/**
 * What the remote data path needs of the mesh, and nothing more: who owns a GID, which GIDs the guest uses as its
 * own (the mesh learns them), send a request (which
 * the mesh may ask to take back) or a reply, stop reading when the responder holds too much, and the
 * events of a {@link MeshListener}. A {@link MeshNode} is one; tests join two devices on one event loop
 * with a loopback port instead. Inbound payloads reach the listener as the mesh holds them (possibly
 * several buffers): the data path reads them where they lie.
 */
public interface PeerPort {
    int nodeId();

    OptionalInt ownerOf(Gid gid);

    /** An empty buffer for a message of up to {@code bytes} to {@link #send} (see {@link MeshNode#message}). */
    ByteBuf message(int bytes);

    /** What {@link #send} would answer now, without a payload. */
    SendResult probe(int node);

    SendResult send(int node, ByteBuf payload, Recall recall);

    /**
     * A later piece of a request whose first piece {@link #send} took: queued behind it however much the connection
     * holds (the request was let in whole), so it is never BUSY; NO_ROUTE when the peer is gone.
     */
    SendResult sendMore(int node, ByteBuf payload, Recall recall);

    /**
     * A reply, which has a room of its own on the connection, apart from the requests' (replies must not wait for
     * the requests' budget); BUSY means it is dropped.
     */
    SendResult sendReply(int node, ByteBuf payload);

    void setReceivingFromAll(boolean on);

    /** Starts ({@code listener}) or stops (null) the events. */
    void listen(MeshListener listener);

    /** Runs a task later on the device loop (never inside the caller). */
    Executor loop();

    /**
     * The guest used the GID {@code hi:lo} (two big-endian halves) as its own source address, in a frame it
     * transmitted or a header template it wrote: the mesh may learn it as this node's (see
     * {@link MeshNode#learnGid}). Called per transmitted frame: must not allocate for a GID it knows.
     */
    boolean learnGid(long hi, long lo);

    /** Which GIDs live QPs and AHs use as their source (a learned one in use does not age); null: none. */
    void gidsInUse(Predicate<Gid> inUse);

    /** A port over a real mesh node, which runs on the device loop. */
    static PeerPort of(MeshNode node) {
        return new PeerPort() {
            private MeshListener current;

            @Override public int nodeId() { return node.nodeId(); }
            @Override public OptionalInt ownerOf(Gid gid) { return node.ownerOf(gid); }
            @Override public ByteBuf message(int bytes) { return node.message(bytes); }
            @Override public SendResult probe(int dst) { return node.probe(dst); }
            @Override public SendResult send(int dst, ByteBuf p, Recall r) { return node.send(dst, p, r); }
            @Override public SendResult sendMore(int dst, ByteBuf p, Recall r) { return node.sendMore(dst, p, r); }
            @Override public SendResult sendReply(int dst, ByteBuf p) { return node.sendReply(dst, p); }
            @Override public void setReceivingFromAll(boolean on) { node.setReceivingFromAll(on); }
            @Override public Executor loop() { return node.eventLoop(); }
            @Override public boolean learnGid(long hi, long lo) { return node.learnGid(hi, lo); }
            @Override public void gidsInUse(Predicate<Gid> inUse) { node.gidsInUse(inUse); }

            @Override
            public void listen(MeshListener listener) {
                if (current != null) {
                    node.removeListener(current);
                }
                current = listener;
                if (listener != null) {
                    node.addListener(listener);
                }
            }
        };
    }
}
