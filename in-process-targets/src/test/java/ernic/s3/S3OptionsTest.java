package ernic.s3;

import ernic.ipstack.NetCounter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ernic.counters.CounterRegistry;
import ernic.counters.Counters;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class S3OptionsTest {
    @Test
    void defaultsAreTheCOriginals() {
        S3Options o = S3Options.parse("s3");
        assertThat(o).isEqualTo(S3Options.DEFAULTS);
        assertThat(o.bucket()).isEqualTo("ernic");
        assertThat(o.size()).isEqualTo(256L << 20);
        assertThat(o.objects()).isEqualTo(256);
        assertThat(o.endpointUrl()).isEqualTo("http://192.168.200.1:9000");
        assertThat(o.mac()).isEqualTo("02:53:c0:a8:c8:01");
        assertThat(o.maxPart()).isEqualTo(256L << 20);
        assertThat(o.verifiesSignatures()).isFalse();
        assertThat(o.replyCompat()).isFalse();
    }

    @Test
    void parsesEveryOption() {
        S3Options o = S3Options.parse("s3:bucket=data.set-1,size=2GiB,objects=65536,ip=10.0.0.7,port=8080,"
                + "maxpart=64M,access=AK,secret=S/K+x,reply=compat");
        assertThat(o.bucket()).isEqualTo("data.set-1");
        assertThat(o.size()).isEqualTo(2L << 30);
        assertThat(o.objects()).isEqualTo(65536);
        assertThat(o.ip()).isEqualTo(0x0a000007);
        assertThat(o.mac()).isEqualTo("02:53:0a:00:00:07");
        assertThat(o.port()).isEqualTo(8080);
        assertThat(o.maxPart()).isEqualTo(64L << 20);
        assertThat(o.accessKey()).isEqualTo("AK");
        assertThat(o.secretKey()).isEqualTo("S/K+x");
        assertThat(o.replyCompat()).isTrue();
        assertThat(S3Options.parse("size=1048576").size()).isEqualTo(1 << 20);
        assertThat(S3Options.parse("size=1024K").size()).isEqualTo(1 << 20);
        assertThatThrownBy(() -> S3Options.parse("size=4k")).hasMessage("s3 backend: bad size '4k'"); // under 1 MiB
    }

    @Test
    void badOptionsAreOneLineErrors() {
        assertThatThrownBy(() -> S3Options.parse("s3:size=bogus")).hasMessage("s3 backend: bad size 'bogus'");
        assertThatThrownBy(() -> S3Options.parse("s3:size=0")).hasMessage("s3 backend: bad size '0'");
        assertThatThrownBy(() -> S3Options.parse("s3:objects=0")).hasMessage("s3 backend: bad objects '0'");
        assertThatThrownBy(() -> S3Options.parse("s3:objects=65537")).hasMessage("s3 backend: bad objects '65537'");
        assertThatThrownBy(() -> S3Options.parse("s3:port=70000")).hasMessage("s3 backend: bad port '70000'");
        assertThatThrownBy(() -> S3Options.parse("s3:ip=300.1.1.1")).hasMessage("s3 backend: bad ip '300.1.1.1'");
        assertThatThrownBy(() -> S3Options.parse("s3:ip=224.0.0.1")).hasMessageStartingWith("s3 backend: bad ip");
        assertThatThrownBy(() -> S3Options.parse("s3:bucket=No")).hasMessage("s3 backend: bad bucket 'No'");
        assertThatThrownBy(() -> S3Options.parse("s3:maxpart=1M")).hasMessage("s3 backend: bad maxpart '1M'");
        assertThatThrownBy(() -> S3Options.parse("s3:colour=red")).hasMessageStartingWith("s3 backend: unknown option 'colour' (bucket, size,");
        assertThatThrownBy(() -> S3Options.parse("s3:size")).hasMessageStartingWith("s3 backend: bad option 'size'");
        assertThatThrownBy(() -> S3Options.parse("s3:port=1,port=2")).hasMessageContaining("twice");
        assertThatThrownBy(() -> S3Options.parse("s3:access=a")).hasMessage("s3 backend: access and secret go together");
        assertThatThrownBy(() -> S3Options.parse("s3:reply=loud")).hasMessageStartingWith("s3 backend: bad reply");
        assertThatThrownBy(() -> S3Options.parse("s3:size=99999999999999999999T")).hasMessageStartingWith("s3 backend: bad size");
    }

    @Test
    void counterSetsRegisterWithDistinctNames() {
        CounterRegistry r = new CounterRegistry();
        r.register("s3.", new Counters<>(NetCounter.class));
        r.register("s3.", new Counters<>(HttpCounter.class));
        r.register("s3.", new Counters<>(S3Counter.class));
        Set<String> names = new HashSet<>();
        r.snapshot().forEach(s -> assertThat(names.add(s.name())).as(s.name()).isTrue());
        assertThat(names).contains("s3.tcp.retransmits", "s3.tcp.connections", "s3.http.requests.get",
                "s3.http.status.404", "s3.bytes.rdma_in", "s3.drop.tcp_checksum");
    }
}
