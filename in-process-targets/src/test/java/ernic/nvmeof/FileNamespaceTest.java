package ernic.nvmeof;

import ernic.nvmeof.Harness.Cqe;
import ernic.nvmeof.Harness.Queue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** File namespaces: sized safely, I/O off the device thread, data kept across controller instances. */
class FileNamespaceTest {
    @TempDir
    Path dir;

    Harness target(Path file, String size) throws IOException {
        NvmeofOptions o = NvmeofOptions.parse("nvmeof:bs=4096,file=" + file + (size == null ? "" : ",size=" + size),
                1 << 16, 1 << 12);
        return new Harness(o, Namespace.file(o.file(), o.size(), o.blockSize()));
    }

    @Test
    void sizing() throws IOException {
        Path f = dir.resolve("ns.img");
        try (Namespace ns = Namespace.file(f, OptionalLong.of(1 << 20), 4096)) {
            assertThat(ns.blocks()).isEqualTo(256);
        }
        assertThat(Files.size(f)).isEqualTo(1 << 20);
        try (Namespace ns = Namespace.file(f, OptionalLong.empty(), 4096)) {
            assertThat(ns.bytes()).as("an existing file keeps its size").isEqualTo(1 << 20);
        }
        try (Namespace ns = Namespace.file(f, OptionalLong.of(2 << 20), 4096)) {
            assertThat(ns.bytes()).isEqualTo(2 << 20);
        }
        assertThat(Files.size(f)).as("grown").isEqualTo(2 << 20);
        assertThatThrownBy(() -> Namespace.file(f, OptionalLong.of(1 << 20), 4096))
                .hasMessageContaining("never truncated");
        assertThat(Files.size(f)).as("not truncated").isEqualTo(2 << 20);
        Path odd = dir.resolve("odd.img");
        Files.write(odd, new byte[1000]);
        assertThatThrownBy(() -> Namespace.file(odd, OptionalLong.empty(), 512)).hasMessageContaining("whole number");
        try (Namespace ns = Namespace.file(dir.resolve("new.img"), OptionalLong.empty(), 512)) {
            assertThat(ns.bytes()).as("a new file gets the default size").isEqualTo(64L << 20);
            assertThatThrownBy(() -> Namespace.file(dir.resolve("new.img"), OptionalLong.empty(), 512))
                    .hasMessageContaining("in use");
        }
    }

    @Test
    void fileIoRunsOnTheIoExecutorAndPersistsAcrossInstances() throws IOException {
        Path f = dir.resolve("persist.img");
        byte[] data = new byte[3 * 4096];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i % 251);
        }
        Harness one = target(f, "1M");
        Queue a = one.adminEnabled();
        Queue q = one.io(a, 1);
        int answered = q.wire.cqes.size();
        int key = one.nextKey++;
        long addr = one.host.register(key, 0x40000, data.length);
        System.arraycopy(data, 0, one.host.mem, 0x40000, data.length);
        q.q.capsule(java.lang.foreign.MemorySegment.ofArray(
                Sqe.op(0x01).nsid(1).cdw64(10, 7).cdw(12, 2).keyed(addr, data.length, key, false).capsule()));
        // nothing answered yet: the write waits on the I/O executor, not on the device thread
        assertThat(q.wire.cqes).hasSize(answered);
        assertThat(one.io).hasSize(1);
        one.drain();
        assertThat(q.wire.cqes).hasSize(answered + 1);
        assertThat(q.wire.cqes.getLast().sc()).isZero();
        assertThat(q.send(Sqe.op(0x00).nsid(1)).sc()).as("flush = fdatasync").isZero();
        // Write Zeroes and DSM on a file
        assertThat(q.send(Sqe.op(0x08).nsid(1).cdw64(10, 20).cdw(12, 0)).sc()).isZero();
        a.q.close();
        one.target.close();

        Harness two = target(f, null);
        assertThat(two.target.namespace.bytes()).isEqualTo(1 << 20);
        Queue a2 = two.adminEnabled();
        Queue q2 = two.io(a2, 1);
        byte[] back = q2.readData(Sqe.op(0x02).nsid(1).cdw64(10, 7).cdw(12, 2), 0x80000, data.length);
        assertThat(back).isEqualTo(data);
        byte[] z = q2.readData(Sqe.op(0x02).nsid(1).cdw64(10, 20).cdw(12, 0), 0x80000, 4096);
        assertThat(z).isEqualTo(new byte[4096]);
        assertThat(two.counters.traffic.get(NvmeofCounters.Traffic.BYTES_READ)).isEqualTo(data.length + 4096);
        two.target.close();
    }

    @Test
    void aFailedTransferAfterFileReadFailsTheController() throws IOException {
        Harness h = target(dir.resolve("f.img"), "1M");
        Queue a = h.adminEnabled();
        Queue q = h.io(a, 1);
        int key = h.nextKey++;
        long addr = h.host.register(key, 0x1000, 4096);
        h.host.invalidate(key);  // the host invalidated the key before our RDMA WRITE
        Cqe c = q.send(Sqe.op(0x02).nsid(1).cdw(12, 0).keyed(addr, 4096, key, true));
        assertThat(c).isNull();
        assertThat(q.wire.disconnects).isEqualTo(1);
        assertThat(a.wire.disconnects).isEqualTo(1);
        h.target.close();
    }

    @Test
    void writeThroughWhenTheWriteCacheIsOff() throws IOException {
        Harness h = target(dir.resolve("wt.img"), "1M");
        Queue a = h.adminEnabled();
        assertThat(a.send(Sqe.op(0x09).cdw(10, 0x06).cdw(11, 0)).sc()).isZero();
        Queue q = h.io(a, 1);
        byte[] block = new byte[4096];
        Arrays.fill(block, (byte) 9);
        assertThat(q.send(Sqe.op(0x01).nsid(1).cdw(12, 0).inline(block)).sc()).isZero();
        assertThat(q.readData(Sqe.op(0x02).nsid(1).cdw(12, 0), 0x1000, 4096)).isEqualTo(block);
        h.target.close();
    }
}
