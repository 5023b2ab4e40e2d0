package ernic.nvmeof;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A target over byte-array host memory, with the device loop and the I/O executor as task queues the
 * test runs by hand ({@link #drain}), and queues whose responses are recorded.
 */
final class Harness {
    static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";
    final ArrayHost host = new ArrayHost();
    final MockTicker ticker = Ticker.newMockTicker();
    final ArrayDeque<Runnable> loop = new ArrayDeque<>(), io = new ArrayDeque<>();
    final NvmeofCounters counters = new NvmeofCounters();
    final NvmeofOptions options;
    final NvmeofTarget target;
    int nextKey = 0x100;

    Harness(String backend) {
        this(NvmeofOptions.parse(backend, 1 << 16, 1 << 12), null);
    }

    Harness(NvmeofOptions options, Namespace ns) {
        this.options = options;
        Namespace n = ns != null ? ns : Namespace.ram(options.sizeOrDefault(), options.blockSize());
        this.target = new NvmeofTarget(options, n, loop::add, io::add, ticker, counters);
    }

    /** A response capsule as the host receives it. */
    record Cqe(long result, int sqHead, int sqId, int cid, int status, boolean invalidate, int rkey) {
        /** Status without the phase bit: SCT << 8 | SC, DNR at bit 14. */
        int sc() {
            return status & 0x7ff;
        }

        boolean dnr() {
            return (status & 0x4000) != 0;
        }
    }

    /** The responses and disconnects one queue's QP saw. */
    static final class Wire implements HostConnection {
        final List<Cqe> cqes = new ArrayList<>();
        int disconnects;

        @Override
        public void respond(MemorySegment cqe, boolean invalidate, int rkey) {
            ByteBuffer b = ByteBuffer.wrap(cqe.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).order(ByteOrder.LITTLE_ENDIAN);
            cqes.add(new Cqe(b.getLong(0), Short.toUnsignedInt(b.getShort(8)), Short.toUnsignedInt(b.getShort(10)),
                    Short.toUnsignedInt(b.getShort(12)), Short.toUnsignedInt(b.getShort(14)) >>> 1, invalidate, rkey));
        }

        @Override
        public void disconnect() {
            disconnects++;
        }
    }

    /** One queue and what its QP saw. */
    final class Queue {
        final HostQueue q;
        final Wire wire = new Wire();

        Queue(int qid, int hsqsize) {
            q = target.openQueue(qid, hsqsize, host, wire);
        }

        /** Sends the capsule, runs the loop and I/O tasks, and returns the response (null if none). */
        Cqe send(Sqe sqe) {
            return send(sqe.capsule());
        }

        Cqe send(byte[] capsule) {
            int before = wire.cqes.size();
            q.capsule(MemorySegment.ofArray(capsule));
            drain();
            return wire.cqes.size() > before ? wire.cqes.getLast() : null;
        }

        /** Fabrics Connect with the data in host memory under a fresh key. */
        Cqe connect(int sqsize, int cntlid, String subnqn) {
            return connect(sqsize, cntlid, subnqn, HOST_NQN);
        }

        Cqe connect(int sqsize, int cntlid, String subnqn, String hostnqn) {
            int key = nextKey++;
            long addr = host.register(key, 0x3000, 1024);
            System.arraycopy(Sqe.connectData(cntlid, subnqn, hostnqn), 0, host.mem, 0x3000, 1024);
            return send(Sqe.connect(q.qid(), sqsize, 0).keyed(addr, 1024, key, false));
        }

        /** A read-direction command whose data lands at host offset {@code off}: returns the bytes. */
        byte[] readData(Sqe sqe, int off, int len) {
            int key = nextKey++;
            long addr = host.register(key, off, len);
            Cqe c = send(sqe.keyed(addr, len, key, false));
            if (c == null || c.sc() != 0) {
                throw new AssertionError("status 0x" + (c == null ? "none" : Integer.toHexString(c.sc())));
            }
            byte[] out = new byte[len];
            System.arraycopy(host.mem, off, out, 0, len);
            return out;
        }
    }

    void drain() {
        while (!loop.isEmpty() || !io.isEmpty()) {
            while (!io.isEmpty()) {
                io.poll().run();
            }
            while (!loop.isEmpty()) {
                loop.poll().run();
            }
        }
    }

    /** An admin queue with a connected, enabled controller. */
    Queue adminEnabled() {
        Queue a = new Queue(0, 31);
        Cqe c = a.connect(31, 0xffff, options.nqn());
        if (c.sc() != 0) {
            throw new AssertionError("connect 0x" + Integer.toHexString(c.sc()));
        }
        // CC: EN, IOSQES 6, IOCQES 4
        a.send(Sqe.fabrics(0x00).cdw(11, 0x14).cdw64(12, 1 | 6 << 16 | 4 << 20));
        return a;
    }

    /** An I/O queue connected to the controller of {@code admin}. */
    Queue io(Queue admin, int qid) {
        Queue q = new Queue(qid, 127);
        Cqe c = q.connect(127, admin.q.controllerId(), options.nqn());
        if (c.sc() != 0) {
            throw new AssertionError("io connect 0x" + Integer.toHexString(c.sc()));
        }
        return q;
    }

    static ByteBuffer le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }
}
