package ernic.it.fuzz;

import ernic.server.ErnicServer;

import java.io.IOException;
import java.nio.file.Path;

/**
 * What {@link VfioFuzz} and {@link MeshFuzz} share: a real {@link ErnicServer} started in this process on a UNIX
 * socket in the output directory, driven through a client connection of the target's own.
 */
abstract class ServerTarget implements FuzzTarget {
    private final String name;
    private final Path dir;
    final Recorder recorder = new Recorder();
    ErnicServer server;
    String socket;

    ServerTarget(String name, Path dir) {
        this.name = name;
        this.dir = dir;
    }

    /** The server this target starts, on {@code socket}. */
    abstract ErnicServer.Settings settings(String socket) throws IOException;

    /** Closes the client connection, if one is open. */
    abstract void closeClientIfOpen();

    @Override
    public final String name() {
        return name;
    }

    @Override
    public void start() throws IOException {
        socket = FuzzTarget.socketIn(dir, name);
        server = ErnicServer.start(settings(socket));
    }

    @Override
    public final Recorder recorder() {
        return recorder;
    }

    @Override
    public void close() {
        closeClientIfOpen();
        if (server != null) {
            server.close();
        }
        FuzzTarget.removeSocket(socket);
    }
}
