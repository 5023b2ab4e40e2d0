package ernic.ionic;

import ernic.ionic.fault.FaultPlan;
import ernic.ionic.layout.Le;
import ernic.ionic.profile.ProfileLoader;
import ernic.ionic.regs.Bar0;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.assertj.core.api.Assertions.assertThat;

/** Whatever the guest writes, the device answers and never throws. */
class RobustnessTest {
    static FakeGuest guest;
    static IonicDevice dev;
    static Driver drv;

    @BeforeContainer
    static void up() {
        guest = new FakeGuest(8 << 20);
        dev = new IonicDevice(ProfileLoader.compat(), FaultPlan.parse("rx-lost:every=7"));
        dev.attach(guest);
        drv = new Driver(dev, guest);
        drv.probeToAdminq();
        drv.probeAdminqCommands();
    }

    @AfterContainer
    static void down() {
        dev.detach();
        guest.close();
    }

    @Property(tries = 300)
    void arbitraryDeviceCommandsComplete(@ForAll @Size(64) byte[] command) {
        MemorySegment c = drv.cmd(0);
        MemorySegment.copy(MemorySegment.ofArray(command), 0, c, 0, 64);
        int opcode = Le.u8(c, 0);
        if (opcode == 3 || opcode == 21 || opcode == 22 || opcode == 40 && Le.u8(c, 4) == 0) {
            Le.put8(c, 0, 0); // keep the admin queue the driver model uses
        }
        drv.devcmd(c);
        assertThat(drv.read32(Bar0.SIGNATURE)).isEqualTo(Bar0.DEV_INFO_SIGNATURE);
    }

    @Property(tries = 300)
    void arbitraryAdminCommandsComplete(@ForAll @Size(64) byte[] command) {
        if ((command[0] & 0xff) == 40 && command[4] == 0) {
            command[0] = 0;
        }
        MemorySegment comp = drv.adminq(s -> MemorySegment.copy(MemorySegment.ofArray(command), 0, s, 0, 64));
        assertThat(comp.byteSize()).isEqualTo(16);
    }

    @Property(tries = 500)
    void arbitraryRegisterAndDoorbellWrites(@ForAll @IntRange(min = 0, max = 0xffff) int offset,
                                            @ForAll @IntRange(min = 1, max = 8) int width,
                                            @ForAll long value, @ForAll @IntRange(min = 0, max = 0x3fffff) int dbOffset) {
        if (offset >= Bar0.DEVCMD && offset < Bar0.DEVCMD_END || offset >= Bar0.INTR_CTRL && offset < Bar0.INTR_CTRL + 32) {
            offset = 0x4000; // spare the devcmd doorbell and the admin queue's interrupt block
        }
        int w = (int) Math.min(width, Bar0.SIZE - offset);
        MemorySegment v = Arena.ofAuto().allocate(8);
        Le.put64(v, 0, value);
        dev.regions().get(0).handler().write(offset, v.asSlice(0, w));
        dev.regions().get(0).handler().read(offset, v.asSlice(0, w));
        int db = dbOffset & ~7;
        if (db % 4096 / 8 != 0) { // not the admin queue's slot
            dev.regions().get(1).handler().write(db, v);
        }
        dev.receive(MemorySegment.ofArray(new byte[(int) (Math.abs(value % 200) + 14)]));
        assertThat(drv.read32(Bar0.SIGNATURE)).isEqualTo(Bar0.DEV_INFO_SIGNATURE);
    }

    @Test
    void largestProfileBuilds() {
        IonicDevice big = new IonicDevice(ProfileLoader.load("max"), FaultPlan.none());
        assertThat(big.configSpace().msix().tableSize()).isEqualTo(128);
        try (FakeGuest g = new FakeGuest(4 << 20)) {
            big.attach(g);
            Driver d = new Driver(big, g);
            d.probeToAdminq();
            assertThat(d.read32(Bar0.INTR_CTRL + 32 * 127 + Bar0.INTR_MASK)).isEqualTo(1);
            big.detach();
        }
    }
}
