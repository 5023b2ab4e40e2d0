package ernic.vfiouser.transport;

import ernic.vfiouser.sys.ErrnoException;
import ernic.vfiouser.sys.LibC;
import io.netty.channel.ChannelException;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.IoEvent;
import io.netty.channel.ServerChannel;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;

import java.io.IOException;
import java.net.SocketAddress;

/**
 * A listening UNIX socket whose accepted connections are {@link FdSocketChannel}s. Binding replaces
 * a stale socket file (one nobody listens on) and refuses to replace anything else; the socket file
 * gets {@code mode} (0600 unless the owner asks for group access) and is removed on close. A socket
 * bound before the channel existed ({@link ListeningSocket}) is taken over as it is.
 */
public final class FdServerChannel extends FdChannel implements ServerChannel {
    private final int mode;
    /** The path of a socket that was bound before this channel existed, or null: {@link #doBind} binds. */
    private final String boundPath;
    private String path;
    private volatile boolean active;

    /** @param mode permission bits of the socket file, for example 0600 or 0660 */
    public FdServerChannel(int mode) {
        this(listeningSocket(), mode, null);
    }

    /**
     * A channel for a socket already bound and listening ({@link ListeningSocket#open}): it takes the socket over,
     * and binding it to the socket's own path makes it active.
     */
    public FdServerChannel(ListeningSocket bound) {
        this(new FileDescriptor(bound.takeOver()), 0, bound.path());
    }

    private FdServerChannel(FileDescriptor fd, int mode, String boundPath) {
        // Interest never NONE: Netty 4.2.18 deletes the fd from epoll on NONE but then tries EPOLL_CTL_MOD on the
        // next change (ENOENT). A listening socket never sees EPOLLERR, so it stands for "idle".
        super(null, fd, EpollIoOps.EPOLLERR, new ServerChannelRecvByteBufAllocator());
        this.mode = mode;
        this.boundPath = boundPath;
    }

    /** The socket exists from the start: the event loop registers its fd before bind. */
    private static FileDescriptor listeningSocket() {
        try {
            return new FileDescriptor(LibC.socketUnixStream(true));
        } catch (ErrnoException e) {
            throw new ChannelException(e);
        }
    }

    public String path() {
        return path;
    }

    @Override
    public boolean isActive() {
        return active;
    }

    @Override
    protected SocketAddress localAddress0() {
        return path == null ? null : new DomainSocketAddress(path);
    }

    /** As Netty's {@code AbstractServerChannel}: a listener has no peer (no remote address), and writes nothing. */
    @Override
    protected void doDisconnect() {
        throw new UnsupportedOperationException();
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) {
        throw new UnsupportedOperationException();
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        throw new UnsupportedOperationException();
    }

    @Override
    protected EventUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected void doBind(SocketAddress localAddress) throws Exception {
        String p = ((DomainSocketAddress) localAddress).path();
        if (boundPath == null) {
            ListeningSocket.removeStaleSocket(p);
            ListeningSocket.bind(fd.intValue(), p, mode);
        } else if (!boundPath.equals(p)) {
            throw new IOException("the socket is bound to " + boundPath + " already, not to " + p);
        }
        path = p;
        active = true;
    }

    @Override
    protected void doClose() throws Exception {
        if (!open) {
            return;
        }
        open = false;
        active = false;
        interest.cancel();
        fd.close();
        String file = path != null ? path : boundPath;
        if (file != null) {
            LibC.unlink(file);
        }
    }

    @Override
    protected void doBeginRead() {
        if (active) {
            interest.add(EpollIoOps.EPOLLIN);
        }
    }

    private void clearIn() {
        interest.remove(EpollIoOps.EPOLLIN);
    }

    private final class ServerUnsafe extends EventUnsafe {
        ServerUnsafe() {
            super("a server channel does not connect");
        }

        /** An epoll event on the listening socket: accept a connection. */
        @Override
        void ready(IoEvent event) {
            // Registered before bind: epoll reports EPOLLHUP for a socket that is not listening yet whatever
            // the interest, and accept() on it would fail with EINVAL. Nothing to accept until listen.
            if (!open || !active || !config.isAutoRead()) {
                clearIn();
                return;
            }
            int s = LibC.accept(fd.intValue());
            if (s == -LibC.EAGAIN) {
                return;
            }
            if (s < 0) {
                pipeline().fireExceptionCaught(new ErrnoException("accept", -s));
                return;
            }
            pipeline().fireChannelRead(new FdSocketChannel(FdServerChannel.this, s, path));
            pipeline().fireChannelReadComplete();
        }
    }
}
