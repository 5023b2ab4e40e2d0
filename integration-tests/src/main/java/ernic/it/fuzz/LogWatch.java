package ernic.it.fuzz;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The server's log during a run: hostile input makes it warn a lot (each refusal kind once, each protocol close),
 * so nothing goes to the terminal; WARN and above go to a file under target/fuzz. An event that shows an
 * exception escaping the server's handling is a crash: ERROR, a WARN carrying an exception that is not an I/O
 * error, a device error the vfio-user layer caught ("device error in ..."), a connection that failed for another
 * reason than the protocol or the socket ("vfio-user connection failed" with no I/O error: a client that
 * closes while its replies are being written is not one), an exception that reached the end of a Netty
 * pipeline, a mesh "protocol violation" whose reason is a Java exception (MeshLink closes the peer's connection
 * when handling a frame throws, so a bug in the handler would otherwise pass for the peer's fault), or a refusal
 * under a cause ending in {@code -internal} (the device's own catch of an exception in a device command, a BAR
 * write, a doorbell, an admin command or a WQE: the guest gets an error, and the bug would pass for its fault).
 */
final class LogWatch extends AppenderBase<ILoggingEvent> {
    private final AtomicReference<String> crash = new AtomicReference<>();
    private final PrintWriter file;
    private long lines;
    /** Lines written to the file at most (the rest is counted). */
    static final long MAX_LINES = 20_000;
    /** A refusal's log line ("CAUSE: what") whose cause says the device caught an exception of its own. */
    static final java.util.regex.Pattern INTERNAL = java.util.regex.Pattern.compile("[a-z0-9-]+-internal: ");

    private LogWatch(Path file) throws IOException {
        this.file = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8), true);
    }

    private final java.util.List<ch.qos.logback.core.Appender<ILoggingEvent>> saved = new java.util.ArrayList<>();
    private Level savedLevel;

    /** Takes over the root logger: WARN and above, to {@code file} and to this watch (until {@link #uninstall}). */
    static LogWatch install(Path file) throws IOException {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        LogWatch w = new LogWatch(file);
        root.iteratorForAppenders().forEachRemaining(w.saved::add);
        w.savedLevel = root.getLevel();
        root.detachAndStopAllAppenders();
        root.setLevel(Level.WARN);
        w.setContext(ctx);
        w.setName("fuzz-watch");
        w.start();
        root.addAppender(w);
        return w;
    }

    @Override
    protected synchronized void append(ILoggingEvent e) {
        String msg = e.getFormattedMessage();
        IThrowableProxy t = e.getThrowableProxy();
        if (lines++ < MAX_LINES) {
            file.println(e.getLevel() + " " + e.getLoggerName() + " - " + msg + (t == null ? "" : " [" + t.getClassName()
                    + ": " + t.getMessage() + "]"));
        }
        String why = null;
        if (e.getLevel().isGreaterOrEqual(Level.ERROR)) {
            why = "ERROR logged";
        } else if (msg.startsWith("device error")) {
            why = "the device threw (caught by the vfio-user layer)";
        } else if (INTERNAL.matcher(msg).lookingAt()) {
            why = "the device threw (caught by itself and refused under an -internal cause)";
        } else if (msg.startsWith("vfio-user connection failed") && !ioMessage(msg)) {
            why = "a vfio-user connection failed with an exception";
        } else if (msg.contains("protocol violation") && (msg.contains("Exception") || msg.contains("java.lang."))) {
            why = "an exception in the mesh's frame handling (MeshLink takes it for the peer's protocol violation)";
        } else if (msg.contains("reached at the tail of the pipeline")) {
            why = "an exception reached the end of a Netty pipeline";
        } else if (t != null && !isIo(t)) {
            why = "a warning with an exception";
        }
        if (why != null) {
            crash.compareAndSet(null, why + ": " + e.getLoggerName() + " - " + msg
                    + (t == null ? "" : " [" + t.getClassName() + ": " + t.getMessage() + "]"));
        }
    }

    /** The message names an I/O error (a socket the peer closed), not a bug. */
    private static boolean ioMessage(String msg) {
        return msg.contains("ErrnoException") || msg.contains("IOException") || msg.contains("ClosedChannelException");
    }

    private static boolean isIo(IThrowableProxy t) {
        for (IThrowableProxy p = t; p != null; p = p.getCause()) {
            String c = p.getClassName();
            if (c.endsWith("IOException") || c.contains("Errors$NativeIoException") || c.endsWith("ClosedChannelException")) {
                return true;
            }
        }
        return false;
    }

    /** The first crash seen since the last call, or null; clears it. */
    String takeCrash() {
        return crash.getAndSet(null);
    }

    /** The first crash seen, or null (leaves it). */
    String crash() {
        return crash.get();
    }

    /** WARN and above seen so far. */
    synchronized long lines() {
        return lines;
    }

    /** Gives the root logger back its appenders and level, and closes the file. */
    void uninstall() {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.detachAppender(this);
        stop();
        for (ch.qos.logback.core.Appender<ILoggingEvent> a : saved) {
            a.start();
            root.addAppender(a);
        }
        root.setLevel(savedLevel);
        file.close();
    }
}
