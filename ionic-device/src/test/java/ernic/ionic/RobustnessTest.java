package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.profile.ProfileLoader;
import ernic.model.DeviceBinding;
import ernic.model.IonicDriverModel;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static ernic.model.IonicDriverModel.*;
import static org.assertj.core.api.Assertions.assertThat;

/** Whatever the guest writes, the device answers and never throws. */
class RobustnessTest {
    static IonicDevice dev;
    static ModelGuest guest;
    static IonicDriverModel drv;

    @BeforeContainer
    static void up() throws IOException {
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.parse("rx-lost:every=7"));
        guest = new ModelGuest(dev, 8 << 20);
        drv = guest.drv;
        drv.bringUp();
        drv.probeLif();
    }

    @AfterContainer
    static void down() {
        guest.close();
    }

    @Property(tries = 300)
    void arbitraryDeviceCommandsComplete(@ForAll @Size(64) byte[] command) throws IOException {
        ByteBuffer c = ByteBuffer.wrap(command.clone()).order(ByteOrder.LITTLE_ENDIAN);
        int opcode = c.get(0) & 0xff;
        if (opcode == RESET || opcode == LIF_INIT || opcode == LIF_RESET || opcode == Q_INIT && c.get(4) == 0) {
            c.put(0, (byte) NOP); // keep the admin queue the driver model uses
        }
        drv.devcmd(c); // throws when the device never sets done
        assertThat(drv.bar0(SIGNATURE, 4)).isEqualTo(DEV_INFO_SIGNATURE);
    }

    @Property(tries = 300)
    void arbitraryAdminCommandsComplete(@ForAll @Size(64) byte[] command) throws IOException {
        if ((command[0] & 0xff) == Q_INIT && command[4] == 0) {
            command[0] = NOP;
        }
        // The model checks the completion's color and comp_index, and throws when there is none.
        Completion comp = drv.adminq(ByteBuffer.wrap(command).order(ByteOrder.LITTLE_ENDIAN));
        assertThat(comp.bytes()).hasSize(16);
    }

    @Property(tries = 500)
    void arbitraryRegisterAndDoorbellWrites(@ForAll @IntRange(min = 0, max = 0xffff) int offset,
                                            @ForAll @IntRange(min = 1, max = 8) int width,
                                            @ForAll long value, @ForAll @IntRange(min = 0, max = 0x3fffff) int dbOffset)
            throws IOException {
        if (offset >= DEVCMD_DOORBELL && offset < DEVCMD_END
                || offset >= INTR_CTRL && offset < INTR_CTRL + INTR_CTRL_SIZE) {
            offset = 0x4000; // spare the devcmd doorbell and the admin queue's interrupt block
        }
        int w = Math.min(width, 0x10000 - offset);
        DeviceBinding bar = drv.device();
        bar.writeLong(DeviceBinding.BAR0, offset, w, value);
        bar.readLong(DeviceBinding.BAR0, offset, w);
        int db = dbOffset & ~7;
        if (db % 4096 / 8 != 0) { // not the admin queue's slot
            bar.writeLong(DeviceBinding.BAR2, db, 8, value);
        }
        dev.receive(MemorySegment.ofArray(new byte[(int) (Math.abs(value % 200) + 14)]));
        assertThat(drv.bar0(SIGNATURE, 4)).isEqualTo(DEV_INFO_SIGNATURE);
    }

    @Test
    void largestProfileBuilds() throws IOException {
        IonicDevice big = new IonicDevice(ProfileLoader.load("max"), FaultPlan.none());
        assertThat(big.configSpace().msix().tableSize()).isEqualTo(128);
        try (ModelGuest g = new ModelGuest(big, 4 << 20)) {
            g.drv.bringUp();
            assertThat(g.drv.bar0(INTR_CTRL + INTR_CTRL_SIZE * 127 + INTR_MASK, 4)).isEqualTo(1);
        }
    }
}
