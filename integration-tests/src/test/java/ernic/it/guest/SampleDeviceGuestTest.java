package ernic.it.guest;

import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.vfiouser.sample.SampleDevice;
import ernic.vfiouser.server.VfioCounter;
import ernic.vfiouser.server.VfioUserServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * QEMU's vfio-user-pci against our server with the sample device, in the real guest: the server
 * sees version negotiation, guest RAM shared by fd and interrupt eventfds; the guest sees the device
 * in lspci and reads and writes its registers through sysfs.
 */
@ExtendWith(GuestPrerequisites.class)
class SampleDeviceGuestTest {
    static final String SCRIPT = """
            set -e
            echo "kernel: $(uname -r)"
            lspci -nn
            dev=$(lspci -D -n -d 494f:0dc8 | awk '{print $1}')
            test -n "$dev"
            echo "device at $dev"
            echo 1 > /sys/bus/pci/devices/$dev/enable
            python3 - "$dev" <<'PY'
            import mmap, struct, sys
            dev = sys.argv[1]
            with open(f"/sys/bus/pci/devices/{dev}/resource0", "r+b") as f:
                m = mmap.mmap(f.fileno(), 8192)
                magic = struct.unpack_from("<I", m, 0)[0]
                print(f"magic 0x{magic:08x}")
                struct.pack_into("<I", m, 4, 0x1234abcd)
                print(f"scratch 0x{struct.unpack_from('<I', m, 4)[0]:08x}")
            PY
            """;


    @Test
    void qemuNegotiatesMapsRamPassesEventfdsAndTheGuestSeesTheDevice() throws Exception {
        Path work = GuestPrerequisites.workDir("sample-device");
        Path socket = GuestPrerequisites.socketIn(work);
        try (SampleDevice device = new SampleDevice();
             VfioUserServer server = VfioUserServer.start(device, VfioUserServer.Options.defaults(socket.toString()))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40), r.output())
                    .isZero();
            assertThat(r.output()).contains("494f:0dc8").contains("magic 0x45524e43").contains("scratch 0x1234abcd");
            // One QEMU connection per boot (ernic-vm boots again after a boot that died before the
            // script), and each negotiates its version once.
            assertThat(server.count(VfioCounter.CONNECTIONS)).as("QEMU connections").isEqualTo(r.boots());
            assertThat(server.count(VfioCounter.VERSIONS_NEGOTIATED)).as("VERSION negotiated").isEqualTo(r.boots());
            assertThat(server.lastClientVersionJson()).contains("max_msg_fds");
            // Guest RAM comes with its memfd; ROMs and the device's own mmapped BAR come without one.
            assertThat(server.count(VfioCounter.DMA_MAPS_WITH_FD)).as("guest RAM mapped with an fd").isPositive();
            assertThat(server.count(VfioCounter.IRQ_EVENTFDS)).as("interrupt eventfds passed").isPositive();
            assertThat(server.count(VfioCounter.CONFIG_READS)).as("config space read").isPositive();
            assertThat(server.count(VfioCounter.REGION_READS)).as("BAR reads from the guest").isPositive();
            assertThat(server.count(VfioCounter.REGION_WRITES)).as("BAR writes from the guest").isPositive();
        }
    }
}
