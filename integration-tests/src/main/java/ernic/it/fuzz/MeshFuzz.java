package ernic.it.fuzz;

import ernic.it.harness.GuestFleet;
import ernic.mesh.MeshNode;
import ernic.server.ErnicServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The mesh target: a real {@link ErnicServer} (ionic device) that is a mesh manager on a loopback TCP port, and a
 * hostile peer of our own. A connection mostly starts as a worker's does (REGISTER), then sends frames of every type
 * ({@code u32 length, u8 type, body}, big-endian; rdma-mesh's Wire) with fields and lengths that are right, wrong or
 * random, DATA frames with random payloads to the manager, frames a worker never sends, and length attacks (0, past
 * the largest frame, cut short). The node closing the connection is a valid outcome. The probe: a fresh
 * connection's valid REGISTER answered with REGISTER_ACK.
 */
final class MeshFuzz extends ServerTarget {
    /** The mesh protocol as docs/operations.md gives it: version 3 since a long WRITE crosses in pieces. */
    static final int MAGIC = 0x45524E4D, VERSION = 3;
    static final int REGISTER = 1, REGISTER_ACK = 2, REFUSE = 3, HELLO = 4, HELLO_ACK = 5, HEARTBEAT = 6,
            HEARTBEAT_ACK = 7, TOPOLOGY = 8, GIDS = 9, GID_UPDATE = 10, DATA = 11;
    static final long TIMEOUT_MS = 10_000;

    private int port;
    private SocketChannel ch;
    private final ByteBuffer out = ByteBuffer.allocateDirect(1 << 20);
    private final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
    private final byte[] copy = new byte[Recorder.MAX_BYTES];
    private long ackWaitNanos, ackWaitMax;
    private long connections, closedByNode, closedByUs, framesSent, bytesReceived;

    MeshFuzz(Path out) {
        super("mesh", out);
    }

    @Override
    ErnicServer.Settings settings(String socket) throws IOException {
        port = GuestFleet.freePort();
        return ErnicServer.Settings.ionic(socket).withBackend("tcp:manager:listen:" + port);
    }

    @Override
    public void start() throws IOException {
        super.start();
        if (server.mesh() == null || server.mesh().role() != MeshNode.Role.MANAGER) {
            throw new IllegalStateException("no mesh manager");
        }
        managerId = server.mesh().nodeId();
    }

    private void connect() throws IOException {
        ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        ch.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
        connections++;
    }

    private void closeClient() {
        try {
            ch.close();
        } catch (IOException e) {
            // gone anyway
        }
        ch = null;
    }

    @Override
    public void step(long index, SplittableRandom r) throws Exception {
        if (ch == null) {
            connect();
            if (r.nextInt(10) != 0) {
                out.clear();
                boolean wrong = r.nextInt(12) == 0;
                register(r, wrong);
                send(index, "REGISTER", wrong); // the REGISTER_ACK is read below, not drained
                if (!wrong) {
                    awaitAck();
                }
            }
        }
        out.clear();
        boolean closeAfter = frame(r);
        send(index, what, true);
        if (ch != null && closeAfter) {
            closedByUs++;
            closeClient();
        }
    }

    private String what;
    /** The id the manager gave this connection, or -1; the manager's own. */
    private int myId = -1, managerId;

    /** Reads until the REGISTER_ACK (our id) or the close; a registration that is never answered is a wedge. */
    private void awaitAck() throws Exception {
        myId = -1;
        ByteBuffer acc = ByteBuffer.allocate(64);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (ch != null && acc.position() < 15) {
            in.clear().limit(15 - acc.position());
            int n = read();
            if (n < 0) {
                break;
            }
            in.flip();
            acc.put(in);
            if (n == 0) {
                if (System.nanoTime() > deadline) {
                    throw new FuzzFailure("wedged: no answer to a valid REGISTER in " + TIMEOUT_MS + " ms");
                }
                LockSupport.parkNanos(20_000);
            }
        }
        if (ch != null && acc.get(4) == REGISTER_ACK) {
            myId = acc.getInt(11);
        }
        long waited = System.nanoTime() - (deadline - TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS));
        ackWaitNanos += waited;
        ackWaitMax = Math.max(ackWaitMax, waited);
    }

    /** A valid (or, with {@code wrong}, subtly wrong) REGISTER. */
    private void register(SplittableRandom r, boolean wrong) {
        int at = begin(REGISTER);
        out.putInt(wrong && r.nextBoolean() ? r.nextInt() : MAGIC).putShort((short) (wrong && r.nextBoolean()
                ? r.nextInt() : VERSION)).putInt(r.nextInt(4) == 0 ? r.nextInt(-2, 70) : -1).putLong(r.nextLong())
                .putShort((short) (wrong && r.nextBoolean() ? 0 : r.nextInt(1, 65536)));
        end(at);
    }

    private int begin(int type) {
        int at = out.position();
        out.putInt(0).put((byte) type);
        return at;
    }

    private void end(int at) {
        out.putInt(at, out.position() - at - 4);
    }

    private void random(SplittableRandom r, int n) {
        for (int i = 0; i < n; i++) {
            out.put((byte) r.nextInt());
        }
    }

    private void gid(SplittableRandom r) {
        if (r.nextBoolean()) {
            out.putLong(0xfe80_0000_0000_0000L).putLong(r.nextLong());
        } else {
            random(r, 16);
        }
    }

    /** One hostile frame into {@link #out}; true when the stream is unframed afterwards (the client then closes). */
    private boolean frame(SplittableRandom r) {
        int k = r.nextInt(100);
        int at;
        if (k < 10) {
            at = begin(r.nextBoolean() ? HEARTBEAT : HEARTBEAT_ACK);
            if (r.nextInt(8) == 0) {
                random(r, r.nextInt(1, 16));
            }
            end(at);
            what = "HEARTBEAT(_ACK)";
        } else if (k < 20) {
            // Two lists since version 2, the guest's declared GIDs and its learned ones: a count and 16-byte GIDs each.
            at = begin(GIDS);
            int n = r.nextInt(200) == 0 ? r.nextInt(0, 5000) : r.nextInt(0, 8);
            int declared = r.nextInt(8) == 0 ? r.nextInt(0x10000) : n;
            out.putShort((short) declared);
            for (int i = 0; i < Math.min(n, (out.remaining() - 64) / 16); i++) {
                gid(r);
            }
            int learned = r.nextInt(4) == 0 ? r.nextInt(0, 80) : r.nextInt(0, 3);
            if (r.nextInt(16) != 0) { // sometimes the second list is missing altogether
                out.putShort((short) learned);
                for (int i = 0; i < Math.min(learned, (out.remaining() - 64) / 16); i++) {
                    gid(r);
                }
            }
            end(at);
            what = "GIDS " + n + " (declared " + declared + "), learned " + learned;
        } else if (k < 70) {
            at = begin(DATA);
            out.putInt(r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(5) != 0 && myId >= 0 ? myId : r.nextInt(-1, 4))
                    .putInt(r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(5) != 0 ? managerId : r.nextInt(-1, 4));
            int n = r.nextInt(20) == 0 ? r.nextInt(0, 200_000) : r.nextInt(0, 128);
            random(r, Math.min(n, out.remaining() - 64));
            end(at);
            what = "DATA " + n + " bytes";
        } else if (k < 74) {
            at = begin(TOPOLOGY);
            int n = r.nextInt(0, 6);
            out.putShort((short) (r.nextInt(6) == 0 ? r.nextInt() : n));
            for (int i = 0; i < n; i++) {
                int fam = new int[] {0, 4, 6, r.nextInt(256)}[r.nextInt(4)];
                out.putInt(r.nextInt(-1, 70)).put((byte) r.nextInt(3)).put((byte) fam);
                if (fam == 4) {
                    out.put(new byte[] {127, 0, 0, 1});
                } else if (fam == 6) {
                    random(r, 16);
                    out.putInt(r.nextInt());
                }
                out.putShort((short) r.nextInt());
            }
            end(at);
            what = "TOPOLOGY " + n;
        } else if (k < 77) {
            at = begin(GID_UPDATE);
            int n = r.nextInt(0, 4);
            out.putShort((short) n);
            for (int i = 0; i < n; i++) {
                int c = r.nextInt(0, 4);
                out.putInt(r.nextInt(-1, 70)).put((byte) r.nextInt(4)).putShort((short) c);
                for (int j = 0; j < c; j++) {
                    gid(r);
                }
            }
            end(at);
            what = "GID_UPDATE " + n;
        } else if (k < 81) {
            int type = new int[] {REGISTER, REGISTER_ACK, HELLO, HELLO_ACK}[r.nextInt(4)];
            at = begin(type);
            out.putInt(r.nextInt(4) == 0 ? r.nextInt() : MAGIC).putShort((short) (r.nextInt(4) == 0 ? r.nextInt() : VERSION))
                    .putInt(r.nextInt(-1, 70));
            if (type != REGISTER_ACK) {
                out.putLong(r.nextLong());
            }
            if (type == HELLO) {
                out.putInt(r.nextInt(-1, 70));
            } else if (type == REGISTER) {
                out.putShort((short) r.nextInt());
            }
            if (r.nextInt(6) == 0) {
                out.position(out.position() - r.nextInt(1, 4));
            }
            end(at);
            what = "handshake frame " + type;
        } else if (k < 83) {
            at = begin(REFUSE);
            out.put((byte) r.nextInt(8));
            random(r, r.nextInt(0, 64));
            end(at);
            what = "REFUSE";
        } else if (k < 97) {
            at = begin(r.nextInt(3) == 0 ? r.nextInt(256) : r.nextInt(0, 13));
            random(r, r.nextInt(10) == 0 ? r.nextInt(0, 70000) : r.nextInt(0, 64));
            end(at);
            what = "random frame type " + (out.get(at + 4) & 0xff);
        } else {
            int kind = r.nextInt(4);
            int declared = switch (kind) {
                case 0 -> 0;
                case 1 -> (16 << 20) + 4096 + r.nextInt(1, 1 << 20);
                case 2 -> -r.nextInt(1, Integer.MAX_VALUE);
                default -> r.nextInt(2, 5000);
            };
            out.putInt(declared).put((byte) r.nextInt(0, 13));
            random(r, r.nextInt(0, Math.max(1, kind == 3 ? declared - 1 : 32)));
            what = "length attack " + kind + ": length field " + Integer.toUnsignedString(declared);
            return true;
        }
        return false;
    }

    private void send(long index, String label, boolean drainAfter) throws Exception {
        out.flip();
        int len = out.remaining();
        int keep = Math.min(len, copy.length);
        out.duplicate().get(copy, 0, keep);
        recorder.add(index, label, copy, len);
        framesSent++;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (out.hasRemaining() && ch != null) {
            int n;
            try {
                n = ch.write(out);
            } catch (IOException e) {
                nodeClosed();
                return;
            }
            if (n == 0) {
                drain();
                if (System.nanoTime() > deadline) {
                    throw new FuzzFailure("wedged: the mesh node read nothing for " + TIMEOUT_MS + " ms");
                }
                LockSupport.parkNanos(50_000);
            }
        }
        if (drainAfter) {
            drain();
        }
    }

    private void nodeClosed() {
        if (ch != null) {
            closedByNode++;
            closeClient();
        }
    }

    /** Reads and discards what the node sent; notices when it closed. */
    private void drain() {
        while (ch != null) {
            in.clear();
            if (read() <= 0) {
                return;
            }
        }
    }

    /** Reads into {@code in}: the bytes read, or -1 when the node closed the connection (it is closed then). */
    private int read() {
        int n;
        try {
            n = ch.read(in);
        } catch (IOException e) {
            n = -1;
        }
        if (n < 0) {
            nodeClosed();
        } else {
            bytesReceived += n;
        }
        return n;
    }

    @Override
    public void quiesce() throws Exception {
        if (ch != null) {
            closeClient();
        }
        // The probe: a fresh connection's valid REGISTER must get REGISTER_ACK.
        try (SocketChannel p = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
            out.clear();
            register(new SplittableRandom(0), false);
            out.flip();
            while (out.hasRemaining()) {
                p.write(out);
            }
            p.socket().setSoTimeout((int) TIMEOUT_MS);
            java.io.DataInputStream d = new java.io.DataInputStream(p.socket().getInputStream());
            int len = d.readInt();
            int type = d.readUnsignedByte();
            if (type != REGISTER_ACK) {
                throw new FuzzFailure("the mesh manager answered a valid REGISTER with frame type " + type
                        + " (length " + len + ")");
            }
        } catch (java.net.SocketTimeoutException e) {
            throw new FuzzFailure("wedged: no REGISTER_ACK to a valid REGISTER in " + TIMEOUT_MS + " ms", e);
        } catch (IOException e) {
            throw new FuzzFailure("the mesh manager does not answer a valid REGISTER: " + e, e);
        }
        // Every connection's cleanup has run on the device thread when a task behind it runs.
        FuzzTarget.awaitDeviceThread(server, TIMEOUT_MS);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        FuzzTarget.awaitDeviceThread(server, TIMEOUT_MS);
    }

    @Override
    public String stats() {
        return String.format("mesh: %,d frames sent, %,d connections, %,d closed by the node, %,d by us, %,d bytes "
                + "received; REGISTER_ACK waits %.1f s in all, %.1f ms at most", framesSent, connections, closedByNode,
                closedByUs, bytesReceived, ackWaitNanos / 1e9, ackWaitMax / 1e6);
    }

    @Override
    void closeClientIfOpen() {
        if (ch != null) {
            closeClient();
        }
    }
}
