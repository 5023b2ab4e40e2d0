package ernic.counters;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CounterTest {
    enum Plain implements Counter {
        TX_SENT, BYTES
    }

    enum Grouped implements Counter.Grouped {
        MW_BIND_ERRORS, SQ_WQES, BYTES
    }

    enum Camel implements Counter.CamelCase {
        REQUESTS_SENT, NO_ROUTE, TIMEOUTS
    }

    @Test
    void aKeyIsTheConstantInLowerCase() {
        assertThat(Plain.TX_SENT.key()).isEqualTo("tx_sent");
        assertThat(Plain.BYTES.key()).isEqualTo("bytes");
        assertThat(Plain.BYTES.gauge()).isFalse();
    }

    @Test
    void aGroupedKeyHasADotAfterTheGroup() {
        assertThat(Grouped.MW_BIND_ERRORS.key()).isEqualTo("mw.bind_errors");
        assertThat(Grouped.SQ_WQES.key()).isEqualTo("sq.wqes");
        assertThat(Grouped.BYTES.key()).isEqualTo("bytes");
    }

    @Test
    void aCamelCaseKeyJoinsTheWords() {
        assertThat(Camel.REQUESTS_SENT.key()).isEqualTo("requestsSent");
        assertThat(Camel.NO_ROUTE.key()).isEqualTo("noRoute");
        assertThat(Camel.TIMEOUTS.key()).isEqualTo("timeouts");
    }
}
