package ernic.model;

import ernic.vfiouser.sys.LibC;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-process binding with a "device" made of a register file in a byte array: accesses arrive at the
 * functions with the right region, offset and bytes; guest RAM is a memfd the device can map itself; interrupts
 * come out after the device has run. Then the Ethernet model's device-command handshake against it.
 */
class InProcessBindingTest {
    static final long IOVA = 0x1000_0000L, RAM = 1 << 20;

    /** BAR 0 and config space as byte arrays; every write recorded as "region:offset:width=value". */
    final byte[] bar0 = new byte[0x4000], config = new byte[256];
    final List<String> writes = new ArrayList<>();
    Runnable onProgress = () -> {};
    int progressRuns;
    long handedIova, handedSize;
    int handedFd = -1;

    byte[] regionOf(int region) {
        return region == DeviceBinding.CONFIG ? config : bar0;
    }

    InProcessBinding binding() throws Exception {
        return InProcessBinding.builder(4, IOVA, RAM)
                .regions((region, offset, buf) -> buf.copyFrom(MemorySegment.ofArray(regionOf(region))
                                .asSlice(offset, buf.byteSize())),
                        (region, offset, buf) -> {
                            MemorySegment.ofArray(regionOf(region)).asSlice(offset, buf.byteSize()).copyFrom(buf);
                            long v = 0;
                            for (int i = (int) buf.byteSize() - 1; i >= 0; i--) {
                                v = v << 8 | buf.get(ValueLayout.JAVA_BYTE, i) & 0xff;
                            }
                            writes.add(region + ":" + Long.toHexString(offset) + ":" + buf.byteSize() + "="
                                    + Long.toHexString(v));
                        })
                .progress(() -> {
                    progressRuns++;
                    onProgress.run();
                })
                .reset(() -> writes.add("reset"))
                .ram((iova, size, fd, memory) -> {
                    handedIova = iova;
                    handedSize = size;
                    handedFd = fd;
                })
                .build();
    }

    @Test
    void accessesReachTheDeviceLittleEndianWithTheirWidth() throws Exception {
        try (InProcessBinding b = binding()) {
            b.writeLong(DeviceBinding.BAR0, 0x10, 4, 0x1122_3344L);
            assertThat(bar0[0x10]).isEqualTo((byte) 0x44);
            assertThat(bar0[0x13]).isEqualTo((byte) 0x11);
            assertThat(b.readLong(DeviceBinding.BAR0, 0x10, 2)).isEqualTo(0x3344L);
            b.writePosted(DeviceBinding.BAR2, 0, 8, -2L);
            assertThat(b.readLong(DeviceBinding.BAR2, 0, 8)).isEqualTo(-2L);
            b.writeBytes(DeviceBinding.CONFIG, 4, new byte[] {6, 0});
            assertThat(b.readBytes(DeviceBinding.CONFIG, 4, 2)).containsExactly(6, 0);
            assertThat(writes).containsExactly("0:10:4=11223344", "2:0:8=fffffffffffffffe", "7:4:2=6");
            b.reset();
            assertThat(writes).last().isEqualTo("reset");
        }
    }

    @Test
    void guestRamIsAMemfdTheDeviceCanMapItself() throws Exception {
        try (InProcessBinding b = binding()) {
            assertThat(handedIova).isEqualTo(IOVA);
            assertThat(handedSize).isEqualTo(RAM);
            MemorySegment deviceView = LibC.mmapShared(handedFd, 0, handedSize, LibC.PROT_READ | LibC.PROT_WRITE);
            try {
                b.ram().set(ValueLayout.JAVA_LONG, 4096, 0x0123_4567_89ab_cdefL);
                assertThat(deviceView.get(ValueLayout.JAVA_LONG, 4096)).isEqualTo(0x0123_4567_89ab_cdefL);
            } finally {
                LibC.munmap(deviceView);
            }
        }
    }

    @Test
    void anInterruptIsSeenOnceAfterTheDeviceRan() throws Exception {
        try (InProcessBinding b = binding()) {
            onProgress = () -> b.signal(2);
            assertThat(b.awaitInterrupt(2, 100)).isEqualTo(1);
            onProgress = () -> {};
            assertThat(b.awaitInterrupt(2, 100)).as("no new interrupt, and no waiting for one").isZero();
            b.signal(9); // a vector the device does not have is dropped
            assertThat(b.vectors()).isEqualTo(4);
        }
    }

    /**
     * ionic_dev_cmd_go as the model does it, against a device that completes on its next run: command into
     * dev_cmd_regs.cmd, done = 0, doorbell = 1, poll done, read the completion, doorbell = 0.
     */
    @Test
    void deviceCommandHandshake() throws Exception {
        onProgress = () -> {
            if (bar0[(int) IonicDriverModel.DEVCMD_DOORBELL] == 1 && bar0[(int) IonicDriverModel.DEVCMD_DONE] == 0) {
                bar0[(int) IonicDriverModel.DEVCMD_COMP] = 0; // status OK
                bar0[(int) IonicDriverModel.DEVCMD_COMP + 2] = bar0[(int) IonicDriverModel.DEVCMD_CMD]; // echo opcode
                bar0[(int) IonicDriverModel.DEVCMD_DONE] = 1;
            }
        };
        try (IonicDriverModel drv = new IonicDriverModel(binding())) {
            assertThat(writes).as("memory space and bus master on").containsExactly("7:4:2=6");
            writes.clear();
            ByteBuffer cmd = IonicDriverModel.command(IonicDriverModel.LIF_IDENTIFY);
            IonicDriverModel.Completion c = drv.devcmd(cmd);
            assertThat(c.status()).isZero();
            assertThat(c.bytes()[2]).isEqualTo((byte) IonicDriverModel.LIF_IDENTIFY);
            assertThat(writes).containsExactly("0:808:64=" + Long.toHexString(IonicDriverModel.LIF_IDENTIFY),
                    "0:804:4=0", "0:800:4=1", "0:800:4=0");
            assertThat(progressRuns).isPositive();
            long page = drv.alloc(100);
            assertThat(page).isEqualTo(IOVA);
            assertThat(drv.alloc(1)).as("page by page").isEqualTo(IOVA + 4096);
            assertThat(drv.freeRam()).isEqualTo(RAM - 2 * 4096);
            assertThat(ByteBuffer.wrap(drv.bar0Bytes(IonicDriverModel.DEVCMD_COMP, 4)).order(ByteOrder.LITTLE_ENDIAN)
                    .getShort(2)).isEqualTo((short) IonicDriverModel.LIF_IDENTIFY);
        }
    }
}
