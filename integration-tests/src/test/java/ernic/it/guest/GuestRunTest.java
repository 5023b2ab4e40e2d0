package ernic.it.guest;

import ernic.it.harness.GuestRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ./ernic guest run --vms 2}, as a person runs it: two {@code ernic serve} processes, two
 * guests, their NICs on one bridged segment; each guest reaches the segment's host end and the other.
 */
@ExtendWith(GuestPrerequisites.class)
class GuestRunTest {
    static final String SCRIPT = """
            set -e
            uname -r
            lspci -nn -d 1dd8:
            # ernic-vm's lpj=: one delay loop for every vCPU (ionic_rdma's busy-waits count on mdelay).
            echo "bogomips: $(grep bogomips /proc/cpuinfo | sort -u | wc -l) distinct over $(nproc) vCPUs"
            modprobe ionic
            ip link set eth0 up
            ip addr add $ERNIC_GUEST_IP/24 dev eth0
            for i in $(seq 1 40); do [ "$(cat /sys/class/net/eth0/carrier)" = 1 ] && break; sleep 0.5; done
            ping -c 2 -W 5 $ERNIC_HOST_IP
            other=192.168.77.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
            ok=0
            for i in $(seq 1 30); do if ping -c 1 -W 2 $other > /dev/null; then ok=1; break; fi; sleep 1; done
            [ $ok = 1 ]
            echo "vm $ERNIC_VM_INDEX reached $other"
            sleep 8  # stay up until the other guest has reached this one too
            """;


    /** What {@code ./ernic guest run} printed (streamed to stdout as it runs) and its exit status. */
    record Run(int status, String out) {}

    /** Runs {@code ./ernic guest run ARGS} in this JVM, as a person would, capturing its output. */
    static Run guestRun(String... args) {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.out;
        try (PrintStream tee = new PrintStream(new TeeStream(captured, original), true, StandardCharsets.UTF_8)) {
            System.setOut(tee);
            int status = new CommandLine(new GuestRun()).execute(args);
            return new Run(status, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(original);
        }
    }

    /**
     * Writes {@code script} to target/guest/{@code name} and runs {@code ./ernic guest run OPTIONS} with it, which
     * must end with status 0 (every guest's script did); returns what it printed.
     */
    static String guestRunScript(String name, String script, String... options) throws IOException {
        Path file = Files.createDirectories(Path.of("target", "guest")).resolve(name);
        Files.writeString(file, script);
        String[] args = Arrays.copyOf(options, options.length + 1);
        args[options.length] = file.toString();
        Run run = guestRun(args);
        assertThat(run.status()).as("the first non-zero status of the scripts").isZero();
        return run.out();
    }

    @Test
    void twoGuestsOnOneSegmentReachEachOther() throws Exception {
        String out = guestRunScript("two-vms.sh", SCRIPT, "--vms", "2");
        assertThat(out).contains("vm0| vm 0 reached 192.168.77.2").contains("vm1| vm 1 reached 192.168.77.1")
                .contains("[1dd8:1002]").contains("+deb14-amd64")
                .contains("vm0| bogomips: 1 distinct over 4 vCPUs").contains("vm1| bogomips: 1 distinct over 4 vCPUs");
    }

    /** Writes to two streams at once. */
    static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a, b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int x) throws java.io.IOException {
            a.write(x);
            b.write(x);
        }

        @Override
        public void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }
    }
}
