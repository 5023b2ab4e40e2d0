package ernic.vfiouser.server;

import ernic.vfiouser.pci.PciConfigSpace;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A BAR is declared by the config space and by its region: the function takes them only when they agree. */
class PciFunctionTest {
    static final RegionHandler NOTHING = new RegionHandler() {
        @Override
        public void read(long offset, MemorySegment dst) {}

        @Override
        public void write(long offset, MemorySegment src) {}
    };
    static final PciConfigSpace BARS_0_AND_2 = PciConfigSpace.builder().vendorId(1)
            .memoryBar(0, 4096, true, false).memoryBar(2, 1 << 16, false, false).build();

    @Test
    void regionsThatMatchTheBarsAreTaken() {
        PciFunction f = new PciFunction(BARS_0_AND_2, List.of(Region.of(0, 4096, NOTHING), Region.of(2, 1 << 16, NOTHING)));
        assertThat(f.regions()).extracting(Region::index).containsExactly(0, 2);
        assertThat(BARS_0_AND_2.barSize(1)).as("the upper half of 64-bit BAR 0").isZero();
    }

    @Test
    void aRegionOfAnotherSizeThanItsBarIsRefused() {
        assertThatThrownBy(() -> new PciFunction(BARS_0_AND_2,
                List.of(Region.of(0, 8192, NOTHING), Region.of(2, 1 << 16, NOTHING))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("BAR 0 is 4096 bytes in the config space and 8192 bytes as a region");
    }

    @Test
    void aBarWithoutARegionIsRefused() {
        assertThatThrownBy(() -> new PciFunction(BARS_0_AND_2, List.of(Region.of(0, 4096, NOTHING))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("BAR 2 is 65536 bytes in the config space and 0 bytes as a region");
    }

    @Test
    void aRegionWithoutABarIsRefused() {
        assertThatThrownBy(() -> new PciFunction(BARS_0_AND_2, List.of(Region.of(0, 4096, NOTHING),
                Region.of(2, 1 << 16, NOTHING), Region.of(4, 4096, NOTHING))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("BAR 4 is 0 bytes in the config space and 4096 bytes as a region");
    }

    @Test
    void twoRegionsForOneBarAreRefused() {
        assertThatThrownBy(() -> new PciFunction(BARS_0_AND_2, List.of(Region.of(0, 4096, NOTHING),
                Region.of(0, 4096, NOTHING), Region.of(2, 1 << 16, NOTHING))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("BAR 0 has two regions");
    }
}
