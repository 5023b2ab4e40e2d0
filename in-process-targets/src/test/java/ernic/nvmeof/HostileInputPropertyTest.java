package ernic.nvmeof;

import ernic.nvmeof.Harness.Queue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whatever a hostile host sends (capsules and MADs of random bytes, with the opcodes and SGL types it
 * might pick), nothing throws, a capsule gets at most one response, and the target still serves.
 */
class HostileInputPropertyTest {
    @Provide
    Arbitrary<List<byte[]>> capsules() {
        Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMinSize(0).ofMaxSize(64 + 8192 + 16);
        return raw.map(b -> {
            if (b.length >= 64) {
                b[1] = (byte) (b[1] & 0x03 | 0x40);   // mostly well-formed flags, so the deeper paths run
                int[] types = {0x40, 0x4f, 0x01, 0x00, 0x20};
                b[39] = (byte) types[Math.floorMod(b[38], types.length)];
            }
            return b;
        }).list().ofMaxSize(40);
    }

    @Property(tries = 300)
    void capsulesNeverThrow(@ForAll("capsules") List<byte[]> capsules) {
        Harness h = new Harness("nvmeof:size=1M,bs=512,queues=2");
        Queue a = h.adminEnabled();
        Queue q = h.io(a, 1);
        int keyed = h.nextKey++;
        h.host.register(keyed, 0, 1 << 20);
        for (byte[] c : capsules) {
            Queue target = (c.length & 1) == 0 ? a : q;
            int before = target.wire.cqes.size();
            target.send(c);
            assertThat(target.wire.cqes.size() - before).isLessThanOrEqualTo(1);
        }
        assertThat(h.target.refusals.count("internal error")).as("no exception caught in capsule()").isZero();
        h.target.tick();
        Queue fresh = h.new Queue(0, 31);
        assertThat(fresh.connect(31, 0xffff, h.options.nqn()).sc()).isZero();
    }

    @Provide
    Arbitrary<byte[]> mads() {
        return Arbitraries.bytes().array(byte[].class).ofSize(256).map(b -> {
            b[0] = 1;
            b[1] = 0x07;
            b[2] = 2;
            b[3] = 0x03;
            b[16] = 0;
            b[17] = (byte) (0x10 + Math.floorMod(b[17], 8));
            return b;
        });
    }

    @Property(tries = 500)
    void madsNeverThrow(@ForAll("mads") byte[] mad) {
        NvmeofCounters counters = new NvmeofCounters();
        CmResponder cm = new CmResponder(NvmeofOptions.parse("nvmeof", 1 << 16, 1 << 12), counters,
                new CmResponder.Listener() {
                    @Override
                    public void established(CmResponder.Connection c) {
                    }

                    @Override
                    public void closed(CmResponder.Connection c) {
                    }
                });
        for (byte[] out : cm.receive(mad)) {
            assertThat(out).hasSize(256);
        }
    }
}
