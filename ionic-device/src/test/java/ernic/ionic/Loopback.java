package ernic.ionic;

import ernic.ionic.rdma.PeerPort;
import ernic.mesh.Gid;
import ernic.mesh.MeshListener;
import ernic.mesh.Recall;
import ernic.mesh.SendResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Executor;

/**
 * Two mesh ports joined in memory, on the test's own thread: node 0 and node 1, a GID table, and per
 * direction what a mesh connection has: a queue the sender may take requests back from (asked just
 * before a payload is "written"), {@link #WIRE_BYTES} of payloads already written (no longer recallable)
 * that the receiver reads while it is receiving, high and low watermarks (BUSY, then onWritable), and a
 * peer that can die. Nothing runs until {@link #pump}; time is {@link #clock}, moved by the test.
 */
final class Loopback {
    static final long HIGH_WATER = 32L << 20, LOW_WATER = 16L << 20, WIRE_BYTES = 128 * 1024;

    final MockTicker clock = Ticker.newMockTicker();
    final Port a = new Port(0), b = new Port(1);
    private final Map<Gid, Integer> owners = new HashMap<>();
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    Loopback() {
        a.peer = b;
        b.peer = a;
    }

    /** {@code node} owns {@code gid} from now on; both ports hear it, as a mesh's GID update tells every node. */
    void own(Gid gid, int node) {
        owners.put(gid, node);
        for (Port p : new Port[]{a, b}) {
            if (p.listener != null) {
                p.listener.onGidOwnership(node, java.util.Set.of(gid));
            }
        }
    }

    /** Runs what is due (deliveries, tasks the devices scheduled) until nothing is left. */
    void pump() {
        for (int n = 0; !tasks.isEmpty(); n++) {
            if (n > 10_000_000) {
                throw new AssertionError("the loopback never goes idle");
            }
            tasks.poll().run();
        }
    }

    private record Queued(ByteBuf payload, Recall recall) {
    }

    /** One node's end. */
    final class Port implements PeerPort {
        final int id;
        Port peer;
        MeshListener listener;
        /** Reading what the peer sends (a responder that stops reading leaves it queued at the peer). */
        boolean receiving = true;
        boolean alive = true;
        private final ArrayDeque<Queued> queue = new ArrayDeque<>();
        private final ArrayDeque<ByteBuf> wire = new ArrayDeque<>();
        private long queued, onWire;
        private boolean full;
        long takenBack;
        /** What the device reported as its guest's own source GIDs, in order (repeats included). */
        final java.util.List<Gid> learned = new java.util.ArrayList<>();
        /** What the device answers about GIDs its live QPs and AHs use (null: nothing attached). */
        java.util.function.Predicate<Gid> inUse;

        Port(int id) {
            this.id = id;
        }

        /** Bytes waiting in this node's queue toward its peer (not yet written). */
        long queuedBytes() {
            return queued;
        }

        /** This node goes away: its peer loses the route and hears the node is dead. */
        void die() {
            alive = false;
            queue.forEach(q -> q.payload.release());
            queue.clear();
            wire.forEach(ByteBuf::release);
            wire.clear();
            queued = onWire = 0;
            if (peer.listener != null) {
                peer.listener.onNodeState(id, false);
            }
        }

        @Override public int nodeId() { return id; }
        @Override public ByteBuf message(int bytes) { return PooledByteBufAllocator.DEFAULT.directBuffer(bytes); }
        @Override public Executor loop() { return tasks::add; }
        @Override public void listen(MeshListener l) { listener = l; }
        @Override public void gidsInUse(java.util.function.Predicate<Gid> p) { inUse = p; }

        @Override
        public boolean learnGid(long hi, long lo) {
            learned.add(Gid.of(hi, lo));
            return true;
        }

        @Override
        public OptionalInt ownerOf(Gid gid) {
            Integer n = owners.get(gid);
            return n == null ? OptionalInt.empty() : OptionalInt.of(n);
        }

        private SendResult room(int node, long factor) {
            if (!alive || !peer.alive || node != peer.id) {
                return SendResult.NO_ROUTE;
            }
            return queued > HIGH_WATER * factor ? SendResult.BUSY : SendResult.QUEUED;
        }

        @Override
        public SendResult probe(int node) {
            return room(node, 1);
        }

        @Override
        public SendResult send(int node, ByteBuf payload, Recall recall) {
            return enqueue(node, payload, recall, 1);
        }

        @Override
        public SendResult sendMore(int node, ByteBuf payload, Recall recall) {
            return enqueue(node, payload, recall, 1 << 20); // never BUSY
        }

        @Override
        public SendResult sendReply(int node, ByteBuf payload) {
            return enqueue(node, payload, null, 2);
        }

        private SendResult enqueue(int node, ByteBuf payload, Recall recall, long factor) {
            SendResult r = room(node, factor);
            if (r != SendResult.QUEUED) {
                return r;
            }
            queue.add(new Queued(payload, recall));
            queued += payload.readableBytes();
            if (queued > HIGH_WATER) {
                full = true;
            }
            tasks.add(this::flush);
            return r;
        }

        /** Writes queued payloads onto the wire while it has room, asking each sender first; delivers. */
        private void flush() {
            while (!queue.isEmpty() && onWire < WIRE_BYTES) {
                Queued q = queue.poll();
                queued -= q.payload.readableBytes();
                if (q.recall != null && q.recall.recalled(peer.id, q.payload)) {
                    takenBack++;
                    q.payload.release();
                    continue;
                }
                wire.add(q.payload);
                onWire += q.payload.readableBytes();
            }
            if (full && queued < LOW_WATER) {
                full = false;
                if (listener != null) {
                    listener.onWritable(peer.id);
                }
            }
            while (peer.receiving && !wire.isEmpty()) {
                ByteBuf m = wire.poll();
                onWire -= m.readableBytes();
                peer.listener.onMessage(id, m);
                if (!queue.isEmpty() && onWire < WIRE_BYTES) {
                    tasks.add(this::flush);
                    return;
                }
            }
        }

        @Override
        public void setReceivingFromAll(boolean on) {
            setReceiving(on);
        }

        /** Starts or stops reading from the peer. */
        void setReceiving(boolean on) {
            receiving = on;
            if (on) {
                tasks.add(peer::flush);
            }
        }
    }
}
