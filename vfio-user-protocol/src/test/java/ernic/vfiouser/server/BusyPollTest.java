package ernic.vfiouser.server;

import ernic.vfiouser.client.VfioUserClient;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.testing.Leaks;
import ernic.vfiouser.testing.TestSockets;
import io.netty.channel.SelectStrategy;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --busy-poll-us}: the device thread polls while work is recent, sleeps once it is not. */
class BusyPollTest {
    static final long POLL = TimeUnit.MICROSECONDS.toNanos(200);

    @Test
    void readySocketsAreHandledAndRestartThePoll() throws Exception {
        MockTicker clock = Ticker.newMockTicker();
        BusyPoll poll = new BusyPoll(POLL, clock);
        clock.advance(150, TimeUnit.MICROSECONDS);
        assertThat(poll.calculateStrategy(() -> 3, false)).isEqualTo(3);
        clock.advance(150, TimeUnit.MICROSECONDS); // 300 µs since the start, 150 since the last work
        assertThat(poll.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
    }

    @Test
    void quietForThePollTimeItSleeps() throws Exception {
        MockTicker clock = Ticker.newMockTicker();
        BusyPoll poll = new BusyPoll(POLL, clock);
        assertThat(poll.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock.advance(199, TimeUnit.MICROSECONDS);
        assertThat(poll.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
        clock.advance(1, TimeUnit.MICROSECONDS);
        assertThat(poll.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
    }

    @Test
    void pendingTasksCountAsWorkAndNeverSleep() throws Exception {
        MockTicker clock = Ticker.newMockTicker();
        BusyPoll poll = new BusyPoll(POLL, clock);
        clock.advance(1, TimeUnit.SECONDS);
        assertThat(poll.calculateStrategy(() -> 0, true)).isZero(); // nothing ready: run the tasks, no sleep
        clock.advance(100, TimeUnit.MICROSECONDS);
        assertThat(poll.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
    }

    @Test
    void aServerThatBusyPollsServesBeforeAndAfterItFallsAsleep() throws Exception {
        Leaks baseline = Leaks.baseline();
        try (SampleDevice device = new SampleDevice()) {
            VfioUserServer server = VfioUserServer.start(device, VfioUserServer.Options.defaults(
                    TestSockets.newPath("busy")).withBusyPollMicros(VfioUserServer.Options.MAX_BUSY_POLL_MICROS));
            try (VfioUserClient client = VfioUserClient.connect(server.socketPath())) {
                client.negotiate();
                for (int i = 0; i < 2000; i++) { // back to back: within the poll
                    client.regionWriteLong(0, 0x04, 4, i);
                }
                assertThat(client.regionReadLong(0, 0x04, 4)).isEqualTo(1999);
                Thread.sleep(20); // twenty times the poll: the device thread sleeps in epoll
                client.regionWriteLong(0, 0x04, 4, 0xfeed);
                assertThat(client.regionReadLong(0, 0x04, 4)).isEqualTo(0xfeed);
            } finally {
                server.close();
            }
        }
        baseline.assertBackToBaseline();
    }

    @Test
    void aPollBeyondAMillisecondIsRefused() {
        VfioUserServer.Options o = VfioUserServer.Options.defaults("/tmp/x.sock");
        assertThatThrownBy(() -> o.withBusyPollMicros(1001))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--busy-poll-us 1001: expected 0 to 1000 (microseconds)");
        assertThatThrownBy(() -> o.withBusyPollMicros(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
