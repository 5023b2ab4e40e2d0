package ernic.it.bench;

import ernic.model.IonicDriverModel;
import ernic.model.rdma.Cq;
import ernic.model.rdma.RdmaVerbs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The smoke run of the bench's CPU accounting ({@link CpuCost}), in CI: the clocks of a forked server, and the CPU
 * fields of section 2's report from a run with slices too short to give figures. Asserts that every field is there
 * and plausible (positive, a thread's CPU within its process's and within the wall-clock time), never a speed.
 */
class CpuCostTest {
    @Test
    void aForkedServersDeviceThreadIsFoundAndCostsNoMoreThanItsProcess() throws Exception {
        try (ServerFork server = ServerFork.start(List.of(), Map.of())) {
            CpuCost.Meter meter = CpuCost.forked(server.pid());
            CpuCost.Sample before = meter.read();
            try (IonicDriverModel drv = IonicDriverModel.connect(server.socket.toString(), 16L << 20)) {
                RdmaVerbs v = RdmaVerbs.open(drv);
                Cq cq = v.createCq(8);
                for (int i = 0; i < 4; i++) {
                    v.createQp(RdmaVerbs.RC, cq, cq, 2, 2, 6, 0);
                }
            }
            CpuCost.Sample after = meter.read();
            // The device thread did the bring-up and the admin commands; the process did that and more (JIT, GC).
            assertThat(after.deviceNanos()).isGreaterThan(before.deviceNanos());
            assertThat(before.deviceNanos()).isPositive();
            // Each admin command woke the sleeping device thread: it went to sleep again after each.
            assertThat(after.deviceSleeps()).isGreaterThan(before.deviceSleeps());
            assertThat(before.deviceSleeps()).isNotNegative();
            assertThat(after.processNanos()).isGreaterThanOrEqualTo(after.deviceNanos());
            assertThat(after.processNanos() - before.processNanos())
                    .isGreaterThanOrEqualTo(after.deviceNanos() - before.deviceNanos());
            CpuCost.Spent spent = CpuCost.Spent.between(before, after, 4, 0);
            assertThat(spent.cpuNanos()).isEqualTo((double) (after.processNanos() - before.processNanos()));
            assertThat(spent.nsPerOp()).isPositive();
            assertThat(spent.nsPerByte()).isNaN();
        }
    }

    @Test
    void aProcessWithoutADeviceThreadIsRefusedByName() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "600").start();
        try {
            assertThatThrownBy(() -> CpuCost.forked(sleeper.pid()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("has 0 threads named ernic-device");
            assertThat(CpuCost.processNanos(sleeper.pid())).isNotNegative();
        } finally {
            sleeper.destroyForcibly().waitFor();
        }
    }

    @Test
    void rowFieldsGiveTheRatioToTheFloorAndNullForWhatIsUnknown() {
        Map<String, Object> m = CpuCost.fields(300, 3, 200, 2);
        assertThat(m).containsEntry("cpuNsPerOp", 300.0).containsEntry("cpuNsPerByte", 3.0)
                .containsEntry("refCpuNsPerOp", 200.0).containsEntry("refCpuNsPerByte", 2.0)
                .containsEntry("cpuRatio", 1.5);
        Map<String, Object> noRef = CpuCost.fields(300, Double.NaN, Double.NaN, Double.NaN);
        assertThat(noRef).containsEntry("cpuNsPerOp", 300.0).containsEntry("cpuNsPerByte", null)
                .containsEntry("refCpuNsPerOp", null).containsEntry("cpuRatio", null);
    }

    @Test
    @SuppressWarnings("unchecked")
    void theDataPathSectionReportsCpuPerOperationBesideItsFloor(@TempDir Path out) throws Exception {
        Map<String, Object> json = BenchSuite.smoke(out, Set.of(2));
        Map<String, Object> section = (Map<String, Object>) json.get("section2");
        assertThat(section).containsEntry("status", "ran");
        assertThat((Double) section.get("doorbellFloorCpuNs")).isPositive();
        List<Map<String, Object>> rows = (List<Map<String, Object>>) section.get("rows");
        assertThat(rows).extracting(r -> r.get("size")).contains(64L, 65536L);
        for (Map<String, Object> r : rows) {
            String what = r.get("op") + " " + r.get("size");
            double cpu = (Double) r.get("cpuNsPerOp"), perByte = (Double) r.get("cpuNsPerByte");
            long size = (Long) r.get("size");
            assertThat(cpu).as(what).isPositive();
            assertThat(perByte).as(what).isCloseTo(cpu / size, org.assertj.core.data.Percentage.withPercentage(0.01));
            // One thread's CPU over a slice is at most the slice's wall-clock time (a little slack for the
            // clocks' reads at its two ends).
            double wallPerOp = size / (Double) r.get("bytesPerSecond") * 1e9;
            assertThat(cpu).as(what).isLessThanOrEqualTo(wallPerOp * 1.05 + 1_000);
            if (r.get("op").equals("memcpy")) {
                assertThat(r.get("cpuRatio")).as(what).isNull();
            } else {
                assertThat((Double) r.get("refCpuNsPerOp")).as(what)
                        .isGreaterThan((Double) section.get("doorbellFloorCpuNs"));
                assertThat((Double) r.get("cpuRatio")).as(what).isPositive();
                assertThat((double[]) r.get("cpuRatioRounds")).as(what).hasSize(1);
            }
        }
        Map<String, Object> summary = (Map<String, Object>) ((Map<String, Object>) json.get("summary")).get("cpuRatio");
        assertThat((Map<String, Double>) summary.get("section2"))
                .containsKey("WRITE 64 B, device thread ÷ doorbell + memcpy")
                .containsKey("WRITE 64 KiB, device thread ÷ doorbell + memcpy");
        assertThat(out.resolve("report.md")).content().contains("× floor CPU", "Summary: CPU cost");
    }
}
