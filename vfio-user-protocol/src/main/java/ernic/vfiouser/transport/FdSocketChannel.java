package ernic.vfiouser.transport;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import ernic.vfiouser.sys.NativeMemory;
import ernic.vfiouser.sys.ScmRights;
import ernic.vfiouser.wire.FdChunk;
import io.netty.buffer.ByteBuf;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.IoEvent;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketAddress;
import java.nio.ByteBuffer;

/**
 * A connected UNIX stream socket that carries file descriptors (SCM_RIGHTS) with its bytes, on a
 * Netty 4.2 epoll event loop. Netty's own domain-socket channel reads at most one fd and drops the
 * bytes that came with it, so this channel does its own recvmsg/sendmsg through FFM.
 *
 * <p>Inbound it fires the bytes of each recvmsg, as a {@link ByteBuf}, or as an {@link FdChunk} when fds came
 * with them (the kernel ends a read right after the send that carried fds; {@link
 * ernic.vfiouser.wire.MessageFramer} says which message they belong to). Outbound it takes
 * {@link FdChunk}s and sends their fds with the first byte. More than {@value #MAX_FDS} fds, or a
 * truncated control message (MSG_CTRUNC), closes the connection.
 */
public final class FdSocketChannel extends FdChannel {
    private static final Logger LOG = LoggerFactory.getLogger(FdSocketChannel.class);

    /** The most fds one message may carry (the kernel's SCM_MAX_FD). */
    public static final int MAX_FDS = ScmRights.MAX_FDS;
    private static final int BUFFER_SIZE = 256 * 1024;
    private static final int READS_PER_EVENT = 16;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer = arena.allocate(BUFFER_SIZE, 64);
    /** Reads up to this size go into {@link #reusedRead}. */
    private static final int REUSED_READ_SIZE = 16 * 1024;
    private ByteBuf reusedRead;
    private final ByteBuffer bufferView = buffer.asByteBuffer();
    /** sendmsg and recvmsg with their fds; every call and the arena's close run on the event loop. */
    private final ScmRights scm = new ScmRights(arena);
    private final SocketAddress remote;

    /** Wraps a connected, non-blocking socket fd (the channel owns it). */
    public FdSocketChannel(Channel parent, int fd, String path) {
        super(parent, new FileDescriptor(fd), EpollIoOps.EPOLLRDHUP, new AdaptiveRecvByteBufAllocator());
        this.remote = new DomainSocketAddress(path);
    }

    @Override
    public boolean isActive() {
        return open;
    }

    @Override
    protected EventUnsafe newUnsafe() {
        return new FdUnsafe();
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    @Override
    protected void doBind(SocketAddress localAddress) {
        throw new UnsupportedOperationException("bind");
    }

    @Override
    protected void doDisconnect() throws Exception {
        doClose();
    }

    @Override
    protected void doClose() throws Exception {
        if (!open) {
            return;
        }
        open = false;
        try {
            interest.cancel();
            fd.close();
        } finally {
            arena.close();
            if (reusedRead != null) {
                reusedRead.release();
                reusedRead = null;
            }
        }
    }

    @Override
    protected void doBeginRead() {
        interest.add(EpollIoOps.EPOLLIN);
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        if (msg instanceof ByteBuf) {
            return msg; // bytes with no fds: a reply built whole by its sender
        }
        if (msg instanceof FdChunk chunk) {
            if (chunk.fds().length > MAX_FDS) {
                chunk.release();
                throw new IllegalArgumentException("more than " + MAX_FDS + " fds in one message");
            }
            return chunk;
        }
        throw new UnsupportedOperationException("unsupported message type: " + msg.getClass().getName());
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        for (;;) {
            Object msg = in.current();
            if (msg == null) {
                interest.remove(EpollIoOps.EPOLLOUT);
                return;
            }
            FdChunk chunk = msg instanceof FdChunk c ? c : null;
            ByteBuf data = chunk != null ? chunk.data() : (ByteBuf) msg;
            while (data.isReadable()) {
                int n = Math.min(data.readableBytes(), BUFFER_SIZE);
                copyOut(data, data.readerIndex(), n);
                long sent = sendmsg(n, chunk != null ? chunk.fds() : NO_FDS);
                if (sent == -LibC.EAGAIN) {
                    interest.add(EpollIoOps.EPOLLOUT);
                    return;
                }
                if (sent < 0) {
                    throw new ErrnoException("sendmsg", (int) -sent);
                }
                if (chunk != null) {
                    chunk.takeFds(); // sent with this first byte; never again
                }
                data.skipBytes((int) sent);
                in.progress(sent);
            }
            in.remove();
        }
    }

    private static final int[] NO_FDS = new int[0];

    /**
     * Sends the first {@code length} bytes of {@code bytes} at once, on the event loop, when nothing is
     * queued before them (no written or flushed message waits, no wait for EPOLLOUT): one sendmsg, no
     * buffer, no pipeline. A part the socket does not take is queued and flushed as usual. Returns
     * false, having sent nothing, when the bytes must go through the pipeline to keep the order (or the
     * channel is closed); the caller then writes them there.
     */
    public boolean writeNow(MemorySegment bytes, long length) {
        ChannelOutboundBuffer out = unsafe().outboundBuffer();
        if (!open || out == null || !out.isEmpty() || out.totalPendingWriteBytes() != 0
                || interest.contains(EpollIoOps.EPOLLOUT) || !eventLoop().inEventLoop()) {
            return false;
        }
        long sent = scm.send(fd.intValue(), bytes.address(), length, NO_FDS, LibC.MSG_NOSIGNAL | LibC.MSG_DONTWAIT);
        if (sent == length) {
            return true;
        }
        if (sent == -LibC.EAGAIN) {
            sent = 0;
        } else if (sent < 0) {
            return false; // the pipeline's write fails the same way and handles it
        }
        int rest = (int) (length - sent);
        ByteBuf tail = alloc().buffer(rest);
        tail.writeBytes(bytes.asSlice(sent, rest).asByteBuffer());
        unsafe().write(tail, voidPromise());
        unsafe().flush();
        return true;
    }

    /** Copies {@code n} bytes of {@code src} from {@code index} to the start of the buffer. */
    private void copyOut(ByteBuf src, int index, int n) {
        NativeMemory.copy(src, index, buffer, bufferView, n);
    }

    /** A new buffer holding the first {@code n} bytes of the buffer. */
    private ByteBuf copyIn(int n) {
        ByteBuf data;
        if (n <= REUSED_READ_SIZE) {
            // The usual small read goes into one buffer used again and again: we keep a reference, the
            // chunk gets another. When the pipeline let go of it (all its messages were cut out), only
            // ours is left and the buffer serves the next read; else it stays theirs and we take a new one.
            if (reusedRead != null && reusedRead.refCnt() != 1) {
                reusedRead.release();
                reusedRead = null;
            }
            if (reusedRead == null) {
                reusedRead = alloc().directBuffer(REUSED_READ_SIZE);
            }
            data = reusedRead.clear().retain();
        } else {
            data = alloc().buffer(n);
        }
        NativeMemory.append(buffer, bufferView, n, data);
        return data;
    }

    private long sendmsg(int length, int[] fds) {
        return scm.send(fd.intValue(), buffer.address(), length, fds, LibC.MSG_NOSIGNAL | LibC.MSG_DONTWAIT);
    }

    private final class FdUnsafe extends EventUnsafe {
        FdUnsafe() {
            super("an accepted channel does not connect");
        }

        @Override
        protected void flush0() {
            // While waiting for EPOLLOUT the socket is full: the event will flush.
            if (!interest.contains(EpollIoOps.EPOLLOUT)) {
                super.flush0();
            }
        }

        /** An epoll event on the socket: flush what waited for room, read what came. */
        @Override
        void ready(IoEvent event) {
            EpollIoOps ready = ((EpollIoEvent) event).ops();
            if ((ready.contains(EpollIoOps.EPOLLOUT) || ready.contains(EpollIoOps.EPOLLERR)) && open) {
                interest.remove(EpollIoOps.EPOLLOUT);
                super.flush0();
            }
            if ((ready.contains(EpollIoOps.EPOLLIN) || ready.contains(EpollIoOps.EPOLLERR)
                    || ready.contains(EpollIoOps.EPOLLRDHUP)) && open) {
                readReady();
            }
        }

        private void readReady() {
            ChannelPipeline pipeline = pipeline();
            boolean readSomething = false;
            Throwable failure = null;
            boolean eof = false;
            for (int i = 0; i < READS_PER_EVENT && open; i++) {
                long n = scm.receive(fd.intValue(), buffer.address(), BUFFER_SIZE, LibC.MSG_DONTWAIT);
                if (n == -LibC.EAGAIN) {
                    break;
                }
                if (n == -LibC.EMSGSIZE) {
                    failure = new IOException("control message truncated (MSG_CTRUNC): more than "
                            + MAX_FDS + " fds, or the fd table is full");
                    break;
                }
                if (n < 0) {
                    failure = new ErrnoException("recvmsg", (int) -n);
                    break;
                }
                if (n == 0) {
                    eof = true;
                    break;
                }
                int[] fds = scm.takeReceived();
                ByteBuf data = copyIn((int) n);
                readSomething = true;
                // Most reads carry no fds: their bytes go up alone, with no chunk to allocate.
                pipeline.fireChannelRead(fds == null || fds.length == 0 ? data : FdChunk.received(data, fds));
                if (!config.isAutoRead()) {
                    break;
                }
                if (n < BUFFER_SIZE && fds == null) {
                    // The socket had no more: epoll (level-triggered) says when more comes, so skip the
                    // read that would only return EAGAIN. (A read with fds may stop early; read on.)
                    break;
                }
            }
            if (readSomething) {
                pipeline.fireChannelReadComplete();
            }
            if (failure != null) {
                // The pipeline's handler is told (exceptionCaught) and logs it, once per cause.
                LOG.debug("closing {}: {}", FdSocketChannel.this, failure.getMessage());
                pipeline.fireExceptionCaught(failure);
                close(voidPromise());
            } else if (eof) {
                close(voidPromise());
            } else if (!config.isAutoRead()) {
                interest.remove(EpollIoOps.EPOLLIN);
            }
        }
    }

    @Override
    public String toString() {
        return "vfio-user[fd " + fd.intValue() + (open ? "" : ", closed") + "]";
    }
}
