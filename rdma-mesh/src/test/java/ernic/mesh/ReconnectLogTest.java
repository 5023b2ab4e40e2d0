package ernic.mesh;

import ernic.counters.OncePerCause;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer that reconnects in a loop and fails each time logs one WARN line per cause, not one per attempt; later
 * ones are counted, and a summary line says how many there were once the summary interval has passed.
 */
class ReconnectLogTest {
    final Logger log = (Logger) LoggerFactory.getLogger(MeshNode.class);
    final ListAppender<ILoggingEvent> lines = new ListAppender<>();

    @BeforeEach
    void listen() {
        lines.start();
        log.addAppender(lines);
    }

    @AfterEach
    void stopListening() {
        log.detachAppender(lines);
    }

    List<String> warnings(String containing) {
        return lines.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage)
                .filter(s -> s.contains(containing)).toList();
    }

    /** A hundred of one cause: one line; another cause: its own line; after the interval: one summary. */
    @Test
    void aHundredFailuresOfOneCauseLogOnce() {
        AtomicLong now = new AtomicLong(123);
        OncePerCause once = new OncePerCause(log, now::get, MeshNode.SUMMARY_INTERVAL_NANOS);
        for (int i = 0; i < 100; i++) {
            once.warn("resolve", "mesh test: cannot resolve {}: attempt {}", "nowhere.invalid", i);
            now.addAndGet(1_000_000);
        }
        once.warn("uplink-lost", "mesh test: connection to the manager lost");
        assertThat(warnings("cannot resolve")).containsExactly("mesh test: cannot resolve nowhere.invalid: attempt 0"
                + " (further ones of this cause, resolve, are counted and summarised every 10 min)");
        assertThat(warnings("connection to the manager lost")).hasSize(1);
        assertThat(once.count("resolve")).isEqualTo(100);

        now.addAndGet(MeshNode.SUMMARY_INTERVAL_NANOS);
        once.warn("resolve", "mesh test: cannot resolve {}: attempt {}", "nowhere.invalid", 100);
        once.warn("resolve", "mesh test: cannot resolve {}: attempt {}", "nowhere.invalid", 101);
        assertThat(warnings("cannot resolve")).hasSize(2).last().isEqualTo("mesh test: cannot resolve"
                + " nowhere.invalid: attempt 100 (resolve: 99 more since the last line, 101 in all)");
        assertThat(once.count("resolve")).isEqualTo(102);
    }

    /** A worker whose manager's name never resolves tries again and again: one WARN line for a hundred tries. */
    @Test
    void aWorkerThatCannotResolveItsManagerWarnsOnce() throws Exception {
        CountDownLatch attempts = new CountDownLatch(100);
        MeshConfig cfg = fast().withResolver(name -> {
            attempts.countDown();
            throw new IllegalStateException(new UnknownHostException(name + ": no such host"));
        });
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            MeshNode w = MeshNode.worker(c.newLoop("unresolved"), "manager.invalid", 1, cfg);
            try {
                w.start().syncUninterruptibly();
                attempts.await();
            } finally {
                w.close().syncUninterruptibly();
            }
        }
        assertThat(warnings("cannot resolve manager.invalid")).hasSize(1);
    }

    /**
     * The manager's table is full (two nodes, both alive): a third node is refused at every attempt. The manager
     * says so once and the refused worker once, however many times it tries.
     */
    @Test
    void aWorkerRefusedAgainAndAgainWarnsOnceAsDoesTheManager() throws Exception {
        MeshConfig cfg = fast().withMaxNodes(2);
        try (Cluster c = new Cluster("127.0.0.1", cfg)) {
            MeshNode m = c.startManager();
            c.startWorker();
            MeshNode refused = c.newWorker(c.newLoop("refused"), cfg);
            // No deadline: how long a hundred attempts take depends on the machine, not on what is tested.
            while (AuthTest.counter(m, "registrationsRefused") < 100
                    || AuthTest.counter(refused, "registrationsRefused") < 100) {
                Thread.sleep(10);
            }
        }
        assertThat(warnings("mesh manager: refused registration")).hasSize(1)
                .allSatisfy(s -> assertThat(s).contains("node table full", "table-full"));
        // Once per node and cause: the refused worker (never registered) said so once.
        assertThat(warnings("worker (unregistered): registration refused by the manager")).hasSize(1);
    }

    /** Reconnect at once, on the next tick that dials (every 37 ms with the cluster's 150 ms heartbeats). */
    static MeshConfig fast() {
        return Cluster.fast().withReconnectDelay(Duration.ofMillis(1));
    }
}
