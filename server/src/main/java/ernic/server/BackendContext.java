package ernic.server;

import ernic.counters.CounterRegistry;
import ernic.ionic.IonicDevice;
import io.netty.channel.EventLoop;

import java.util.concurrent.Callable;

/** What a backend starts from: the device, its thread (the device loop) and the server's counter registry. */
record BackendContext(IonicDevice ionic, EventLoop loop, CounterRegistry registry) {
    /** Runs {@code work} on the device thread and waits for its result (a failure is rethrown unchecked). */
    <T> T onLoop(Callable<T> work) {
        var f = loop.submit(work).awaitUninterruptibly();
        if (!f.isSuccess()) {
            Throwable t = f.cause();
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException(t);
        }
        return f.getNow();
    }
}
