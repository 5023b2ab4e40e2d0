package ernic.ionic;

import ernic.model.InProcessBinding;
import ernic.model.IonicDriverModel;
import ernic.model.rdma.RawCqe;
import ernic.model.rdma.RdmaRaw;
import ernic.vfiouser.server.InProcessContext;
import ernic.vfiouser.server.IrqType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;

import static ernic.model.rdma.Fw.be16;
import static ernic.model.rdma.Fw.be32;
import static ernic.model.rdma.Fw.le64;
import static ernic.model.rdma.Fw.u8;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@link IonicDevice} driven by the independent driver model ({@code ionic-driver-model}, written from the
 * C headers) through its in-process binding, wired by vfio-user-protocol's {@link InProcessContext}: the model's
 * region accesses go to the device's region handlers and config space, its memfd guest RAM is mapped as a DMA_MAP
 * would, and the device's MSI-X triggers reach the model. There is no event loop: the device does its work inside
 * each access, and timers are ticked by the test. Every MSI-X is also counted here, for tests that ask how often a
 * vector fired in all (the model's wait takes the count).
 */
final class ModelGuest implements AutoCloseable {
    static final long RAM_IOVA = IonicDriverModel.RAM_IOVA;
    /** An Ethernet (14), IPv4 (20) and UDP (8) header template, as {@link #ipv4Header} writes it. */
    static final int HDR_LEN = 14 + 20 + 8;

    final IonicDevice dev;
    final InProcessContext context;
    final InProcessBinding binding;
    final IonicDriverModel drv;
    private final long[] fired;

    /** Attaches {@code dev} to a guest with {@code ramBytes} of RAM, and turns on memory space and bus mastering. */
    ModelGuest(IonicDevice dev, long ramBytes) {
        this.dev = dev;
        this.fired = new long[dev.irqCount(IrqType.MSIX)];
        this.context = new InProcessContext(dev, this::msix);
        try {
            this.binding = InProcessBinding.builder(fired.length, RAM_IOVA, ramBytes)
                    .regions(context::read, context::write)
                    .progress(() -> { }) // the device works inside each access
                    .reset(dev::reset)
                    .ram(context::map)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        context.attach();
        try {
            this.drv = new IonicDriverModel(binding);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void msix(int vector) {
        fired[vector]++;
        binding.signal(vector);
    }

    /** Guest memory at {@code iova}, as the model sees it. */
    MemorySegment at(long iova, long length) {
        return drv.mem(iova, length);
    }

    /** A zeroed, page-aligned block of guest RAM. */
    long alloc(long bytes) {
        return drv.alloc(bytes);
    }

    /** CQ {@code id} on EQ 2 with {@code 1 << log2} 32-byte CQEs in fresh guest RAM, created through {@code rdma}. */
    RawCqe.Ring createCq(RdmaRaw rdma, int id, int log2) throws IOException {
        long ring = alloc(32L << log2);
        assertThat(rdma.createCq(id, 2, ring, log2).status()).isZero();
        return rdma.cqRing(ring, log2);
    }

    /** A page table (le64 addresses, as CREATE_MR takes it) of {@code pages} consecutive 4 KiB pages from {@code first}. */
    long pageTable(long first, int pages) {
        long table = alloc(8L * pages);
        MemorySegment t = at(table, 8L * pages);
        for (int i = 0; i < pages; i++) {
            le64(t, 8L * i, first + 4096L * i);
        }
        return table;
    }

    /**
     * An Ethernet/IPv4/UDP header template ({@link #HDR_LEN} bytes, MACs zero) from {@code src} to {@code dst} in fresh
     * guest RAM, as a driver hands it to MODIFY_QP and CREATE_AH: EtherType IPv4 at 12, the IPv4 header at 14 (version 4,
     * IHL 5; TTL 64; protocol UDP; source and destination at 12 and 16 in it), the UDP header at 34 with the RoCEv2
     * destination port 4791.
     */
    long ipv4Header(int src, int dst) {
        long at = alloc(64);
        MemorySegment h = at(at, HDR_LEN);
        be16(h, 12, 0x0800);
        u8(h, 14, 0x45);
        u8(h, 14 + 8, 64);
        u8(h, 14 + 9, 17);
        be32(h, 14 + 12, src);
        be32(h, 14 + 16, dst);
        be16(h, 34 + 2, 4791);
        return at;
    }

    /** How often MSI-X {@code vector} fired since the guest came up. */
    long count(int vector) {
        return fired[vector];
    }

    /** Detaches the device and frees the guest RAM. */
    @Override
    public void close() {
        context.close();
        drv.close();
    }
}
