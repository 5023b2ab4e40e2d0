package ernic.nvmeof;

import ernic.common.IpAddress;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NvmeofOptionsTest {
    static NvmeofOptions parse(String s) {
        return NvmeofOptions.parse(s, 1 << 16, 1 << 12);
    }

    @Test
    void defaults() {
        NvmeofOptions o = parse("nvmeof");
        assertThat(o).isEqualTo(new NvmeofOptions(OptionalLong.empty(), 512, null, "nvmet-test",
                IpAddress.parse("192.168.200.1"), 4420, 8, 1, "rocm-ernic NVMe-oF target", "ERNIC0000000000001"));
        assertThat(o.sizeOrDefault()).isEqualTo(64L << 20);
    }

    @Test
    void everyOption() {
        NvmeofOptions o = parse("nvmeof:size=1G,bs=4096,file=/tmp/ns.img,nqn=nqn.2026-12.io:x,ip=10.0.0.9,port=4421,"
                + "queues=16,nsid=3,model=My Model,serial=S1");
        assertThat(o).isEqualTo(new NvmeofOptions(OptionalLong.of(1L << 30), 4096, Path.of("/tmp/ns.img"),
                "nqn.2026-12.io:x", IpAddress.parse("10.0.0.9"), 4421, 16, 3, "My Model", "S1"));
    }

    @Test
    void sizes() {
        assertThat(NvmeofOptions.size("4096")).isEqualTo(4096);
        assertThat(NvmeofOptions.size("64K")).isEqualTo(64L << 10);
        assertThat(NvmeofOptions.size("64M")).isEqualTo(64L << 20);
        assertThat(NvmeofOptions.size("2g")).isEqualTo(2L << 30);
        assertThat(NvmeofOptions.size("1T")).isEqualTo(1L << 40);
        assertThat(NvmeofOptions.size("256MiB")).isEqualTo(256L << 20);
        assertThat(NvmeofOptions.size("1GiB")).isEqualTo(1L << 30);
    }

    @Test
    void badOptionsAreOneLineErrors() {
        assertThatThrownBy(() -> parse("nvmeof:size=bogus")).hasMessage("nvmeof backend: bad size 'bogus'");
        assertThatThrownBy(() -> parse("nvmeof:size=0")).hasMessage("nvmeof backend: bad size '0'");
        assertThatThrownBy(() -> parse("nvmeof:size=99999999999T")).hasMessage("nvmeof backend: bad size '99999999999T'");
        assertThatThrownBy(() -> parse("nvmeof:size=1000,bs=512"))
                .hasMessage("nvmeof backend: bad size '1000' (not a whole number of 512-byte blocks)");
        assertThatThrownBy(() -> parse("nvmeof:bs=3000"))
                .hasMessage("nvmeof backend: bad bs '3000' (512, 1024, 2048 or 4096)");
        assertThatThrownBy(() -> parse("nvmeof:ip=300.1.1.1")).hasMessageStartingWith("nvmeof backend: bad ip '300.1.1.1'");
        assertThatThrownBy(() -> parse("nvmeof:port=0")).hasMessage("nvmeof backend: bad port '0' (1..65535)");
        assertThatThrownBy(() -> parse("nvmeof:nsid=0")).hasMessageStartingWith("nvmeof backend: bad nsid '0'");
        assertThatThrownBy(() -> parse("nvmeof:nqn=nqn.2014-08.org.nvmexpress.discovery"))
                .hasMessageStartingWith("nvmeof backend: bad nqn");
        assertThatThrownBy(() -> parse("nvmeof:serial=123456789012345678901")).hasMessageStartingWith("nvmeof backend: bad serial");
        assertThatThrownBy(() -> parse("nvmeof:colour=blue")).hasMessageStartingWith("nvmeof backend: unknown option 'colour' (size, bs,");
        assertThatThrownBy(() -> parse("nvmeof:size=1M,size=2M")).hasMessage("nvmeof backend: size given twice");
        assertThatThrownBy(() -> parse("nvmeof:size")).hasMessage("nvmeof backend: bad option 'size' (key=value)");
        assertThatThrownBy(() -> parse("nvmeofx")).hasMessageStartingWith("nvmeof backend: not an nvmeof backend");
    }

    @Test
    void theQueueLimitComesFromTheDeviceIdentity() {
        // the C original's 2,048-entry MR table: (N + 1) x 128 <= 2048, N = 15
        assertThat(NvmeofOptions.queueLimit(2048, 1 << 12)).isEqualTo(15);
        assertThat(NvmeofOptions.queueLimit(1 << 16, 1 << 12)).isEqualTo(511);
        assertThat(NvmeofOptions.queueLimit(1 << 16, 64)).as("QPs bound too").isEqualTo(61);
        assertThat(NvmeofOptions.parse("nvmeof:queues=15", 2048, 4096).queues()).isEqualTo(15);
        assertThatThrownBy(() -> NvmeofOptions.parse("nvmeof:queues=16", 2048, 4096))
                .hasMessageStartingWith("nvmeof backend: queues=16 is more than this device allows (15): the nvme-rdma"
                        + " initiator registers 128 MRs per queue");
        assertThatThrownBy(() -> parse("nvmeof:queues=0")).hasMessageStartingWith("nvmeof backend: bad queues '0'");
    }
}
