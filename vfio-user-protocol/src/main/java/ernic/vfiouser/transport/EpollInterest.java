package ernic.vfiouser.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;

import java.util.function.Consumer;

/**
 * A channel's epoll registration (its {@link Handle}) and the events it asks for, for both channels of this package: a
 * change is submitted at once, none after the registration is cancelled. Event loop only.
 */
final class EpollInterest {
    private IoRegistration registration;
    private EpollIoOps ops;

    EpollInterest(EpollIoOps initial) {
        this.ops = initial;
    }

    /**
     * The epoll handle of a channel's socket {@code fd}: its events go to {@code events}; the event loop closing it
     * closes the channel.
     */
    record Handle(Channel channel, FileDescriptor fd, Consumer<IoEvent> events) implements EpollIoHandle {
        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            events.accept(event);
        }

        @Override
        public void close() {
            channel.unsafe().close(channel.unsafe().voidPromise());
        }
    }

    /** Registers {@code ch}'s socket {@code fd} on its event loop, its events to {@code events}; then asks for ours. */
    void register(Channel ch, FileDescriptor fd, Consumer<IoEvent> events, ChannelPromise promise) {
        ((IoEventLoop) ch.eventLoop()).register(new Handle(ch, fd, events)).addListener(f -> {
            if (f.isSuccess()) {
                registration = (IoRegistration) f.getNow();
                registration.submit(ops);
                promise.setSuccess();
            } else {
                promise.setFailure(f.cause());
            }
        });
    }

    boolean contains(EpollIoOps o) {
        return ops.contains(o);
    }

    void add(EpollIoOps o) {
        if (!ops.contains(o)) {
            ops = ops.with(o);
            submit();
        }
    }

    void remove(EpollIoOps o) {
        if (ops.contains(o)) {
            ops = ops.without(o);
            submit();
        }
    }

    private void submit() {
        if (registration != null && registration.isValid()) {
            registration.submit(ops);
        }
    }

    void cancel() {
        if (registration != null) {
            registration.cancel();
        }
    }
}
