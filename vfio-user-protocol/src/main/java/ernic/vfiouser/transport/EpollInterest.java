package ernic.vfiouser.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandle;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoOps;

/**
 * A channel's epoll registration and the events it asks for, for both channels of this package: a
 * change is submitted at once, none after the registration is cancelled. Event loop only.
 */
final class EpollInterest {
    private IoRegistration registration;
    private EpollIoOps ops;

    EpollInterest(EpollIoOps initial) {
        this.ops = initial;
    }

    /** Registers {@code handle} on {@code ch}'s event loop, then asks for the current events. */
    void register(Channel ch, IoHandle handle, ChannelPromise promise) {
        ((IoEventLoop) ch.eventLoop()).register(handle).addListener(f -> {
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
