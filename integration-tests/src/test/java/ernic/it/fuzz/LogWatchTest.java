package ernic.it.fuzz;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** What the fuzzer's log watch takes for a crash, and what for a refusal of hostile input. */
class LogWatchTest {
    private static final Logger log = LoggerFactory.getLogger("ernic.ionic.IonicDevice");

    @Test
    void aRefusalUnderAnInternalCauseIsACrashAndAnyOtherRefusalIsNot(@TempDir Path dir) throws Exception {
        LogWatch watch = LogWatch.install(dir.resolve("warnings.log"));
        try {
            log.warn("{}: {}", "roce-rx-icrc", "a RoCEv2 packet refused: ICRC");
            assertThat(watch.takeCrash()).isNull();
            log.warn("{}: {}", "rdma-sq-internal", "QP 2 WQE failed: java.lang.IllegalArgumentException: x");
            assertThat(watch.takeCrash()).startsWith("the device threw (caught by itself")
                    .contains("rdma-sq-internal: QP 2 WQE failed");
        } finally {
            watch.uninstall();
        }
    }
}
