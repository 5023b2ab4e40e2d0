package ernic.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guest bench whose reference gave no figure (section 7's iperf3 with no iperf3 on the host, issue 35) has it
 * named with its cause, both references when both are missing, and nothing when they have figures. No guest runs:
 * the input is the guest's JSON.
 */
class MissingReferenceTest {
    private static JsonNode json(String text) throws Exception {
        return new ObjectMapper().readTree(text);
    }

    @Test
    void bothNullIperfReferencesAreNamedWithTheMissingIperf3() throws Exception {
        JsonNode node = json("{\"iperf_guest_to_host_MB_s\": null, \"iperf_host_to_guest_MB_s\": null, \"results\": []}");
        assertThat(BenchSuite.missingReferences(node, false))
                .hasSize(2)
                .anySatisfy(w -> assertThat(w).contains("iperf_guest_to_host_MB_s"))
                .anySatisfy(w -> assertThat(w).contains("iperf_host_to_guest_MB_s"))
                .allSatisfy(w -> assertThat(w).contains("iperf3 is not installed on the host"));
    }

    @Test
    void withIperf3InstalledTheRunIsBlamedNotTheHost() throws Exception {
        JsonNode node = json("{\"iperf_guest_to_host_MB_s\": 812.5, \"iperf_host_to_guest_MB_s\": null}");
        assertThat(BenchSuite.missingReferences(node, true))
                .singleElement()
                .satisfies(w -> assertThat(w).contains("iperf_host_to_guest_MB_s").contains("the host has iperf3")
                        .doesNotContain("not installed"));
    }

    @Test
    void referencesWithFiguresOrAbsentAreNotMissing() throws Exception {
        assertThat(BenchSuite.missingReferences(json("{\"iperf_guest_to_host_MB_s\": 812.5, "
                + "\"iperf_host_to_guest_MB_s\": 640.0}"), false)).isEmpty();
        assertThat(BenchSuite.missingReferences(json("{\"results\": []}"), false)).isEmpty();
    }
}
