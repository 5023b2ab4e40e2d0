package ernic.vfiouser.pci;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PciConfigSpaceTest {
    // Offsets the tests read by hand, from PCI Local Bus 3.0 6.1 and PCIe Base 3.0 7.8.
    private static final int CLASS_PROG_IF = 0x09, CLASS_SUB = 0x0a, CLASS_BASE = 0x0b;

    /** A space like the ionic one: BAR0 64 KiB, BAR2 4 MiB 64-bit prefetchable, BAR4 8 GiB 64-bit. */
    static PciConfigSpace full() {
        return PciConfigSpace.builder()
                .vendorId(0x1dd8).deviceId(0x1002)
                .subsystemVendorId(0x1dd8).subsystemId(0x5400)
                .classCode(0x020000).revision(0x01).interruptPin(1)
                .memoryBar(0, 64 * 1024, false, false)
                .memoryBar(2, 4L << 20, true, true)
                .memoryBar(4, 8L << 30, true, false)
                .powerManagement()
                .msix(new PciConfigSpace.Msix(32, 0, 0x8000, 0, 0xa000))
                .pciExpress(4, 16)
                .build();
    }

    static PciConfigSpace plain() {
        return PciConfigSpace.builder().vendorId(0x8086).deviceId(0x1234).classCode(0x010802)
                .memoryBar(1, 4096, false, false).build();
    }

    static void write(PciConfigSpace cs, int offset, int width, long value) {
        MemorySegment src = MemorySegment.ofArray(new byte[width]);
        for (int i = 0; i < width; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (value >>> 8 * i));
        }
        cs.write(offset, src);
    }

    static void write16(PciConfigSpace cs, int offset, int value) { write(cs, offset, 2, value); }
    static void write32(PciConfigSpace cs, int offset, long value) { write(cs, offset, 4, value); }

    static byte[] snapshot(PciConfigSpace cs) {
        byte[] b = new byte[cs.size()];
        cs.read(0, MemorySegment.ofArray(b));
        return b;
    }

    @Test
    void headerHoldsTheIdentity() {
        PciConfigSpace cs = full();
        assertThat(cs.size()).isEqualTo(4096);
        assertThat(cs.readU16(0x00)).isEqualTo(0x1dd8);
        assertThat(cs.readU16(0x02)).isEqualTo(0x1002);
        assertThat(cs.readU16(0x04)).isZero();
        assertThat(cs.readU16(0x06)).isEqualTo(0x0010); // capabilities list
        assertThat(cs.readU8(0x08)).isEqualTo(0x01);
        assertThat(cs.readU8(CLASS_PROG_IF)).isZero();
        assertThat(cs.readU8(CLASS_SUB)).isZero();
        assertThat(cs.readU8(CLASS_BASE)).isEqualTo(0x02);
        assertThat(cs.readU32(0x08) >>> 8).isEqualTo(0x020000);
        assertThat(cs.readU8(0x0e)).isZero(); // header type 0, single function
        assertThat(cs.readU8(0x0f)).isZero(); // BIST
        assertThat(cs.readU32(0x28)).isZero(); // cardbus CIS
        assertThat(cs.readU16(0x2c)).isEqualTo(0x1dd8);
        assertThat(cs.readU16(0x2e)).isEqualTo(0x5400);
        assertThat(cs.readU32(0x30)).isZero(); // no expansion ROM
        assertThat(cs.readU8(0x34)).isEqualTo(0x40);
        assertThat(cs.readU8(0x3c)).isZero();
        assertThat(cs.readU8(0x3d)).isEqualTo(1);
        assertThat(cs.msix()).isEqualTo(new PciConfigSpace.Msix(32, 0, 0x8000, 0, 0xa000));
    }

    @Test
    void aSpaceWithoutCapabilitiesHasNoListAndIs256Bytes() {
        PciConfigSpace cs = plain();
        assertThat(cs.size()).isEqualTo(256);
        assertThat(cs.readU16(0x06) & 0x10).isZero();
        assertThat(cs.readU8(0x34)).isZero();
        assertThat(cs.msix()).isNull();
        assertThat(cs.msixEnabled()).isFalse();
        assertThat(cs.msixFunctionMasked()).isFalse();
    }

    @Test
    void readsLittleEndianAcrossRegisters() {
        PciConfigSpace cs = full();
        MemorySegment eight = MemorySegment.ofArray(new byte[8]);
        cs.read(0, eight);
        assertThat(eight.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(0x0010_0000_1002_1dd8L);
        MemorySegment odd = MemorySegment.ofArray(new byte[3]);
        cs.read(1, odd);
        assertThat(odd.toArray(ValueLayout.JAVA_BYTE)).containsExactly(0x1d, 0x02, 0x10);
        assertThat(cs.readU32(0)).isEqualTo(0x1002_1dd8);
    }

    @Test
    void readOnlyHeaderFieldsIgnoreWrites() {
        PciConfigSpace cs = full();
        byte[] before = snapshot(cs);
        for (int off : new int[] {0x00, 0x08, 0x0c, 0x28, 0x2c, 0x30, 0x34, 0x38}) {
            write32(cs, off, 0xffff_ffffL);
        }
        write(cs, 0x3d, 3, 0xffffff); // interrupt pin, min_gnt, max_lat
        byte[] after = snapshot(cs);
        for (int off = 0; off < 0x40; off++) {
            boolean writable = off == 0x0c || off == 0x3c || off >= 0x10 && off < 0x28;
            if (!writable) {
                assertThat(after[off]).as("byte 0x%02x", off).isEqualTo(before[off]);
            }
        }
        assertThat(cs.readU8(0x0c)).isEqualTo(0xff); // cache line size
        assertThat(cs.readU8(0x0d)).isZero(); // latency timer: hardwired 0 on PCI Express
    }

    @Test
    void latencyTimerIsWritableOnConventionalPci() {
        PciConfigSpace cs = plain();
        write(cs, 0x0d, 1, 0x40);
        assertThat(cs.readU8(0x0d)).isEqualTo(0x40);
    }

    @Test
    void interruptLineIsWritable() {
        PciConfigSpace cs = full();
        write(cs, 0x3c, 1, 0x0b);
        assertThat(cs.readU8(0x3c)).isEqualTo(0x0b);
    }

    @Test
    void commandKeepsOnlyItsWritableBits() {
        PciConfigSpace cs = full();
        write16(cs, 0x04, 0xffff);
        assertThat(cs.readU16(0x04)).isEqualTo(0x0547);
        assertThat(cs.memorySpaceEnabled()).isTrue();
        assertThat(cs.busMasterEnabled()).isTrue();
        assertThat(cs.intxDisabled()).isTrue();
        write16(cs, 0x04, 0x0002);
        assertThat(cs.memorySpaceEnabled()).isTrue();
        assertThat(cs.busMasterEnabled()).isFalse();
        assertThat(cs.intxDisabled()).isFalse();
        write(cs, 0x05, 1, 0x04); // upper byte alone: INTx disable
        assertThat(cs.readU16(0x04)).isEqualTo(0x0402);
    }

    @Test
    void statusErrorBitsAreWriteOneToClear() {
        PciConfigSpace cs = full();
        write16(cs, 0x06, 0xffff); // writing ones to clear bits that are not set sets nothing
        assertThat(cs.readU16(0x06)).isEqualTo(0x0010);
        cs.setBits(0x06, 2, 0x8000 | 0x2000 | 0x0100);
        assertThat(cs.readU16(0x06)).isEqualTo(0xa110);
        write16(cs, 0x06, 0x0100);
        assertThat(cs.readU16(0x06)).isEqualTo(0xa010);
        write16(cs, 0x06, 0x0000);
        assertThat(cs.readU16(0x06)).isEqualTo(0xa010);
        write16(cs, 0x06, 0xffff);
        assertThat(cs.readU16(0x06)).isEqualTo(0x0010);
    }

    @Test
    void a32BitBarSizesAndTakesAnAddress() {
        PciConfigSpace cs = full();
        assertThat(cs.readU32(0x10)).isZero();
        write32(cs, 0x10, 0xffff_ffffL);
        assertThat(cs.readU32(0x10)).isEqualTo(0xffff_0000); // ~(64 KiB - 1), memory, 32-bit
        write32(cs, 0x10, 0xfebe_0000L);
        assertThat(cs.readU32(0x10)).isEqualTo(0xfebe_0000);
        write32(cs, 0x10, 0x1234_5678L);
        assertThat(cs.readU32(0x10)).isEqualTo(0x1234_0000);
        write(cs, 0x13, 1, 0xab); // one byte of it
        assertThat(cs.readU32(0x10)).isEqualTo(0xab34_0000);
    }

    @Test
    void a64BitPrefetchableBarSizesInBothHalves() {
        PciConfigSpace cs = full();
        assertThat(cs.readU32(0x18)).isEqualTo(0b1100); // 64-bit, prefetchable
        assertThat(cs.readU32(0x1c)).isZero();
        write32(cs, 0x18, 0xffff_ffffL);
        write32(cs, 0x1c, 0xffff_ffffL);
        long sizeMask = Integer.toUnsignedLong(cs.readU32(0x18) & ~0xf) | (long) cs.readU32(0x1c) << 32;
        assertThat(~sizeMask + 1).isEqualTo(4L << 20);
        assertThat(cs.readU32(0x18)).isEqualTo(0xffc0_000c);
        assertThat(cs.readU32(0x1c)).isEqualTo(0xffff_ffff);
        write(cs, 0x18, 8, 0x0000_0038_0040_0000L);
        assertThat(cs.readU32(0x18)).isEqualTo(0x0040_000c);
        assertThat(cs.readU32(0x1c)).isEqualTo(0x38);
    }

    @Test
    void a64BitBarAbove4GiBHasAddressBitsOnlyInTheUpperHalf() {
        PciConfigSpace cs = full();
        write(cs, 0x20, 8, -1L);
        assertThat(cs.readU32(0x20)).isEqualTo(0b0100); // 64-bit, not prefetchable, no low address bits
        assertThat(cs.readU32(0x24)).isEqualTo(0xffff_fffe); // 8 GiB
        write(cs, 0x20, 8, 0x0000_0004_0000_0000L);
        assertThat(cs.readU32(0x24)).isEqualTo(4);
    }

    @Test
    void unusedBarsReadZeroAndIgnoreWrites() {
        PciConfigSpace cs = full();
        for (int bar : new int[] {1}) {
            write32(cs, 0x10 + 4 * bar, 0xffff_ffffL);
            assertThat(cs.readU32(0x10 + 4 * bar)).isZero();
        }
        PciConfigSpace p = plain();
        for (int bar : new int[] {0, 2, 3, 4, 5}) {
            write32(p, 0x10 + 4 * bar, 0xffff_ffffL);
            assertThat(p.readU32(0x10 + 4 * bar)).isZero();
        }
        write32(p, 0x14, 0xffff_ffffL);
        assertThat(p.readU32(0x14)).isEqualTo(0xffff_f000);
    }

    /** Walks the list from 0x34; returns id to offset, in list order. */
    static List<int[]> capabilities(PciConfigSpace cs) {
        List<int[]> caps = new ArrayList<>();
        Set<Integer> seen = new HashSet<>();
        for (int at = cs.readU8(0x34); at != 0; at = cs.readU8(at + 1)) {
            assertThat(at).isBetween(0x40, 0xfc);
            assertThat(at % 4).isZero();
            assertThat(seen.add(at)).as("loop at 0x%x", at).isTrue();
            caps.add(new int[] {cs.readU8(at), at});
        }
        return caps;
    }

    @Test
    void capabilityChainIsInOrderAlignedAndEnds() {
        PciConfigSpace cs = full();
        List<int[]> caps = capabilities(cs);
        assertThat(caps).extracting(c -> c[0]).containsExactly(0x01, 0x11, 0x10);
        assertThat(caps).extracting(c -> c[1]).containsExactly(0x40, 0x48, 0x54);
        int pcieEnd = caps.get(2)[1] + 60;
        assertThat(pcieEnd).isLessThanOrEqualTo(256);
        assertThat(cs.capabilityOffset(0x10)).isEqualTo(0x54);
    }

    @Test
    void capabilitiesLinkInTheOrderTheyWereAdded() {
        PciConfigSpace cs = PciConfigSpace.builder().vendorId(1).memoryBar(0, 4096, false, false)
                .pciExpress(1, 1).msix(new PciConfigSpace.Msix(1, 0, 0, 0, 0x800)).powerManagement().build();
        assertThat(capabilities(cs)).extracting(c -> c[0]).containsExactly(0x10, 0x11, 0x01);
        assertThat(capabilities(cs)).extracting(c -> c[1]).containsExactly(0x40, 0x7c, 0x88);
    }

    @Test
    void powerManagementHasVersion3AndOnlyD0AndD3hot() {
        PciConfigSpace cs = full();
        int pm = 0x40;
        assertThat(cs.readU16(pm + 2) & 0x7).isEqualTo(3);
        assertThat(cs.readU16(pm + 2) & 0x0600).isZero(); // no D1, D2
        assertThat(cs.readU16(pm + 4) & 3).isZero();
        write16(cs, pm + 4, 0x0003);
        assertThat(cs.readU16(pm + 4) & 3).isEqualTo(3);
        write16(cs, pm + 4, 0x0001); // D1 is not supported: discarded
        assertThat(cs.readU16(pm + 4) & 3).isEqualTo(3);
        write16(cs, pm + 4, 0xfffc);
        assertThat(cs.readU16(pm + 4) & 3).isZero();
        assertThat(cs.readU16(pm + 4) & ~0x8).isZero(); // nothing else became set
    }

    @Test
    void msixControlHasReadOnlySizeAndWritableEnableAndMask() {
        PciConfigSpace cs = full();
        int msix = 0x48;
        assertThat(cs.readU16(msix + 2)).isEqualTo(31);
        assertThat(cs.readU32(msix + 4)).isEqualTo(0x8000);
        assertThat(cs.readU32(msix + 8)).isEqualTo(0xa000);
        write16(cs, msix + 2, 0x8000);
        assertThat(cs.msixEnabled()).isTrue();
        assertThat(cs.msixFunctionMasked()).isFalse();
        write16(cs, msix + 2, 0xffff);
        assertThat(cs.readU16(msix + 2)).isEqualTo(0xc000 | 31);
        assertThat(cs.msixFunctionMasked()).isTrue();
        write(cs, msix + 3, 1, 0x00);
        assertThat(cs.msixEnabled()).isFalse();
        assertThat(cs.msixFunctionMasked()).isFalse();
        write32(cs, msix + 4, 0xffff_ffffL);
        write32(cs, msix + 8, 0);
        assertThat(cs.readU32(msix + 4)).isEqualTo(0x8000);
        assertThat(cs.readU32(msix + 8)).isEqualTo(0xa000);
    }

    @Test
    void msixBirsLiveInTheLowBits() {
        PciConfigSpace cs = PciConfigSpace.builder().vendorId(1).memoryBar(2, 1 << 16, true, false)
                .memoryBar(4, 1 << 12, false, false).msix(new PciConfigSpace.Msix(64, 2, 0x100, 4, 0x800)).build();
        assertThat(cs.readU32(0x44)).isEqualTo(0x102);
        assertThat(cs.readU32(0x48)).isEqualTo(0x804);
    }

    @Test
    void pciExpressShowsItsLink() {
        PciConfigSpace cs = full();
        int exp = 0x54;
        assertThat(cs.readU8(exp)).isEqualTo(0x10);
        assertThat(cs.readU8(exp + 1)).isZero(); // last in the list
        assertThat(cs.readU16(exp + 2) & 0xf).isEqualTo(2); // version
        assertThat(cs.readU16(exp + 2) >> 4 & 0xf).isZero(); // endpoint
        assertThat(cs.readU32(exp + 4) & 7).isEqualTo(1); // max payload 256
        int lnkcap = cs.readU32(exp + 0x0c);
        assertThat(lnkcap & 0xf).isEqualTo(4); // 16 GT/s
        assertThat(lnkcap >> 4 & 0x3f).isEqualTo(16);
        int lnksta = cs.readU16(exp + 0x12);
        assertThat(lnksta & 0xf).isEqualTo(4);
        assertThat(lnksta >> 4 & 0x3f).isEqualTo(16);
        assertThat(cs.readU32(exp + 0x2c) & 0xfe).isEqualTo(0b0001_1110); // 2.5, 5, 8, 16 GT/s
        assertThat(cs.readU16(exp + 0x30) & 0xf).isEqualTo(4); // target link speed
        write16(cs, exp + 0x12, 0xffff);
        assertThat(cs.readU16(exp + 0x12)).isEqualTo(lnksta);
    }

    @Test
    void supportedSpeedsVectorCoversEachMaximum() {
        for (int speed = 1; speed <= 5; speed++) {
            PciConfigSpace cs = PciConfigSpace.builder().vendorId(1).pciExpress(speed, 1).build();
            assertThat(cs.readU32(0x40 + 0x2c)).isEqualTo(((1 << speed) - 1) << 1);
            assertThat(cs.readU32(0x40 + 0x0c) & 0x3ff).isEqualTo(speed | 1 << 4);
        }
    }

    @Test
    void pciExpressDeviceControlAndStatus() {
        PciConfigSpace cs = full();
        int exp = 0x54;
        assertThat(cs.readU16(exp + 8)).isEqualTo(0x2810); // RO, no snoop, MRRS 512
        write16(cs, exp + 8, 0xffff);
        assertThat(cs.readU16(exp + 8) & 0x8600).isZero(); // phantom, aux power, FLR: not supported
        assertThat(cs.readU16(exp + 8) >> 5 & 7).isZero(); // MPS 4096 is above the 256 supported: discarded
        write16(cs, exp + 8, 0x202f);
        assertThat(cs.readU16(exp + 8)).isEqualTo(0x202f); // MPS 256, error reporting on
        cs.setBits(exp + 0x0a, 2, 0x5);
        write16(cs, exp + 0x0a, 0x1);
        assertThat(cs.readU16(exp + 0x0a)).isEqualTo(0x4);
    }

    @Test
    void extendedSpaceEndsAtOnce() {
        PciConfigSpace cs = full();
        assertThat(cs.readU32(0x100)).isZero();
        write32(cs, 0x100, 0xffff_ffffL);
        write(cs, 0xffc, 4, -1);
        assertThat(cs.readU32(0x100)).isZero();
        assertThat(cs.readU32(0xffc)).isZero();
    }

    @Test
    void resetRestoresPowerOnValues() {
        PciConfigSpace cs = full();
        byte[] powerOn = snapshot(cs);
        write16(cs, 0x04, 0x0406);
        write(cs, 0x10, 24, -1L);
        write(cs, 0x18, 8, 0x0000_0038_0040_0000L);
        write(cs, 0x3c, 1, 11);
        write16(cs, 0x40 + 4, 3);
        write16(cs, 0x48 + 2, 0xc000);
        write16(cs, 0x54 + 8, 0x202f);
        assertThat(snapshot(cs)).isNotEqualTo(powerOn);
        assertThat(cs.msixEnabled()).isTrue();
        cs.reset();
        assertThat(snapshot(cs)).isEqualTo(powerOn);
        assertThat(cs.msixEnabled()).isFalse();
        assertThat(cs.busMasterEnabled()).isFalse();
        assertThat(cs.readU32(0x10)).isZero();
        assertThat(cs.readU32(0x18)).isEqualTo(0xc);
    }

    @Test
    void wholeSpaceAccessesWork() {
        PciConfigSpace cs = full();
        byte[] ones = new byte[cs.size()];
        java.util.Arrays.fill(ones, (byte) 0xff);
        cs.write(0, MemorySegment.ofArray(ones));
        assertThat(cs.readU16(0)).isEqualTo(0x1dd8);
        assertThat(cs.readU16(6)).isEqualTo(0x0010);
        assertThatThrownBy(() -> cs.read(4095, MemorySegment.ofArray(new byte[2])))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void builderRejectsWhatHardwareCannotBe() {
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(6, 16, false, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(5, 16, true, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 24, false, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 8, false, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 1L << 32, false, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 16, true, false).memoryBar(1, 16, false, false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().pciExpress(4, 3))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().pciExpress(6, 1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().powerManagement().powerManagement())
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().msix(new PciConfigSpace.Msix(0, 0, 0, 0, 0x800)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().msix(new PciConfigSpace.Msix(4, 0, 0x1004, 0, 0x800)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 4096, false, false)
                .msix(new PciConfigSpace.Msix(4, 1, 0, 0, 0x800)).build())
                .isInstanceOf(IllegalArgumentException.class); // table in a BAR that does not exist
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 4096, false, false)
                .msix(new PciConfigSpace.Msix(256, 0, 0, 0, 0x800)).build())
                .isInstanceOf(IllegalArgumentException.class); // 4 KiB table does not fit with the PBA
        assertThatThrownBy(() -> PciConfigSpace.builder().memoryBar(0, 4096, false, false)
                .msix(new PciConfigSpace.Msix(4, 0, 0, 0, 0x38)).build())
                .isInstanceOf(IllegalArgumentException.class); // PBA overlaps the table
        assertThatThrownBy(() -> PciConfigSpace.builder().vendorId(0x10000))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---- property ------------------------------------------------------------------------------

    record Write(int offset, byte[] data) {}

    @Provide
    Arbitrary<List<Write>> writes() {
        Arbitrary<Integer> offsets = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(0, 0x3f)),
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(0x40, 0xff)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 4095)));
        Arbitrary<Integer> widths = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, Arbitraries.integers().between(1, 8)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(1, 4096)));
        Arbitrary<Write> one = Combinators.combine(offsets, widths, Arbitraries.longs(), Arbitraries.of(false, true))
                .as((offset, width, seed, ones) -> {
                    byte[] data = new byte[Math.min(width, 4096 - offset)];
                    if (ones) {
                        java.util.Arrays.fill(data, (byte) 0xff);
                    } else {
                        new Random(seed).nextBytes(data);
                    }
                    return new Write(offset, data);
                });
        return one.list().ofMaxSize(64);
    }

    // Edge cases (empty lists, zero seeds) would use up the tries; random lists of writes find more.
    @Property(tries = 500, edgeCases = net.jqwik.api.EdgeCasesMode.NONE)
    void randomWritesNeverChangeReadOnlyFields(@ForAll("writes") List<Write> writes) {
        PciConfigSpace cs = full();
        PciConfigSpace fresh = full();
        for (Write w : writes) {
            cs.write(w.offset(), MemorySegment.ofArray(w.data()));
        }
        assertThat(cs.readU32(0x00)).isEqualTo(fresh.readU32(0x00)); // vendor, device
        assertThat(cs.readU32(0x08)).isEqualTo(fresh.readU32(0x08)); // revision, class
        assertThat(cs.readU8(0x0e)).isEqualTo(0);
        assertThat(cs.readU32(0x2c)).isEqualTo(fresh.readU32(0x2c));
        assertThat(cs.readU32(0x30)).isZero();
        assertThat(cs.readU8(0x34)).isEqualTo(0x40);
        assertThat(cs.readU8(0x3d)).isEqualTo(1);
        assertThat(cs.readU16(0x06) & 0x10).isEqualTo(0x10);
        assertThat(cs.readU32(0x10) & 0xf).isZero();
        assertThat(cs.readU32(0x18) & 0xf).isEqualTo(0xc);
        assertThat(cs.readU32(0x20) & 0xf).isEqualTo(0x4);
        assertThat(cs.readU32(0x14)).isZero();
        assertThat(capabilities(cs)).extracting(c -> c[0]).containsExactly(0x01, 0x11, 0x10);
        assertThat(capabilities(cs)).extracting(c -> c[1]).containsExactly(0x40, 0x48, 0x54);
        assertThat(cs.readU16(0x48 + 2) & 0x7ff).isEqualTo(31);
        assertThat(cs.readU32(0x48 + 4)).isEqualTo(0x8000);
        assertThat(cs.readU32(0x48 + 8)).isEqualTo(0xa000);
        assertThat(cs.readU32(0x54 + 0x0c)).isEqualTo(fresh.readU32(0x54 + 0x0c));
        assertThat(cs.readU16(0x54 + 0x12)).isEqualTo(fresh.readU16(0x54 + 0x12));
        assertThat(cs.readU32(0x100)).isZero();
        assertThat(cs.readU16(0x40 + 4) & 3).isIn(0, 3);
        assertThat(cs.readU16(0x54 + 8) >> 5 & 7).isLessThanOrEqualTo(1);
        cs.reset();
        assertThat(snapshot(cs)).isEqualTo(snapshot(fresh));
    }
}
