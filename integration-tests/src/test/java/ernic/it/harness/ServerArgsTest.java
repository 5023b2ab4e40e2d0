package ernic.it.harness;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --server-args-vm K=ARGS}: server K's arguments in place of {@code --server-args}; {@code K=} runs it with
 * none; a K outside the run or a malformed value is refused with one line and exit status 2 (no guest boots here).
 */
class ServerArgsTest {
    @Test
    void serverArgsAloneGoToEveryServer() {
        ServerArgs a = ServerArgs.parse("--roce  --trace-rdma t.pcap", List.of(), 3);
        assertThat(a.all(3)).containsExactly(List.of("--roce", "--trace-rdma", "t.pcap"),
                List.of("--roce", "--trace-rdma", "t.pcap"), List.of("--roce", "--trace-rdma", "t.pcap"));
        assertThat(ServerArgs.of("").forVm(0)).isEmpty();
    }

    @Test
    void oneVmGetsItsOwnInPlaceOfTheCommonOnes() {
        ServerArgs a = ServerArgs.parse("--busy-poll-us 200", List.of("0=--roce --busy-poll-us 50"), 2);
        assertThat(a.forVm(0)).containsExactly("--roce", "--busy-poll-us", "50");
        assertThat(a.forVm(1)).containsExactly("--busy-poll-us", "200");
    }

    @Test
    void kWithNothingRunsThatServerWithNoExtraArguments() {
        ServerArgs a = ServerArgs.parse("--roce", List.of("1="), 2);
        assertThat(a.all(2)).containsExactly(List.of("--roce"), List.of());
        assertThat(ServerArgs.parse("--roce", List.of("1=   "), 2).forVm(1)).isEmpty();
    }

    @Test
    void repeatableForSeveralVms() {
        ServerArgs a = ServerArgs.parse("", List.of("2=--c", "0=--a x=y"), 4);
        assertThat(a.all(4)).containsExactly(List.of("--a", "x=y"), List.of(), List.of("--c"), List.of());
        // what up hands its supervisor gives the same again
        assertThat(ServerArgs.parse("", a.vmValues(), 4).all(4)).isEqualTo(a.all(4));
    }

    @Test
    void aVmOutsideTheRunIsRefused() {
        assertThatThrownBy(() -> ServerArgs.parse("", List.of("2=--roce"), 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--server-args-vm '2=--roce': there is no VM 2 (--vms 2: 0 to 1)");
    }

    @Test
    void malformedValuesAreRefused() {
        for (String v : List.of("--roce", "=--roce", "x=--roce", "-1=--roce", "1 =--roce", "99999999999=", " 0=a")) {
            assertThatThrownBy(() -> ServerArgs.parse("", List.of(v), 2)).as(v)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("--server-args-vm '" + v + "': expected K=ARGS");
        }
    }

    @Test
    void theSameVmTwiceIsRefused() {
        assertThatThrownBy(() -> ServerArgs.parse("", List.of("1=--a", "1=--b"), 2))
                .hasMessage("--server-args-vm '1=--b': VM 1 is given twice");
    }

    @Test
    void guestRunRefusesWithOneLineAndStatus2() {
        Result r = run(new GuestRun(), "--vms", "2", "--server-args-vm", "2=--roce", "script.sh");
        assertThat(r.status).isEqualTo(2);
        assertThat(r.err).isEqualTo("ernic guest run: --server-args-vm '2=--roce': there is no VM 2 (--vms 2: 0 to 1)\n");
        Result bad = run(new GuestRun(), "--server-args-vm", "roce", "script.sh");
        assertThat(bad.status).isEqualTo(2);
        assertThat(bad.err.lines()).hasSize(1);
    }

    @Test
    void upRefusesWithOneLineAndStatus2() {
        Result r = run(new Lab(), "up", "--vms", "3", "--server-args-vm", "0=", "--server-args-vm", "3=--roce");
        assertThat(r.status).isEqualTo(2);
        assertThat(r.err).isEqualTo("ernic up: --server-args-vm '3=--roce': there is no VM 3 (--vms 3: 0 to 2)\n");
    }

    @Test
    void theOptionIsInTheHelp() {
        assertThat(new CommandLine(new GuestRun()).getUsageMessage()).contains("--server-args-vm=K=ARGS");
        assertThat(new CommandLine(new Lab()).getSubcommands().get("up").getUsageMessage())
                .contains("--server-args-vm=K=ARGS");
    }

    record Result(int status, String err) {}

    static Result run(Object command, String... args) {
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int status = new CommandLine(command).execute(args);
            return new Result(status, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(old);
        }
    }
}
