package ernic.it.fuzz;

import ernic.server.ErnicServer;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.ScmRights;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static ernic.common.Endian.LE;

/**
 * The vfio target: a real {@link ErnicServer} with the ionic device on a UNIX socket, and a hostile client of our
 * own on a non-blocking socket (sendmsg with SCM_RIGHTS, as QEMU sends). Each connection starts with VERSION and,
 * usually, the guest RAM's DMA_MAP, bus mastering and MSI-X eventfds; then fuzz messages. A connection the server
 * closes is a valid outcome (the next input opens a new one); one after a framing attack the client closes itself.
 * Every {@link #SYNC_EVERY} messages a valid DEVICE_GET_INFO must be answered within {@link #TIMEOUT_MS}, or the
 * server has wedged.
 */
final class VfioFuzz extends ServerTarget {
    static final int SYNC_EVERY = 32;
    static final long TIMEOUT_MS = 10_000;

    private final Arena arena = Arena.ofShared();
    private final ScmRights scm = new ScmRights(arena);
    private final VfioMessages gen = new VfioMessages();
    /** Bytes received and not yet parsed into messages. */
    private final MemorySegment in = arena.allocate(4 << 20, 8);
    private int inLength;
    private int fd = -1;
    private int sinceSync;
    /** The probe's message id and whether its reply came. */
    private int awaitId = -1;
    private boolean awaitSeen, awaitOk;
    private final byte[] copy = new byte[Recorder.MAX_BYTES];
    private long connections, serverCloses, clientCloses, replies, errorReplies, fdsReceived, messagesSent;

    VfioFuzz(Path out) {
        super("vfio", out);
    }

    @Override
    ErnicServer.Settings settings(String socket) {
        return ErnicServer.Settings.ionic(socket);
    }

    @Override
    public void step(long index, SplittableRandom r) throws Exception {
        if (fd < 0) {
            open(r, index);
        }
        List<VfioMessages.Msg> msgs = gen.next(r);
        for (VfioMessages.Msg m : msgs) {
            if (fd < 0) {
                Fds.closeAll(m.fdArray());
                break;
            }
            send(m, index);
            if (m.closeAfter) {
                closeClient();
                clientCloses++;
            }
        }
        if (fd >= 0 && ++sinceSync >= SYNC_EVERY) {
            sync(index);
        }
    }

    /** A new connection and its prologue, drawn from the input's generator. */
    private void open(SplittableRandom r, long index) throws Exception {
        connect();
        connections++;
        inLength = 0;
        sinceSync = 0;
        send(gen.version(r), index);
        if (r.nextInt(10) < 7) {
            send(gen.mapRam(r), index);
        }
        if (r.nextInt(10) < 7) {
            send(gen.busMaster(r), index);
        }
        if (r.nextInt(10) < 5) {
            send(gen.msixEventfds(r), index);
        }
    }

    /**
     * Connects; the server takes one client at a time and its listen backlog is short, so a connect may find it
     * full (EAGAIN) while the last connection is being cleaned up: that is retried until the time-out.
     */
    private void connect() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (true) {
            fd = LibC.socketUnixStream(true);
            int rc = LibC.connectUnix(fd, socket);
            if (rc == 0) {
                inLength = 0;
                return;
            }
            closeClient();
            if (rc != -LibC.EAGAIN || System.nanoTime() > deadline) {
                throw new FuzzFailure("the server no longer accepts connections on " + socket + ": "
                        + LibC.strerror(-rc));
            }
            LockSupport.parkNanos(200_000);
        }
    }

    /** Sends one message with its fds (ours are closed afterwards: the kernel passed duplicates). */
    private void send(VfioMessages.Msg m, long index) throws Exception {
        int[] fds = m.fdArray();
        int len = m.length();
        MemorySegment bytes = MemorySegment.ofBuffer(m.b.duplicate().position(0).limit(len));
        int keep = Math.min(len, copy.length);
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, 0, copy, 0, keep);
        recorder.add(index, m.what.toString() + (fds.length > 0 ? " [" + fds.length + " fds]" : ""), copy, len);
        messagesSent++;
        try {
            long off = 0;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (off < len && fd >= 0) {
                long n = scm.send(fd, bytes.address() + off, len - off, off == 0 ? fds : new int[0],
                        LibC.MSG_DONTWAIT | LibC.MSG_NOSIGNAL);
                if (n > 0) {
                    off += n;
                } else if (n == -LibC.EAGAIN) {
                    drain();
                    if (System.nanoTime() > deadline) {
                        throw new FuzzFailure("wedged: the server read nothing for " + TIMEOUT_MS + " ms");
                    }
                    LockSupport.parkNanos(20_000);
                } else {
                    serverClosed(); // EPIPE, ECONNRESET: the server closed the connection
                }
            }
            if (fd >= 0) {
                drain();
            }
        } finally {
            Fds.closeAll(fds);
        }
    }

    private void serverClosed() {
        if (fd >= 0) {
            serverCloses++;
            closeClient();
        }
    }

    private void closeClient() {
        LibC.close(fd);
        fd = -1;
        inLength = 0;
    }

    /** Reads what the server sent (closing any fds that came), and parses it into messages. */
    private void drain() throws FuzzFailure {
        while (fd >= 0) {
            if (inLength == in.byteSize()) {
                throw new FuzzFailure("the server sent more than " + in.byteSize() + " bytes that are no message");
            }
            long n = scm.receive(fd, in.address() + inLength, in.byteSize() - inLength, LibC.MSG_DONTWAIT);
            int[] got = scm.takeReceived();
            if (got != null) {
                fdsReceived += got.length;
                ScmRights.closeAll(got);
            }
            if (n == -LibC.EAGAIN) {
                return;
            }
            if (n <= 0) {
                serverClosed();
                return;
            }
            inLength += (int) n;
            parse();
        }
    }

    /** Whole messages from the server: each must be framed as the spec says, or the server is broken. */
    private void parse() throws FuzzFailure {
        int at = 0;
        while (inLength - at >= Header.SIZE) {
            int size = LE.u32(in, at + Header.OFF_SIZE);
            if (size < Header.SIZE || size > (2 << 20)) {
                throw new FuzzFailure("the server sent a message of size " + Integer.toUnsignedString(size));
            }
            if (inLength - at < size) {
                break;
            }
            int id = in.get(LE.u16(), at) & 0xffff;
            int cmd = in.get(LE.u16(), at + Header.OFF_COMMAND) & 0xffff;
            int flags = LE.u32(in, at + Header.OFF_FLAGS);
            if ((flags & Header.TYPE_MASK) == Header.TYPE_REPLY) {
                replies++;
                boolean error = (flags & Header.FLAG_ERROR) != 0;
                if (error) {
                    errorReplies++;
                }
                if (id == awaitId && (cmd == Command.DEVICE_GET_INFO.code || cmd == Command.VERSION.code)) {
                    awaitSeen = true;
                    awaitOk = !error;
                }
            }
            at += size;
        }
        if (at > 0) {
            MemorySegment.copy(in, at, in, 0, inLength - at);
            inLength -= at;
        }
    }

    /** A valid DEVICE_GET_INFO must be answered (or the connection closed) within the time-out. */
    private void sync(long index) throws Exception {
        sinceSync = 0;
        awaitId = (int) (index & 0x7fff) | 0x8000;
        awaitSeen = false;
        send(gen.deviceInfo(awaitId), index);
        await("DEVICE_GET_INFO", false);
    }

    private void await(String what, boolean mustAnswer) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (fd >= 0 && !awaitSeen) {
            LibC.pollIn(fd, 50);
            drain();
            if (!awaitSeen && System.nanoTime() > deadline) {
                throw new FuzzFailure("wedged: no reply to a valid " + what + " in " + TIMEOUT_MS + " ms");
            }
        }
        awaitId = -1;
        if (mustAnswer && !(awaitSeen && awaitOk)) {
            throw new FuzzFailure("the server " + (awaitSeen ? "refused" : "closed the connection instead of answering")
                    + " a valid " + what + " on a fresh connection");
        }
    }

    @Override
    public void quiesce() throws Exception {
        if (fd >= 0) {
            closeClient();
        }
        awaitGone();
        // The probe: a fresh connection, VERSION and DEVICE_GET_INFO answered.
        connect();
        SplittableRandom fixed = new SplittableRandom(0);
        VfioMessages.Msg v = gen.version(fixed);
        while (v.what.toString().contains("bad")) {
            v = gen.version(fixed);
        }
        awaitId = v.b.getShort(0) & 0xffff;
        awaitSeen = false;
        send(v, -1);
        await("VERSION", true);
        awaitId = 0x7fff;
        awaitSeen = false;
        send(gen.deviceInfo(awaitId), -1);
        await("DEVICE_GET_INFO", true);
        closeClient();
        awaitGone();
    }

    /** Waits until the server has seen the client go (its cleanup ran: maps, fds, device reset). */
    private void awaitGone() throws FuzzFailure {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (server.vfioUser().connection() != null) {
            if (System.nanoTime() > deadline) {
                throw new FuzzFailure("wedged: the server did not notice a closed connection in " + TIMEOUT_MS + " ms");
            }
            LockSupport.parkNanos(1_000_000);
        }
        // The cleanup ran on the device thread; a task behind it proves the loop still runs.
        FuzzTarget.awaitDeviceThread(server, TIMEOUT_MS);
    }

    @Override
    public String stats() {
        return String.format("vfio: %,d messages sent, %,d connections, %,d closed by the server, %,d by us, "
                + "%,d replies (%,d errors), %,d fds received", messagesSent, connections, serverCloses, clientCloses,
                replies, errorReplies, fdsReceived);
    }

    @Override
    void closeClientIfOpen() {
        if (fd >= 0) {
            closeClient();
        }
    }

    @Override
    public void close() {
        super.close();
        arena.close();
    }
}
