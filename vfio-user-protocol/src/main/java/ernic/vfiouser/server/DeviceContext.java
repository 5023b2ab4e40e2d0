package ernic.vfiouser.server;

import io.netty.channel.EventLoop;

/** What an attached device can use: guest memory, interrupts, and the device thread. */
public interface DeviceContext {
    GuestMemory memory();

    Interrupts interrupts();

    /** The device thread: schedule timers here; never block it. */
    EventLoop eventLoop();
}
