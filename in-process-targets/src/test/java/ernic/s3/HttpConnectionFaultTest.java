package ernic.s3;

import static org.assertj.core.api.Assertions.assertThat;

import ernic.counters.Counters;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A fault inside the service resets that connection and leaves the endpoint serving. */
class HttpConnectionFaultTest {
    @Test
    void aThrowingServiceResetsTheConnectionOnly() {
        Counters<HttpCounter> http = new Counters<>(HttpCounter.class);
        HttpService broken = new HttpService() {
            @Override
            public Start begin(HttpRequest request, long decodedLength) {
                throw new IllegalStateException("a bug");
            }

            @Override
            public HttpResponse complete(HttpRequest r, BodyCollector b, List<HttpRequest.Field> t, List<Chunk> c) {
                throw new IllegalStateException("unreachable");
            }

            @Override
            public HttpResponse refuse(int status, String code, String message) {
                return new HttpResponse(status);
            }

            @Override
            public BodyCollector.Budget budget() {
                return new ObjectStore(1 << 20, 1);
            }

            @Override
            public String date() {
                return "Tue, 01 Dec 2026 12:00:00 GMT";
            }
        };
        Rig rig = new Rig(c -> new HttpConnection(c, broken, http));
        GuestTcp g = rig.connect(45000);
        g.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        rig.run(() -> g.reset, 1000);
        assertThat(http.get(HttpCounter.STATUS_500)).isEqualTo(1);
        assertThat(rig.endpoint.connectionCount()).isZero();
        GuestTcp next = rig.connect(45001);
        rig.run(() -> next.established, 1000);
    }
}
