package ernic.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.VfioUserDevice;
import ernic.vfiouser.server.VfioUserServer;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code ernic serve}: serves one device on one vfio-user socket until interrupted. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve the emulated device to one QEMU vfio-user client at a time.")
public final class ServeCommand implements Callable<Integer> {
    enum DeviceKind { sample }

    @Option(names = "--socket", defaultValue = "/run/ernic/ernic.sock",
            description = "UNIX socket path QEMU connects to (default: ${DEFAULT-VALUE}).")
    String socket;

    @Option(names = "--socket-group-access",
            description = "Make the socket file group read-write (0660) instead of owner-only (0600).")
    boolean groupAccess;

    @Option(names = "--device", defaultValue = "sample",
            description = "Device to serve: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    DeviceKind device;

    @Option(names = "--log-level", defaultValue = "INFO",
            description = "Log level: ERROR, WARN, INFO, DEBUG or TRACE (default: ${DEFAULT-VALUE}).")
    String logLevel;

    @Option(names = "--max-data-xfer", defaultValue = "1048576",
            description = "Largest data transfer in one vfio-user message, in bytes (default: ${DEFAULT-VALUE}).")
    int maxDataXfer;

    @Override
    public Integer call() throws Exception {
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.toLevel(logLevel, Level.INFO));
        java.nio.file.Path dir = java.nio.file.Path.of(socket).toAbsolutePath().getParent();
        if (dir != null) {
            java.nio.file.Files.createDirectories(dir);
        }
        VfioUserDevice dev = switch (device) {
            case sample -> new SampleDevice();
        };
        VfioUserServer.Options options = VfioUserServer.Options.defaults(socket)
                .withSocketMode(groupAccess ? 0660 : 0600)
                .withMaxDataXferSize(maxDataXfer);
        CountDownLatch stop = new CountDownLatch(1);
        try (VfioUserServer server = VfioUserServer.start(dev, options)) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop.countDown();
                server.close();
            }, "ernic-shutdown"));
            System.err.println("ernic: serving " + device + " on " + socket);
            stop.await();
        }
        return 0;
    }
}
