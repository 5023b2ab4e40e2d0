package ernic.vfiouser.transport;

import io.netty.channel.AbstractChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;

import java.net.SocketAddress;

/**
 * What both channels of this package are: a UNIX socket fd the channel owns, on an epoll event loop through its
 * {@link EpollInterest}, open until closed, its config turning EPOLLIN off when auto-read is cleared.
 */
abstract sealed class FdChannel extends AbstractChannel permits FdServerChannel, FdSocketChannel {
    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);

    final FileDescriptor fd;
    final EpollInterest interest;
    final DefaultChannelConfig config;
    volatile boolean open = true;

    FdChannel(Channel parent, FileDescriptor fd, EpollIoOps initialInterest, RecvByteBufAllocator allocator) {
        super(parent);
        this.fd = fd;
        this.interest = new EpollInterest(initialInterest);
        this.config = new DefaultChannelConfig(this, allocator) {
            @Override
            protected void autoReadCleared() {
                interest.remove(EpollIoOps.EPOLLIN);
            }
        };
    }

    @Override
    public ChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    /** No address: a UNIX socket has its path on one end only (the listener's, once bound; an accepted one's peer). */
    @Override
    protected SocketAddress localAddress0() {
        return null;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return null;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop l && l.isCompatible(EpollInterest.Handle.class);
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        interest.register(this, fd, ((EventUnsafe) unsafe())::ready, promise);
    }

    @Override
    protected void doDeregister() {
        interest.cancel();
    }

    @Override
    protected abstract EventUnsafe newUnsafe();

    /** The channel's unsafe, which also takes its socket's epoll events; it does not connect. */
    abstract class EventUnsafe extends AbstractUnsafe {
        private final String doesNotConnect;

        EventUnsafe(String doesNotConnect) {
            this.doesNotConnect = doesNotConnect;
        }

        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            promise.setFailure(new UnsupportedOperationException(doesNotConnect));
        }

        /** An epoll event on the socket. */
        abstract void ready(IoEvent event);
    }
}
