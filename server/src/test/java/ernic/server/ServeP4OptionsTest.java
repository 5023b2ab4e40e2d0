package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static ernic.server.ServeCommandTest.refusedIn;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code ernic serve}'s P4 options: each mistake is one line and exit status 2, before any socket exists. */
class ServeP4OptionsTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path dir;

    private static final String NL = System.lineSeparator();

    @Test
    void aScopeThatIsNotOneOfTheFourIsRefused() throws Exception {
        assertThat(refusedIn(dir, "--p4-guest-scope", "write"))
                .isEqualTo("ernic serve: --p4-guest-scope write: expected none, read, tables or all" + NL);
    }

    @Test
    void aMissingProgramFileIsOneLine() throws Exception {
        assertThat(refusedIn(dir, "--p4-program", dir.resolve("nope.json").toString())).isEqualTo(
                "ernic serve: --p4-program " + dir.resolve("nope.json") + ": cannot read it (NoSuchFileException)" + NL);
    }

    @Test
    void aProgramTheEngineRefusesIsOneLineNamingTheFeature() throws Exception {
        Path prog = dir.resolve("p.json");
        Files.writeString(prog, "{\"extern_instances\":[{\"name\":\"r\",\"type\":\"Random\"}]}");
        assertThat(refusedIn(dir, "--p4-program", prog.toString())).isEqualTo("ernic serve: --p4-program " + prog
                + ": unsupported: extern type 'Random' (v1model programs have no extern instances: a bmv2 test extern or another architecture's) (at $.extern_instances[0].type)" + NL);
        Files.writeString(prog, "not json");
        assertThat(refusedIn(dir, "--p4-program", prog.toString()))
                .startsWith("ernic serve: --p4-program " + prog + ": ").hasLineCount(1);
    }

    @Test
    void aBadEntryIsOneLineWithItsFileAndLine() throws Exception {
        Path entries = dir.resolve("e.txt");
        Files.writeString(entries, "# comment\ntable_add no_such_table fwd 1 => 2\n");
        assertThat(refusedIn(dir, "--p4", "--p4-entries", entries.toString()))
                .startsWith("ernic serve: --p4-entries " + entries + ":2: ").hasLineCount(1);
    }

    @Test
    void entriesAloneDoNotTurnTheEngineOn() throws Exception {
        Path entries = dir.resolve("e.txt");
        Files.writeString(entries, "");
        assertThat(refusedIn(dir, "--p4-entries", entries.toString())).isEqualTo("ernic serve: --p4-entries needs --p4 or --p4-program" + NL);
    }

    @Test
    void theEngineNeedsTheIonicDevice() throws Exception {
        assertThat(refusedIn(dir, "--device", "sample", "--p4")).isEqualTo("ernic serve: --p4 needs --device ionic" + NL);
    }

    @Test
    void aWqeProgramRegistersTheWqeHooksCountersToo() throws Exception {
        Path prog = Path.of("..", "integration-tests", "src", "test", "resources", "p4", "rdma_fp8.json");
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withP4(P4Options.of(false, prog.toString(), prog.resolveSibling("rdma_fp8.entries").toString(), null)))) {
            var names = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().snapshot().stream()
                    .map(ernic.counters.CounterRegistry.Sample::name).toList()).get();
            assertThat(names).contains("p4.wqe.wqes", "p4.wqe.dropped", "p4.wqe.fp8_accumulate.ops",
                    "p4.wqe.format_convert.ops", "p4.wqe.extern.bad_operand");
            // Distinct registry names stay distinct as Prometheus names (labelled families share theirs).
            var p4 = names.stream().filter(n -> n.startsWith("p4.") && !n.startsWith("p4.table.")).toList();
            assertThat(p4.stream().map(ernic.server.metrics.PrometheusNames::of).distinct().count())
                    .isEqualTo(p4.stream().distinct().count());
        }
    }

    @Test
    void theBuiltInProgramStartsWithItsCounters() throws Exception {
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(dir.resolve("s.sock").toString())
                .withP4(P4Options.of(true, null, null, "read")))) {
            var names = server.vfioUser().eventLoop().submit(() -> server.counterRegistry().snapshot().stream()
                    .map(ernic.counters.CounterRegistry.Sample::name).toList()).get();
            assertThat(names).contains("p4.frames_in", "p4.drops", "p4.eth.tx_frames", "p4.eth.rx_dropped",
                    "p4.devcmd.out_of_scope", "p4.table.hits");
            assertThat(names).doesNotContain("p4.wqe.wqes"); // the pass-through program is not written for WQEs
            var snapshot = server.vfioUser().eventLoop().submit(server::snapshot).get();
            assertThat(snapshot.get("p4").toString())
                    .isEqualTo("{program=ernic_pass_through, guest_scope=read, wqe_program=false,"
                            + " tables={pass={hits=0, misses=0}}}");
            @SuppressWarnings("unchecked")
            var device = (java.util.Map<String, Long>) snapshot.get("device");
            assertThat(device).containsEntry("p4.frames_in", 0L).containsKey("p4.eth.tx_dropped");
        }
    }
}
