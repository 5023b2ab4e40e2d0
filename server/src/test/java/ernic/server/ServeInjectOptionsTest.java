package ernic.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static ernic.server.ServeCommandTest.refusedIn;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code ernic serve --inject}: a value the parser refuses is one line and exit status 2, before any socket exists. */
class ServeInjectOptionsTest {
    /** Scratch space JUnit removes after each test: nothing of a run stays in /tmp. */
    @TempDir
    Path dir;

    private static final String NL = System.lineSeparator();

    @Test
    void aBadRdmaValueIsOneLine() throws Exception {
        String[][] cases = {
                {"rdma-latency:us=0", "us=0: must be 1 to 10000000 (10 s)"},
                {"rdma-latency:every=2", "rdma-latency needs us=N, the time to add in microseconds"},
                {"rdma-rnr:qp=1", "qp=1: a QP number is 2 to 16777215 (0 and 1 are the special QPs, never RC)"},
                {"rdma-retry-exc:frac=2", "frac=2: must be more than 0 and at most 1"},
                {"rx-lost:qp=5", "qp= is for the rdma-* kinds only"},
                {"rdma-nak:every=2", "unknown kind 'rdma-nak' (stats-vals, rx-lost, rx-nobuf, tx-drop, roce-drop,"
                        + " roce-duplicate, roce-reorder, roce-corrupt, rdma-rem-access, rdma-rnr, rdma-retry-exc,"
                        + " rdma-latency)"},
                {"roce-drop:peer=10.0.0.256", "peer=10.0.0.256: not an IPv4 or IPv6 address"},
        };
        for (String[] c : cases) {
            assertThat(refusedIn(dir, "--inject", "rdma-rem-access:seq=2,qp=5", "--inject", c[0]))
                    .isEqualTo("ernic serve: --inject " + c[0] + ": " + c[1] + NL);
        }
    }

    @Test
    void faultsAreTheIonicDevicesOnly() throws Exception {
        assertThat(refusedIn(dir, "--device", "sample", "--inject", "rx-lost:every=2"))
                .isEqualTo("ernic serve: --inject needs --device ionic" + NL);
    }
}
