package ernic.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The server's logging: INFO and above to stderr, one line per event ({@code 12:00:00.000 INFO  Name - text}).
 * Set up in code, found by logback as a service: reading the same from a logback.xml cost {@code ernic serve} about
 * 100 ms of CPU before its socket opened (logback's XML configurator and the JDK's XML parser). A configuration
 * file still wins: {@code -Dlogback.configurationFile}, or a {@code logback-test.xml} or {@code logback.xml} on the
 * class path (the tests'), is left to logback's own configurator, as without this class.
 */
public final class ConsoleLogging extends ContextAwareBase implements Configurator {
    static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level %logger{0} - %msg%n";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        ClassLoader loader = ConsoleLogging.class.getClassLoader();
        if (System.getProperty("logback.configurationFile") != null || loader.getResource("logback-test.xml") != null
                || loader.getResource("logback.xml") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
