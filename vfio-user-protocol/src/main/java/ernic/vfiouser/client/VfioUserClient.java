package ernic.vfiouser.client;

import ernic.vfiouser.server.Capabilities;
import ernic.vfiouser.server.IrqType;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.Messages.DeviceInfo;
import ernic.vfiouser.wire.Messages.DmaAccess;
import ernic.vfiouser.wire.Messages.DmaMap;
import ernic.vfiouser.wire.Messages.DmaUnmap;
import ernic.vfiouser.wire.Messages.IrqInfo;
import ernic.vfiouser.wire.Messages.RegionAccess;
import ernic.vfiouser.wire.Messages.RegionInfo;
import ernic.vfiouser.wire.Messages.SetIrqs;
import ernic.vfiouser.wire.Messages.Version;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.wire.VfioUserMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client side of vfio-user, as QEMU speaks it: connect, negotiate, share memfd-backed guest RAM,
 * read and write regions, hand over interrupt eventfds, reset. The client answers the server's
 * DMA_READ / DMA_WRITE from the {@link GuestRam} it mapped.
 *
 * <p>Threads. There is no event loop: a calling thread sends its request itself (sendmsg on the
 * blocking socket, under a send lock) and then reads the socket itself until its reply is there
 * (recvmsg), so a round trip costs the two thread hops of a plain blocking socket. Whoever reads
 * holds the <em>reader role</em>; it hands every message it reads to its owner: replies to other
 * callers (who wait for the role or for their reply) and to {@link #send} futures, and it serves
 * the server's DMA requests on the spot. When no call is reading, a background thread
 * ({@code ernic-client}) polls the socket and does the same, so futures complete, DMA requests are
 * served and a close by the server is seen while the client is idle. While calls keep coming it
 * stays off the socket (it looks every millisecond whether they stopped), so it never competes for
 * their replies.
 */
public final class VfioUserClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VfioUserClient.class);
    public static final String QEMU_CAPABILITIES = "{\"capabilities\":{\"migration\":{\"pgsize\":4096,"
            + "\"max_bitmap_size\":268435456},\"max_msg_fds\":16,\"max_data_xfer_size\":1048576,"
            + "\"pgsizes\":4096,\"max_dma_maps\":65535,\"write_multiple\":true}}";
    private static final long TIMEOUT_SECONDS = 30;
    /** The largest message accepted from the server, header included. */
    private static final int MAX_MESSAGE_SIZE = 64 << 20;
    /** How often the idle reader looks whether calls stopped using the socket. */
    private static final int IDLE_CHECK_MILLIS = 1;

    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int[] NO_FDS = VfioUserMessage.NO_FDS;
    private static final int EPIPE = 32;

    private final ClientSocket socket;
    /** Read by the reader (serving DMA_READ/WRITE), changed by callers: copy-on-write. */
    private final List<GuestRam> ram = new CopyOnWriteArrayList<>();
    private final AtomicInteger nextId = new AtomicInteger();
    private volatile Capabilities serverCapabilities = Capabilities.DEFAULTS;

    /** Who waits for the reply to each message id. */
    private final AtomicReferenceArray<Pending> pending = new AtomicReferenceArray<>(1 << 16);
    /** The blocking calls' waiting slots, one per calling thread, used again and again. */
    private final ThreadLocal<Pending> callSlot = ThreadLocal.withInitial(Pending::new);
    /** Blocking calls started: the background reader stays off the socket while this moves. */
    private final AtomicLong calls = new AtomicLong();

    private final ReentrantLock sendLock = new ReentrantLock();
    private boolean sendClosed; // under sendLock

    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    private Thread reader; // the thread with the reader role, or null; under state
    private int followers; // threads waiting in changed; under state
    private boolean readerGone; // close(): nobody reads again; under state

    private volatile boolean closed;
    private volatile IOException closeCause;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final Thread background;

    // The reader's state (only the thread with the reader role touches it).
    private MemorySegment rbuf;
    private long rstart, rend;
    /** Stream offset of rbuf[0]. */
    private long streamBase;
    /** Fds that arrived with the stream bytes [start, end). */
    private record PendingFds(long start, long end, int[] fds) {}
    private final ArrayDeque<PendingFds> pendingFds = new ArrayDeque<>();

    /** Who waits for one reply: a blocking call (the thread's slot) or a {@link #send} future. */
    private static final class Pending {
        final CompletableFuture<VfioUserMessage> future;
        Thread owner;
        boolean wantMessage;
        // Written by the reader before done is set:
        int flags;
        int errno;
        VfioUserMessage message;
        IOException failure;
        volatile boolean done;

        Pending() {
            this.future = null;
        }

        Pending(CompletableFuture<VfioUserMessage> future) {
            this.future = future;
        }

        Pending reset(boolean wantMessage) {
            this.owner = Thread.currentThread();
            this.wantMessage = wantMessage;
            this.flags = 0;
            this.errno = 0;
            this.message = null;
            this.failure = null;
            this.done = false;
            return this;
        }
    }

    private VfioUserClient(ClientSocket socket) {
        this.socket = socket;
        this.rbuf = socket.recvBuffer;
        this.background = Thread.ofPlatform().daemon().name("ernic-client").unstarted(this::idleReader);
    }

    /** Connects to the server at {@code path}. */
    public static VfioUserClient connect(String path) throws IOException {
        VfioUserClient c = new VfioUserClient(ClientSocket.connect(path));
        c.background.start();
        return c;
    }

    public boolean isConnected() {
        return !closed;
    }

    /** Waits up to {@code millis} for the server to close the connection; true when it did. */
    public boolean awaitClosed(long millis) {
        try {
            return closedLatch.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return closed;
        }
    }

    public Capabilities serverCapabilities() {
        return serverCapabilities;
    }

    /** The allocator for payloads handed to {@link #send} and {@link #call}. */
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    // ---- sending -------------------------------------------------------------------------------

    private int newId() {
        return nextId.getAndIncrement() & 0xffff;
    }

    /**
     * Sends one message: header, an optional 16-byte head ({@code a}, {@code b} little-endian), then
     * {@code dataLength} bytes of {@code data}; the fds go with the first byte. Returns 0 or -errno.
     */
    private long sendMessage(int id, int cmd, int flags, int errno, boolean head, long a, long b, MemorySegment data,
            long dataLength, int[] fds) {
        long size = Header.SIZE + (head ? 16 : 0) + dataLength;
        if (size > 0xffff_ffffL) {
            return -LibC.EMSGSIZE;
        }
        sendLock.lock();
        try {
            if (sendClosed) {
                return -EPIPE;
            }
            MemorySegment buf = socket.sendBuffer;
            buf.set(U16, Header.OFF_MSG_ID, (short) id);
            buf.set(U16, Header.OFF_COMMAND, (short) cmd);
            buf.set(U32, Header.OFF_SIZE, (int) size);
            buf.set(U32, Header.OFF_FLAGS, flags);
            buf.set(U32, Header.OFF_ERRNO, errno);
            long pos = Header.SIZE;
            if (head) {
                buf.set(U64, pos, a);
                buf.set(U64, pos + 8, b);
                pos += 16;
            }
            return sendData(pos, data, dataLength, fds);
        } finally {
            sendLock.unlock();
        }
    }

    /** With the send lock: sends sendBuffer[0, pos) and then {@code data}, in buffer-sized pieces. */
    private long sendData(long pos, MemorySegment data, long dataLength, int[] fds) {
        long done = 0;
        do {
            long n = Math.min(dataLength - done, ClientSocket.BUFFER_SIZE - pos);
            if (n > 0) {
                MemorySegment.copy(data, done, socket.sendBuffer, pos, n);
            }
            long rc = socket.sendAll(pos + n, fds);
            if (rc < 0) {
                return rc;
            }
            fds = NO_FDS;
            done += n;
            pos = 0;
        } while (done < dataLength);
        return 0;
    }

    private static MemorySegment segmentOf(ByteBuf payload) {
        return payload == null || !payload.isReadable() ? MemorySegment.NULL : MemorySegment.ofBuffer(payload.nioBuffer());
    }

    private IOException sendFailure(long rc, Object what) {
        IOException cause = closeCause;
        if (cause != null) {
            return new IOException("cannot send " + what + ": " + cause.getMessage(), cause);
        }
        return new IOException("cannot send " + what + ": " + LibC.strerror((int) -rc));
    }

    /** Sends a command; the future completes with the reply (release it), or never with NO_REPLY. */
    public CompletableFuture<VfioUserMessage> send(Command cmd, ByteBuf payload, boolean noReply, int... fds) {
        int id = newId();
        CompletableFuture<VfioUserMessage> f = new CompletableFuture<>();
        Pending p = noReply ? null : new Pending(f);
        if (p != null) {
            pending.set(id, p);
        }
        long rc;
        try {
            MemorySegment data = segmentOf(payload);
            rc = sendMessage(id, cmd.code, Header.TYPE_COMMAND | (noReply ? Header.FLAG_NO_REPLY : 0), 0, false, 0, 0,
                    data, data.byteSize(), fds);
        } finally {
            if (payload != null) {
                payload.release();
            }
        }
        if (rc < 0) {
            if (p != null) {
                pending.compareAndSet(id, p, null);
            }
            f.completeExceptionally(sendFailure(rc, cmd));
        } else if (p != null && closed) {
            // The connection went while we sent: nobody will read the reply.
            failPending(id, p);
        }
        return f;
    }

    /** Sends arbitrary bytes (for protocol tests); {@code fds} go with the first byte and stay the caller's. */
    public void sendRaw(ByteBuf bytes, int... fds) {
        try {
            MemorySegment data = segmentOf(bytes);
            sendLock.lock();
            try {
                if (!sendClosed) {
                    sendData(0, data, data.byteSize(), fds);
                }
            } finally {
                sendLock.unlock();
            }
        } finally {
            bytes.release();
        }
    }

    /** Sends a command and waits for its reply; an error reply becomes a {@link VfioUserException}. */
    public VfioUserMessage call(Command cmd, ByteBuf payload, int... fds) throws IOException {
        Pending p = callSlot.get().reset(true);
        int id = newId();
        long rc;
        pending.set(id, p);
        calls.incrementAndGet();
        try {
            MemorySegment data = segmentOf(payload);
            rc = sendMessage(id, cmd.code, Header.TYPE_COMMAND, 0, false, 0, 0, data, data.byteSize(), fds);
        } finally {
            if (payload != null) {
                payload.release();
            }
        }
        awaitReply(id, p, rc, cmd);
        VfioUserMessage r = p.message;
        p.message = null;
        if (r.isError()) {
            int errno = r.errno();
            r.release();
            throw new VfioUserException(cmd.name(), errno);
        }
        return r;
    }

    /** As {@link #call}, for a reply whose payload nobody reads: nothing is allocated for it. */
    private void callNoPayload(Command cmd, ByteBuf payload, int... fds) throws IOException {
        Pending p = callSlot.get().reset(false);
        int id = newId();
        long rc;
        pending.set(id, p);
        calls.incrementAndGet();
        try {
            MemorySegment data = segmentOf(payload);
            rc = sendMessage(id, cmd.code, Header.TYPE_COMMAND, 0, false, 0, 0, data, data.byteSize(), fds);
        } finally {
            if (payload != null) {
                payload.release();
            }
        }
        awaitReply(id, p, rc, cmd);
        if ((p.flags & Header.FLAG_ERROR) != 0) {
            throw new VfioUserException(cmd.name(), p.errno);
        }
    }

    /**
     * Waits for the reply to {@code id} after a send that returned {@code sendRc}: reads the socket
     * itself when nobody else does, else waits for the reader to hand the reply over or to leave.
     */
    private void awaitReply(int id, Pending p, long sendRc, Object what) throws IOException {
        if (sendRc < 0) {
            abandon(id, p);
            throw sendFailure(sendRc, what);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        Thread me = Thread.currentThread();
        try {
            while (!p.done) {
                boolean mine = false;
                state.lock();
                try {
                    while (!p.done && reader != null && !closed) {
                        if (reader == me) {
                            throw new IllegalStateException("a blocking call of the client from a thread that reads for it"
                                    + " (a callback of a send() future): it would wait for itself");
                        }
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            break;
                        }
                        followers++;
                        try {
                            changed.awaitNanos(left);
                        } finally {
                            followers--;
                        }
                    }
                    if (!p.done && reader == null && !closed && !readerGone) {
                        reader = me;
                        mine = true;
                    }
                } finally {
                    state.unlock();
                }
                if (mine) {
                    try {
                        while (!p.done && !closed && System.nanoTime() - deadline < 0) {
                            readOnce(false);
                        }
                    } finally {
                        releaseReader();
                    }
                }
                if (p.done) {
                    break;
                }
                if (closed) {
                    failPending(id, p);
                    continue; // done now, with the failure
                }
                if (System.nanoTime() - deadline >= 0) {
                    abandon(id, p);
                    throw new IOException("no reply to " + what + " within " + TIMEOUT_SECONDS + " s");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandon(id, p);
            throw new IOException("interrupted waiting for " + what);
        }
        if (p.failure != null) {
            throw new IOException(what + " failed: " + p.failure.getMessage(), p.failure);
        }
    }

    /** Gives up waiting: the reply, if it still comes, is dropped; this thread's slot is not used again. */
    private void abandon(int id, Pending p) {
        pending.compareAndSet(id, p, null);
        callSlot.remove();
    }

    /** Fails {@code p} with the close cause if it is still registered under {@code id}. */
    private void failPending(int id, Pending p) {
        if (pending.compareAndSet(id, p, null)) {
            fail(p, closeCause != null ? closeCause : new IOException("connection closed"));
        }
    }

    private void releaseReader() {
        state.lock();
        try {
            reader = null;
            if (followers > 0) {
                changed.signalAll();
            }
        } finally {
            state.unlock();
        }
    }

    private boolean tryTakeReader() {
        state.lock();
        try {
            if (reader != null || readerGone || closed) {
                return false;
            }
            reader = Thread.currentThread();
            return true;
        } finally {
            state.unlock();
        }
    }

    // ---- reading (with the reader role) --------------------------------------------------------

    /**
     * One recvmsg and every whole message it completes. Blocking (at most the socket's one-second
     * receive time-out) unless {@code dontWait}. Returns false when nothing could be read.
     */
    private boolean readOnce(boolean dontWait) {
        long cap = rbuf.byteSize();
        if (rend == cap) {
            compact();
            cap = rbuf.byteSize();
        }
        long n = socket.recv(rbuf, rend, cap - rend, dontWait);
        int[] fds = socket.receivedFds;
        socket.receivedFds = null;
        if (n == -LibC.EAGAIN || n == -LibC.EINTR) {
            closeFds(fds);
            return false;
        }
        if (n <= 0) {
            closeFds(fds);
            connectionLost(n == 0 ? new IOException("server closed the connection")
                    : n == -LibC.EMSGSIZE ? new IOException("control message truncated (MSG_CTRUNC)")
                    : new IOException("recvmsg: " + LibC.strerror((int) -n)));
            return false;
        }
        if (fds != null) {
            pendingFds.add(new PendingFds(streamBase + rend, streamBase + rend + n, fds));
        }
        rend += n;
        frame();
        return true;
    }

    /** Cuts the whole messages out of rbuf and dispatches them, as MessageFramer does for the server. */
    private void frame() {
        while (rend - rstart >= Header.SIZE && !closed) {
            long size = Integer.toUnsignedLong(rbuf.get(U32, rstart + Header.OFF_SIZE));
            if (size < Header.SIZE || size > MAX_MESSAGE_SIZE) {
                connectionLost(new IOException("message size " + size + " from the server outside [16, "
                        + MAX_MESSAGE_SIZE + "]"));
                return;
            }
            if (rend - rstart < size) {
                if (size > rbuf.byteSize() - rstart) {
                    makeRoom(size);
                }
                return;
            }
            int[] fds = claimFds(streamBase + rstart, streamBase + rstart + size);
            long at = rstart;
            rstart += size;
            dispatch(at, (int) size, fds);
        }
        if (rstart == rend) {
            streamBase += rstart;
            rstart = rend = 0;
            if (rbuf != socket.recvBuffer) {
                rbuf = socket.recvBuffer; // back from a big message to the usual buffer
            }
        }
    }

    /** Moves the unread bytes to the start of the buffer. */
    private void compact() {
        if (rstart > 0) {
            MemorySegment.copy(rbuf, rstart, rbuf, 0, rend - rstart);
            streamBase += rstart;
            rend -= rstart;
            rstart = 0;
        }
    }

    /** Makes room for a message of {@code size} bytes at the start of the buffer. */
    private void makeRoom(long size) {
        compact();
        if (size > rbuf.byteSize()) {
            MemorySegment bigger = Arena.ofAuto().allocate(size, 64);
            MemorySegment.copy(rbuf, 0, bigger, 0, rend);
            rbuf = bigger;
        }
    }

    /** The fds of the read in which the message [start, end) is the last to start; closes unclaimable ones. */
    private int[] claimFds(long start, long end) {
        while (!pendingFds.isEmpty()) {
            PendingFds p = pendingFds.peek();
            if (p.end <= start) {
                pendingFds.poll();
                LOG.warn("closing {} fd(s) from the server that came with no message of their own", p.fds.length);
                closeFds(p.fds);
            } else if (p.start <= start && end >= p.end) {
                pendingFds.poll();
                return p.fds;
            } else {
                return NO_FDS;
            }
        }
        return NO_FDS;
    }

    private void dispatch(long at, int size, int[] fds) {
        int id = Short.toUnsignedInt(rbuf.get(U16, at + Header.OFF_MSG_ID));
        int cmd = Short.toUnsignedInt(rbuf.get(U16, at + Header.OFF_COMMAND));
        int flags = rbuf.get(U32, at + Header.OFF_FLAGS);
        int errno = rbuf.get(U32, at + Header.OFF_ERRNO);
        if ((flags & Header.TYPE_MASK) != Header.TYPE_REPLY) {
            closeFds(fds); // the server sends none with a command
            serve(id, cmd, at + Header.SIZE, size - Header.SIZE);
            return;
        }
        Pending p = pending.getAndSet(id, null);
        if (p == null) {
            closeFds(fds); // a reply nobody waits for (a late one, or to a raw message)
            return;
        }
        if (p.future != null) {
            p.future.complete(message(id, cmd, flags, errno, at, size, fds));
            return;
        }
        p.flags = flags;
        p.errno = errno;
        if (p.wantMessage) {
            p.message = message(id, cmd, flags, errno, at, size, fds);
        } else {
            closeFds(fds);
        }
        finish(p);
    }

    private VfioUserMessage message(int id, int cmd, int flags, int errno, long at, int size, int[] fds) {
        int length = size - Header.SIZE;
        ByteBuf payload = ByteBufAllocator.DEFAULT.buffer(length);
        payload.writeBytes(rbuf.asSlice(at + Header.SIZE, length).asByteBuffer());
        return new VfioUserMessage(id, cmd, flags, errno, payload, fds);
    }

    /** Marks a blocking call's reply there and wakes its thread when that is not us. */
    private void finish(Pending p) {
        if (p.owner == Thread.currentThread()) {
            p.done = true;
            return;
        }
        state.lock();
        try {
            p.done = true;
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    private void fail(Pending p, IOException cause) {
        if (p.future != null) {
            p.future.completeExceptionally(cause);
            return;
        }
        p.failure = cause;
        finish(p);
    }

    /** The server's DMA_READ / DMA_WRITE, served from the client's guest RAM; ENOSYS for anything else. */
    private void serve(int id, int cmd, long at, int length) {
        Command c = Command.of(cmd);
        int replyFlags = Header.TYPE_REPLY;
        long rc;
        if (c != Command.DMA_READ && c != Command.DMA_WRITE) {
            rc = sendError(id, cmd, LibC.ENOSYS);
        } else if (length < DmaAccess.SIZE) {
            rc = sendError(id, cmd, LibC.EINVAL);
        } else {
            long address = rbuf.get(U64, at);
            long count = rbuf.get(U64, at + 8);
            MemorySegment mem = find(address, count);
            if (mem == null) {
                rc = sendError(id, cmd, LibC.EFAULT);
            } else if (c == Command.DMA_READ) {
                rc = sendMessage(id, cmd, replyFlags, 0, true, address, count, mem, count, NO_FDS);
            } else if (length - DmaAccess.SIZE != count) {
                rc = sendError(id, cmd, LibC.EINVAL);
            } else {
                MemorySegment.copy(rbuf, at + DmaAccess.SIZE, mem, 0, count);
                rc = sendMessage(id, cmd, replyFlags, 0, true, address, count, MemorySegment.NULL, 0, NO_FDS);
            }
        }
        if (rc < 0) {
            LOG.debug("cannot answer the server's {}: {}", c, LibC.strerror((int) -rc));
        }
    }

    private long sendError(int id, int cmd, int errno) {
        return sendMessage(id, cmd, Header.TYPE_REPLY | Header.FLAG_ERROR, errno, false, 0, 0, MemorySegment.NULL, 0,
                NO_FDS);
    }

    private MemorySegment find(long addr, long count) {
        for (GuestRam r : ram) {
            if (addr >= r.iova() && count >= 0 && count <= r.size() && addr - r.iova() <= r.size() - count) {
                return r.at(addr, count);
            }
        }
        return null;
    }

    private static void closeFds(int[] fds) {
        if (fds != null) {
            for (int fd : fds) {
                LibC.close(fd);
            }
        }
    }

    /** The connection is gone: every waiter fails, every blocked thread wakes. */
    private void connectionLost(IOException cause) {
        synchronized (closedLatch) {
            if (closed) {
                return;
            }
            closeCause = cause;
            closed = true;
        }
        socket.shutdown();
        for (int id = 0; id < pending.length(); id++) {
            Pending p = pending.getAndSet(id, null);
            if (p != null) {
                fail(p, cause);
            }
        }
        state.lock();
        try {
            changed.signalAll();
        } finally {
            state.unlock();
        }
        closedLatch.countDown();
    }

    // ---- the background reader -----------------------------------------------------------------

    /**
     * Reads for the client while no call does: polls the socket, and drains it with the reader role.
     * While blocking calls come and go it stays off the socket and looks again every millisecond.
     */
    private void idleReader() {
        boolean callsActive = false;
        long seen = calls.get();
        try {
            while (!closed) {
                if (callsActive) {
                    socket.poll(false, IDLE_CHECK_MILLIS);
                    long now = calls.get();
                    if (now != seen || readerBusy()) {
                        seen = now;
                        continue;
                    }
                    callsActive = false;
                }
                seen = calls.get();
                int ready = socket.poll(true, -1);
                if (closed || (ready & ClientSocket.WOKEN) != 0) {
                    break;
                }
                if ((ready & ClientSocket.SOCKET_READY) == 0) {
                    continue;
                }
                if (!tryTakeReader()) {
                    // A call reads: leave the socket to it until calls stop.
                    callsActive = true;
                    seen = calls.get();
                    continue;
                }
                try {
                    while (!closed && readOnce(true)) {
                        // drain what is there
                    }
                } finally {
                    releaseReader();
                }
                if (calls.get() != seen) {
                    // A call started while we polled (we may have read its reply for it): leave the socket
                    // to the calls, so their callers read their replies themselves.
                    callsActive = true;
                    seen = calls.get();
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("vfio-user client reader failed", e);
            connectionLost(new IOException("client reader failed: " + e, e));
        }
    }

    private boolean readerBusy() {
        state.lock();
        try {
            return reader != null;
        } finally {
            state.unlock();
        }
    }

    @Override
    public void close() {
        connectionLost(new IOException("client closed"));
        boolean interrupted = false;
        while (background.isAlive()) {
            try {
                background.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        state.lock();
        try {
            if (readerGone) {
                return;
            }
            while (reader != null) {
                followers++;
                try {
                    changed.awaitUninterruptibly();
                } finally {
                    followers--;
                }
            }
            readerGone = true;
        } finally {
            state.unlock();
        }
        sendLock.lock();
        try {
            sendClosed = true;
        } finally {
            sendLock.unlock();
        }
        while (!pendingFds.isEmpty()) {
            closeFds(pendingFds.poll().fds);
        }
        socket.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the commands --------------------------------------------------------------------------

    /** VERSION with {@code json} as our capabilities; returns the server's. */
    public Capabilities negotiate(String json) throws IOException {
        VfioUserMessage r = call(Command.VERSION, new Version(0, 0, json).encode(alloc()));
        try {
            Version v = Version.decode(r.payload());
            serverCapabilities = Capabilities.parse(v.json());
            return serverCapabilities;
        } catch (ProtocolException e) {
            throw new IOException("bad VERSION reply: " + e.getMessage());
        } finally {
            r.release();
        }
    }

    /** VERSION with QEMU's own proposal. */
    public Capabilities negotiate() throws IOException {
        return negotiate(QEMU_CAPABILITIES);
    }

    /** Shares {@code r} with the server (DMA_MAP with its memfd), read-write. */
    public void map(GuestRam r) throws IOException {
        callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()), r.fd());
        ram.add(r);
    }

    /** DMA_MAP without an fd: the server must reach {@code r} by DMA_READ / DMA_WRITE. */
    public void mapWithoutFd(GuestRam r) throws IOException {
        callNoPayload(Command.DMA_MAP, new DmaMap(DmaMap.SIZE, DmaMap.FLAG_READ | DmaMap.FLAG_WRITE, 0, r.iova(),
                r.size()).encode(alloc()));
        ram.add(r);
    }

    public void dmaMap(DmaMap req, int... fds) throws IOException {
        callNoPayload(Command.DMA_MAP, req.encode(alloc()), fds);
    }

    public DmaUnmap dmaUnmap(long iova, long size, int flags) throws IOException {
        VfioUserMessage r = call(Command.DMA_UNMAP, new DmaUnmap(DmaUnmap.SIZE, flags, iova, size).encode(alloc()));
        try {
            ram.removeIf(g -> (flags & DmaUnmap.FLAG_ALL) != 0 || g.iova() >= iova && g.iova() + g.size() <= iova + size);
            return DmaUnmap.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    public DeviceInfo deviceInfo() throws IOException {
        VfioUserMessage r = call(Command.DEVICE_GET_INFO, new DeviceInfo(DeviceInfo.SIZE, 0, 0, 0).encode(alloc()));
        try {
            return DeviceInfo.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    /** A region's info with its capabilities, asking again with more room when the server says so. */
    public RegionInfoReply regionInfo(int index) throws IOException {
        int argsz = RegionInfo.SIZE;
        for (int attempt = 0; attempt < 2; attempt++) {
            ByteBuf req = new RegionInfo(argsz, 0, index, 0, 0, 0, List.of()).encode(alloc());
            req.writeZero(argsz - RegionInfo.SIZE);
            VfioUserMessage r = call(Command.DEVICE_GET_REGION_INFO, req);
            try {
                RegionInfo info = RegionInfo.decode(r.payload());
                int[] fds = r.takeFds();
                if (info.argsz() > argsz && attempt == 0) {
                    for (int fd : fds) {
                        LibC.close(fd);
                    }
                    argsz = info.argsz();
                    continue;
                }
                return new RegionInfoReply(info, fds.length > 0 ? fds[0] : -1);
            } catch (ProtocolException e) {
                throw new IOException(e.getMessage());
            } finally {
                r.release();
            }
        }
        throw new IOException("region info of " + index + " kept growing");
    }

    /** A region's info; {@code fd} (or -1) is the caller's to close. */
    public record RegionInfoReply(RegionInfo info, int fd) {}

    public IrqInfo irqInfo(IrqType type) throws IOException {
        VfioUserMessage r = call(Command.DEVICE_GET_IRQ_INFO, new IrqInfo(IrqInfo.SIZE, 0, type.index(), 0)
                .encode(alloc()));
        try {
            return IrqInfo.decode(r.payload());
        } catch (ProtocolException e) {
            throw new IOException(e.getMessage());
        } finally {
            r.release();
        }
    }

    /**
     * Gives the server eventfds for vectors {@code start ..} of {@code type}, in chunks of the
     * server's max_msg_fds, as QEMU does.
     */
    public void setIrqEventfds(IrqType type, int start, int... eventfds) throws IOException {
        int chunk = Math.max(1, serverCapabilities.maxMsgFds());
        for (int done = 0; done < eventfds.length; done += chunk) {
            int[] part = java.util.Arrays.copyOfRange(eventfds, done, Math.min(eventfds.length, done + chunk));
            setIrqs(new SetIrqs(SetIrqs.SIZE, SetIrqs.DATA_EVENTFD | SetIrqs.ACTION_TRIGGER, type.index(),
                    start + done, part.length, null), part);
        }
    }

    public void setIrqs(SetIrqs req, int... fds) throws IOException {
        callNoPayload(Command.DEVICE_SET_IRQS, req.encode(alloc()), fds);
    }

    public byte[] regionRead(int region, long offset, int count) throws IOException {
        VfioUserMessage r = call(Command.REGION_READ, new RegionAccess(offset, region, count).encodeHead(alloc(), 0));
        try {
            ByteBuf p = r.payload();
            if (p.readableBytes() != RegionAccess.SIZE + count) {
                throw new IOException("REGION_READ reply of " + p.readableBytes() + " bytes for " + count);
            }
            byte[] data = new byte[count];
            p.getBytes(p.readerIndex() + RegionAccess.SIZE, data);
            return data;
        } finally {
            r.release();
        }
    }

    public long regionReadLong(int region, long offset, int width) throws IOException {
        byte[] b = regionRead(region, offset, width);
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = v << 8 | (b[i] & 0xff);
        }
        return v;
    }

    public void regionWrite(int region, long offset, byte[] data) throws IOException {
        callNoPayload(Command.REGION_WRITE, new RegionAccess(offset, region, data.length)
                .encodeHead(alloc(), data.length).writeBytes(data));
    }

    /**
     * A write of {@code width} bytes of {@code value} (little-endian), waiting for the reply. This is
     * the doorbell path: the message is built in the socket's buffer and the reply is read by this
     * thread, with nothing allocated.
     */
    public void regionWriteLong(int region, long offset, int width, long value) throws IOException {
        if (width < 1 || width > 8) {
            regionWrite(region, offset, littleEndian(value, width));
            return;
        }
        Pending p = callSlot.get().reset(false);
        int id = newId();
        pending.set(id, p);
        calls.incrementAndGet();
        long rc = sendRegionWrite(id, Header.TYPE_COMMAND, region, offset, width, value);
        awaitReply(id, p, rc, Command.REGION_WRITE);
        if ((p.flags & Header.FLAG_ERROR) != 0) {
            throw new VfioUserException(Command.REGION_WRITE.name(), p.errno);
        }
    }

    /** A posted write (NO_REPLY), as QEMU sends most BAR writes. */
    public void regionWritePosted(int region, long offset, int width, long value) {
        int id = newId();
        if (width < 1 || width > 8) {
            send(Command.REGION_WRITE, new RegionAccess(offset, region, width).encodeHead(alloc(), width)
                    .writeBytes(littleEndian(value, width)), true);
            return;
        }
        sendRegionWrite(id, Header.TYPE_COMMAND | Header.FLAG_NO_REPLY, region, offset, width, value);
    }

    /** A REGION_WRITE of at most 8 bytes, straight into the send buffer. Returns 0 or -errno. */
    private long sendRegionWrite(int id, int flags, int region, long offset, int width, long value) {
        sendLock.lock();
        try {
            if (sendClosed) {
                return -EPIPE;
            }
            MemorySegment buf = socket.sendBuffer;
            int size = Header.SIZE + RegionAccess.SIZE + width;
            buf.set(U16, Header.OFF_MSG_ID, (short) id);
            buf.set(U16, Header.OFF_COMMAND, (short) Command.REGION_WRITE.code);
            buf.set(U32, Header.OFF_SIZE, size);
            buf.set(U32, Header.OFF_FLAGS, flags);
            buf.set(U32, Header.OFF_ERRNO, 0);
            buf.set(U64, Header.SIZE, offset);
            buf.set(U32, Header.SIZE + 8, region);
            buf.set(U32, Header.SIZE + 12, width);
            buf.set(U64, Header.SIZE + RegionAccess.SIZE, value); // bytes past width are not sent
            return socket.sendAll(size, NO_FDS);
        } finally {
            sendLock.unlock();
        }
    }

    private static byte[] littleEndian(long value, int width) {
        byte[] b = new byte[width];
        for (int i = 0; i < width; i++) {
            b[i] = (byte) (value >>> (8 * i));
        }
        return b;
    }

    public void reset() throws IOException {
        callNoPayload(Command.DEVICE_RESET, null);
    }

}
