package ernic.vfiouser.client;

import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.ScmRights;
import ernic.vfiouser.wire.Command;
import ernic.vfiouser.wire.Header;
import ernic.vfiouser.wire.MessageStream;
import ernic.vfiouser.wire.ProtocolException;
import ernic.vfiouser.wire.VfioUserMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import static ernic.common.Endian.LE;

/**
 * The client's message exchange over its {@link ClientSocket}: builds headers, numbers messages,
 * matches replies to their callers, and cuts the inbound stream with {@link MessageStream}. The
 * typed commands are {@link VfioUserClient}'s; commands from the server (DMA_READ / DMA_WRITE) go to
 * its {@link ServerRequests}.
 *
 * <p>Threads. There is no event loop: a calling thread sends its request itself (sendmsg on the
 * blocking socket, under a send lock) and then reads the socket itself until its reply is there
 * (recvmsg), so a round trip costs the two thread hops of a plain blocking socket. Whoever reads
 * holds the <em>reader role</em>; it hands every message it reads to its owner: replies to other
 * callers (who wait for the role or for their reply) and to {@link #send} futures, and it serves
 * the server's requests on the spot. When no call is reading, a background thread
 * ({@code ernic-client}) polls the socket and does the same, so futures complete, requests are
 * served and a close by the server is seen while the client is idle. While calls keep coming it
 * stays off the socket (it looks every millisecond whether they stopped), so it never competes for
 * their replies.
 */
final class ClientExchange implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClientExchange.class);
    private static final long TIMEOUT_SECONDS = 30;
    /** The largest message accepted from the server, header included. */
    private static final int MAX_MESSAGE_SIZE = 64 << 20;
    /** How often the idle reader looks whether calls stopped using the socket. */
    private static final int IDLE_CHECK_MILLIS = 1;

    private static final int[] NO_FDS = VfioUserMessage.NO_FDS;
    private static final int EPIPE = 32;

    /** Commands the server sends the client. */
    interface ServerRequests {
        /**
         * Serves command {@code cmd} #{@code id}, whose payload is {@code length} bytes of {@code buf}
         * at {@code at} (valid during the call only), and answers it with {@code from}'s
         * {@link #sendMessage}. Called by the thread with the reader role.
         */
        void request(ClientExchange from, int id, int cmd, MemorySegment buf, long at, int length);
    }

    private final ClientSocket socket;
    private final ServerRequests requests;
    private final AtomicInteger nextId = new AtomicInteger();

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
    /** rbuf[rstart, rend) holds the bytes received and not yet cut. */
    private long rstart, rend;
    private final MessageStream stream = new MessageStream(MAX_MESSAGE_SIZE);
    private final MessageStream.Buffered buffered = new MessageStream.Buffered() {
        @Override
        public long sizeField() {
            return Integer.toUnsignedLong(LE.u32(rbuf, rstart + Header.OFF_SIZE));
        }

        @Override
        public boolean message(int size, int[] fds) {
            long at = rstart;
            rstart += size;
            dispatch(at, size, fds);
            return !closed;
        }
    };

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

    private ClientExchange(ClientSocket socket, ServerRequests requests) {
        this.socket = socket;
        this.requests = requests;
        this.rbuf = socket.recvBuffer;
        this.background = Thread.ofPlatform().daemon().name("ernic-client").unstarted(this::idleReader);
    }

    /** Connects to the server at {@code path}; {@code requests} serves what the server asks. */
    static ClientExchange connect(String path, ServerRequests requests) throws IOException {
        ClientExchange c = new ClientExchange(ClientSocket.connect(path), requests);
        c.background.start();
        return c;
    }

    boolean isConnected() {
        return !closed;
    }

    /** Waits up to {@code millis} for the server to close the connection; true when it did. */
    boolean awaitClosed(long millis) {
        try {
            return closedLatch.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return closed;
        }
    }

    // ---- sending -------------------------------------------------------------------------------

    int newId() {
        return nextId.getAndIncrement() & 0xffff;
    }

    /**
     * Sends one message: header, an optional 16-byte head ({@code a}, {@code b} little-endian), then
     * {@code dataLength} bytes of {@code data}; the fds go with the first byte. Returns 0 or -errno.
     */
    long sendMessage(int id, int cmd, int flags, int errno, boolean head, long a, long b, MemorySegment data,
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
            buf.set(LE.u16(), Header.OFF_MSG_ID, (short) id);
            buf.set(LE.u16(), Header.OFF_COMMAND, (short) cmd);
            LE.put32(buf, Header.OFF_SIZE, (int) size);
            LE.put32(buf, Header.OFF_FLAGS, flags);
            LE.put32(buf, Header.OFF_ERRNO, errno);
            long pos = Header.SIZE;
            if (head) {
                LE.put64(buf, pos, a);
                LE.put64(buf, pos + 8, b);
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

    /** A blocking call starts: its slot waits under a new id, and the background reader keeps off. */
    private int startCall(Pending p) {
        int id = newId();
        pending.set(id, p);
        calls.incrementAndGet();
        return id;
    }

    /** Sends command #{@code id} with {@code payload} (released here). Returns 0 or -errno. */
    private long sendCommand(int id, Command cmd, int flags, ByteBuf payload, int[] fds) {
        try {
            MemorySegment data = segmentOf(payload);
            return sendMessage(id, cmd.code, flags, 0, false, 0, 0, data, data.byteSize(), fds);
        } finally {
            if (payload != null) {
                payload.release();
            }
        }
    }

    /** Sends a command; the future completes with the reply (release it), or never with NO_REPLY. */
    CompletableFuture<VfioUserMessage> send(Command cmd, ByteBuf payload, boolean noReply, int... fds) {
        int id = newId();
        CompletableFuture<VfioUserMessage> f = new CompletableFuture<>();
        Pending p = noReply ? null : new Pending(f);
        if (p != null) {
            pending.set(id, p);
        }
        long rc = sendCommand(id, cmd, Header.TYPE_COMMAND | (noReply ? Header.FLAG_NO_REPLY : 0), payload, fds);
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
    void sendRaw(ByteBuf bytes, int... fds) {
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
    VfioUserMessage call(Command cmd, ByteBuf payload, int... fds) throws IOException {
        Pending p = callSlot.get().reset(true);
        int id = startCall(p);
        awaitReply(id, p, sendCommand(id, cmd, Header.TYPE_COMMAND, payload, fds), cmd);
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
    void callNoPayload(Command cmd, ByteBuf payload, int... fds) throws IOException {
        Pending p = callSlot.get().reset(false);
        int id = startCall(p);
        awaitReply(id, p, sendCommand(id, cmd, Header.TYPE_COMMAND, payload, fds), cmd);
        if ((p.flags & Header.FLAG_ERROR) != 0) {
            throw new VfioUserException(cmd.name(), p.errno);
        }
    }

    /**
     * A command of header, 16-byte head ({@code a}, {@code b} little-endian) and the {@code width}
     * (0-8) low bytes of {@code value}, built in the send buffer, waiting for its reply: this thread
     * reads the reply and nothing is allocated (the doorbell path).
     */
    void callInline(Command cmd, long a, long b, long value, int width) throws IOException {
        Pending p = callSlot.get().reset(false);
        int id = startCall(p);
        long rc = sendInline(id, cmd, Header.TYPE_COMMAND, a, b, value, width);
        awaitReply(id, p, rc, cmd);
        if ((p.flags & Header.FLAG_ERROR) != 0) {
            throw new VfioUserException(cmd.name(), p.errno);
        }
    }

    /** As {@link #callInline}, posted (NO_REPLY): nobody waits. */
    void postInline(Command cmd, long a, long b, long value, int width) {
        sendInline(newId(), cmd, Header.TYPE_COMMAND | Header.FLAG_NO_REPLY, a, b, value, width);
    }

    /** Header, head and inline bytes straight into the send buffer. Returns 0 or -errno. */
    private long sendInline(int id, Command cmd, int flags, long a, long b, long value, int width) {
        if (width < 0 || width > 8) {
            throw new IllegalArgumentException("inline width " + width);
        }
        sendLock.lock();
        try {
            if (sendClosed) {
                return -EPIPE;
            }
            MemorySegment buf = socket.sendBuffer;
            int size = Header.SIZE + 16 + width;
            buf.set(LE.u16(), Header.OFF_MSG_ID, (short) id);
            buf.set(LE.u16(), Header.OFF_COMMAND, (short) cmd.code);
            LE.put32(buf, Header.OFF_SIZE, size);
            LE.put32(buf, Header.OFF_FLAGS, flags);
            LE.put32(buf, Header.OFF_ERRNO, 0);
            LE.put64(buf, Header.SIZE, a);
            LE.put64(buf, Header.SIZE + 8, b);
            LE.put64(buf, Header.SIZE + 16, value); // bytes past width are not sent
            return socket.sendAll(size, NO_FDS);
        } finally {
            sendLock.unlock();
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
        if (n == -LibC.EAGAIN || n == -LibC.EINTR) {
            return false;
        }
        if (n <= 0) {
            connectionLost(n == 0 ? new IOException("server closed the connection")
                    : n == -LibC.EMSGSIZE ? new IOException("control message truncated (MSG_CTRUNC)")
                    : new IOException("recvmsg: " + LibC.strerror((int) -n)));
            return false;
        }
        stream.received(n, socket.takeReceivedFds());
        rend += n;
        frame();
        return true;
    }

    /** Cuts the whole messages out of rbuf and dispatches them. */
    private void frame() {
        long incomplete;
        try {
            incomplete = stream.cut(buffered);
        } catch (ProtocolException e) {
            connectionLost(new IOException(e.getMessage() + " (from the server)"));
            return;
        }
        if (incomplete > rbuf.byteSize() - rstart) {
            makeRoom(incomplete);
        }
        if (rstart == rend) {
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

    private void dispatch(long at, int size, int[] fds) {
        int id = Short.toUnsignedInt(rbuf.get(LE.u16(), at + Header.OFF_MSG_ID));
        int cmd = Short.toUnsignedInt(rbuf.get(LE.u16(), at + Header.OFF_COMMAND));
        int flags = LE.u32(rbuf, at + Header.OFF_FLAGS);
        int errno = LE.u32(rbuf, at + Header.OFF_ERRNO);
        boolean reply = (flags & Header.TYPE_MASK) == Header.TYPE_REPLY;
        Command c = Command.of(cmd);
        if (fds.length > (c == null ? 0 : c.maxFds(reply, ScmRights.MAX_FDS))) {
            LOG.warn("closing {} fd(s) from the server on {} {}, which takes fewer", fds.length,
                    reply ? "a reply to" : "a", c == null ? "command " + cmd : c);
            ScmRights.closeAll(fds);
            fds = NO_FDS;
        }
        if (!reply) {
            requests.request(this, id, cmd, rbuf, at + Header.SIZE, size - Header.SIZE);
            return;
        }
        Pending p = pending.getAndSet(id, null);
        if (p == null) {
            ScmRights.closeAll(fds); // a reply nobody waits for (a late one, or to a raw message)
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
            ScmRights.closeAll(fds);
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
        stream.close();
        socket.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
