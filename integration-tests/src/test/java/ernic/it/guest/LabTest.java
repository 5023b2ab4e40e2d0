package ernic.it.guest;

import ernic.it.harness.Lab;
import ernic.it.harness.Leftovers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The interactive lab as a user drives it: {@code ./ernic up --vms 2 --share DIR}, {@code ./ernic status},
 * {@code ./ernic shell K -- CMD} (its output and exit status; the shared directory; {@code ibv_rc_pingpong}
 * across the two guests through the mesh), then {@code ./ernic down}, after which nothing is left:
 * no container, process, namespace, TAP or socket.
 */
@ExtendWith(GuestPrerequisites.class)
class LabTest {

    @Test
    void upShellStatusDownLeavesNothing() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "guest", "lab")).toAbsolutePath();
        Path share = Files.createDirectories(dir.resolve("share"));
        Files.writeString(share.resolve("hello.txt"), "made on the host\n");
        Map<String, String> env = Map.of("ERNIC_LAB_DIR", dir.resolve("run").toString());
        String lab = Lab.class.getName();

        long supervisor;
        List<ProcessHandle> servers;
        try {
            HarnessProcess.Result up = HarnessProcess.run(dir, env, lab, "up", "--vms", "2", "--share", share.toString());
            assertThat(up.status()).as(up.out()).isZero();
            assertThat(up.out()).contains("vm0 ready, vm1 ready").contains("ernic up: ready.");
            Properties state = new Properties();
            try (var in = Files.newInputStream(dir.resolve("run/lab.properties"))) {
                state.load(in);
            }
            supervisor = Long.parseLong(state.getProperty("pid"));
            servers = List.of(ProcessHandle.of(Long.parseLong(state.getProperty("vm.0.server_pid"))).orElseThrow(),
                    ProcessHandle.of(Long.parseLong(state.getProperty("vm.1.server_pid"))).orElseThrow());

            HarnessProcess.Result status = HarnessProcess.run(dir, env, lab, "status");
            assertThat(status.status()).isZero();
            assertThat(status.out()).containsPattern("vm0 +192\\.168\\.77\\.1 +ready +\\d+ running")
                    .containsPattern("vm1 +192\\.168\\.77\\.2 +ready +\\d+ running");

            HarnessProcess.Result cat = HarnessProcess.run(dir, env, lab, "shell", "1", "--",
                    "cat /share/hello.txt; echo made in vm$ERNIC_VM_INDEX > /share/from-guest.txt; hostname");
            assertThat(cat.status()).isZero();
            assertThat(cat.out()).contains("made on the host").contains("vm1");
            assertThat(Files.readString(share.resolve("from-guest.txt"))).isEqualTo("made in vm1\n");
            assertThat(HarnessProcess.run(dir, env, lab, "shell", "0", "--", "exit 7").status()).isEqualTo(7);

            // RC ping-pong across the two guests, each side through ./ernic shell.
            String pingpong = "ibv_rc_pingpong -d ionic_0 -g 1 -n 100 -s 1000 -c -p 18611";
            CompletableFuture<HarnessProcess.Result> server = CompletableFuture.supplyAsync(() -> {
                try {
                    return HarnessProcess.run(dir, env, lab, "shell", "0", "--", pingpong);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            HarnessProcess.Result client = HarnessProcess.run(dir, env, lab, "shell", "1", "--",
                    "for i in $(seq 1 30); do " + pingpong + " 192.168.77.1 && exit 0; sleep 1; done; exit 1");
            assertThat(client.status()).as(client.out()).isZero();
            assertThat(server.get().status()).as(server.get().out()).isZero();
            assertThat(client.out()).contains("100 iters in");
        } finally {
            HarnessProcess.Result down = HarnessProcess.run(dir, env, lab, "down");
            assertThat(down.status()).isZero();
        }
        assertThat(ProcessHandle.of(supervisor).map(ProcessHandle::isAlive).orElse(false)).as("supervisor").isFalse();
        assertThat(servers).noneMatch(ProcessHandle::isAlive);
        assertThat(Leftovers.of(supervisor)).as("containers and namespaces").isEmpty();
        String containers = output("docker", "ps", "-a", "--format", "{{.Names}}");
        assertThat(containers).doesNotContain("ernic-lab-");
        assertThat(output("ip", "netns", "list")).doesNotContain("ernic-lab-" + supervisor);
        assertThat(output("ip", "-o", "link", "show")).doesNotContain("er" + supervisor + "v");
        try (Stream<Path> files = Files.walk(dir.resolve("run"))) {
            assertThat(files.filter(p -> p.toString().endsWith(".sock")).toList()).as("sockets").isEmpty();
        }
        assertThat(HarnessProcess.run(dir, env, lab, "status").status()).as("status with no lab").isEqualTo(3);
    }

    private static String output(String... cmd) throws IOException {
        return new String(new ProcessBuilder(cmd).redirectErrorStream(true).start().getInputStream().readAllBytes());
    }
}
