package ernic.vfiouser.server;

import ernic.vfiouser.pci.PciConfigSpace;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InProcessContextTest {
    /** A device with one 16-byte BAR 0 backed by an array, and two MSI-X vectors. */
    static final class Bar0Device implements VfioUserDevice {
        final byte[] bar = new byte[16];
        final PciConfigSpace config = PciConfigSpace.builder().vendorId(0x1dd8).deviceId(0x1002)
                .memoryBar(0, 16, false, false).build();
        DeviceContext attached;
        int detached;

        @Override
        public PciFunction pci() {
            return new PciFunction(config, List.of(Region.of(0, bar.length, new RegionHandler() {
                @Override
                public void read(long offset, MemorySegment dst) {
                    MemorySegment.copy(MemorySegment.ofArray(bar), offset, dst, 0, dst.byteSize());
                }

                @Override
                public void write(long offset, MemorySegment src) {
                    MemorySegment.copy(src, 0, MemorySegment.ofArray(bar), offset, src.byteSize());
                }
            })));
        }

        @Override
        public int irqCount(IrqType type) {
            return type == IrqType.MSIX ? 2 : 0;
        }

        @Override
        public void attach(DeviceContext context) {
            attached = context;
        }

        @Override
        public void reset() {}

        @Override
        public void detach() {
            detached++;
        }
    }

    @Test
    void accessesGoToTheRegionOrConfigSpaceAndOutOfRangeOnesAreRefused() {
        Bar0Device dev = new Bar0Device();
        List<Integer> fired = new ArrayList<>();
        try (Arena arena = Arena.ofConfined(); InProcessContext ctx = new InProcessContext(dev, fired::add)) {
            ctx.attach();
            assertThat(dev.attached).isSameAs(ctx);
            assertThat(ctx.eventLoop()).isNull();

            MemorySegment four = arena.allocate(4);
            four.set(ValueLayout.JAVA_INT_UNALIGNED, 0, 0x11223344);
            ctx.write(0, 12, four);
            MemorySegment back = arena.allocate(4);
            ctx.read(0, 12, back);
            assertThat(back.get(ValueLayout.JAVA_INT_UNALIGNED, 0)).isEqualTo(0x11223344);

            MemorySegment id = arena.allocate(2);
            ctx.read(Connection.CONFIG_REGION, 0, id);
            assertThat(id.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0) & 0xffff).isEqualTo(0x1dd8);

            assertThatThrownBy(() -> ctx.read(0, 13, four)).isInstanceOf(InProcessContext.Refused.class);
            assertThatThrownBy(() -> ctx.write(0, -1, four)).isInstanceOf(InProcessContext.Refused.class);
            assertThatThrownBy(() -> ctx.read(2, 0, four)).isInstanceOf(InProcessContext.Refused.class);
            assertThatThrownBy(() -> ctx.read(Connection.CONFIG_REGION, dev.config.size() - 2, four))
                    .isInstanceOf(InProcessContext.Refused.class);

            ctx.trigger(IrqType.MSIX, 1);
            ctx.trigger(IrqType.MSIX, 2);   // no such vector
            ctx.trigger(IrqType.MSI, 0);    // not MSI-X
            assertThat(fired).containsExactly(1);
        }
        assertThat(dev.detached).isEqualTo(1);
    }
}
