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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A listening UNIX socket whose accepted connections are {@link FdSocketChannel}s. Binding replaces
 * a stale socket file (one nobody listens on) and refuses to replace anything else; the socket file
 * gets {@code mode} (0600 unless the owner asks for group access) and is removed on close.
 */
public final class FdServerChannel extends FdChannel implements ServerChannel {
    private static final Logger LOG = LoggerFactory.getLogger(FdServerChannel.class);

    private final int mode;
    private String path;
    private volatile boolean active;

    /** @param mode permission bits of the socket file, for example 0600 or 0660 */
    public FdServerChannel(int mode) {
        // Interest never NONE: Netty 4.2.18 deletes the fd from epoll on NONE but then tries EPOLL_CTL_MOD on the
        // next change (ENOENT). A listening socket never sees EPOLLERR, so it stands for "idle".
        super(null, listeningSocket(), EpollIoOps.EPOLLERR, new ServerChannelRecvByteBufAllocator());
        this.mode = mode;
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
        removeStaleSocket(p);
        LibC.bindUnix(fd.intValue(), p);
        path = p;
        LibC.chmod(p, mode);
        LibC.listen(fd.intValue(), 4);
        active = true;
    }

    /** Removes a socket file nobody listens on; refuses to touch a live socket or a non-socket. */
    private static void removeStaleSocket(String p) throws IOException {
        Path file = Path.of(p);
        if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Object kind = Files.getAttribute(file, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        if (((Integer) kind & 0170000) != 0140000) {
            throw new IOException(p + " exists and is not a socket; not replacing it");
        }
        int probe = LibC.socketUnixStream(false);
        try {
            if (LibC.connectUnix(probe, p) == 0) {
                throw new IOException(p + " is in use by a running server");
            }
        } finally {
            LibC.close(probe);
        }
        LOG.info("replacing stale socket {}", p);
        LibC.unlink(p);
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
        if (path != null) {
            LibC.unlink(path);
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
