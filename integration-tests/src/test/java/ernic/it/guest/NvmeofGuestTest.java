package ernic.it.guest;

import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-process NVMe-oF target ({@code --backend nvmeof}) against the guest's stock nvme-rdma initiator and
 * nvme-cli, in one boot: discovery, connect, the namespace's size and LBA format, id-ctrl / id-ns, 16 MiB
 * written with O_DIRECT and read back identical, flush, write-zeroes, fio with crc32c verification (QD8, and
 * 4 jobs at QD32), blkdiscard, a wrong NQN refused, disconnect and a second connect, then an ext4 file
 * system (mkfs, write, fsck -n clean, remount, same md5); the target's address answers ARP and ping, so
 * the guest needs no static neighbour entry. The namespace is a file: a second boot against a new server
 * on the same file finds the first boot's file system clean and its file intact.
 */
@ExtendWith(GuestPrerequisites.class)
class NvmeofGuestTest {
    static final String GUEST_IP = "192.168.200.2", TARGET_IP = "192.168.200.1", NQN = "nvmet-test";
    static final long SIZE = 256L << 20;

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            set -e
            trap 'echo "exit-trap"; dmesg | grep -iE "nvme|ionic|rdma" | tail -80' EXIT
            # The target answers ARP and ICMP echo for its address: no static neighbour entry.
            ping -c 2 -W 2 %2$s | grep -E 'packets transmitted'
            echo "neighbour $(ip neigh show %2$s dev "$nd")"
            modprobe nvme-rdma
            mkdir -p /etc/nvme
            [ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn > /etc/nvme/hostnqn
            echo "hostnqn $(cat /etc/nvme/hostnqn)"
            nvme discover -t rdma -a %2$s -s 4420 > /tmp/discover.txt 2>&1 || { cat /tmp/discover.txt; exit 1; }
            cat /tmp/discover.txt
            if nvme connect -t rdma -a %2$s -s 4420 -n wrong-nqn > /tmp/wrong.txt 2>&1; then
                echo "WRONG-NQN-ACCEPTED"; else echo "wrong-nqn-refused"; fi
            cat /tmp/wrong.txt
            nvme connect -t rdma -a %2$s -s 4420 -n %3$s
            for i in $(seq 1 40); do [ -b /dev/nvme0n1 ] && break; sleep 0.5; done
            lsblk -b -o NAME,SIZE,LOG-SEC,PHY-SEC,TRAN
            echo "blockdev-size $(blockdev --getsize64 /dev/nvme0n1) lbs $(blockdev --getss /dev/nvme0n1)"
            nvme list
            nvme id-ctrl /dev/nvme0 > /tmp/id-ctrl.txt; grep -E '^(vid|sn|mn|subnqn|ioccsz|sgls|mdts|vwc|kas) ' /tmp/id-ctrl.txt
            nvme id-ns /dev/nvme0n1 > /tmp/id-ns.txt; grep -E '^(nsze|ncap|flbas|dlfeat)|^lbaf' /tmp/id-ns.txt
            dd if=/dev/urandom of=/tmp/data bs=1M count=16 status=none
            dd if=/tmp/data of=/dev/nvme0n1 bs=1M count=16 oflag=direct
            dd if=/dev/nvme0n1 of=/tmp/back bs=1M count=16 iflag=direct
            cmp /tmp/data /tmp/back && echo "data-ok $(md5sum < /tmp/back | cut -c1-32) $(md5sum < /tmp/data | cut -c1-32)"
            nvme flush /dev/nvme0n1 && echo "flush-ok"
            nvme write-zeroes /dev/nvme0n1 -s 0 -c 15 && echo "write-zeroes-done"
            echo "zero-bytes-nonzero $(dd if=/dev/nvme0n1 bs=4096 count=16 iflag=direct status=none | tr -d '\\000' | wc -c)"
            if timeout 300 fio --name=verify --filename=/dev/nvme0n1 --rw=randrw --bs=4k --iodepth=8 --ioengine=libaio \\
                    --direct=1 --offset=64M --size=16M --verify=crc32c --do_verify=1 --output=/tmp/fio.txt; then
                echo "RESULT fio=0"; else echo "RESULT fio=$?"; fi
            grep -E 'err=|verify' /tmp/fio.txt | head -5 || true
            if timeout 300 fio --name=jobs --filename=/dev/nvme0n1 --rw=randrw --bs=4k --iodepth=32 --numjobs=4 \
                    --ioengine=libaio --direct=1 --offset=96M --size=8M --offset_increment=8M --verify=crc32c \
                    --do_verify=1 --output=/tmp/fio4.txt; then echo "RESULT fio4=0"; else echo "RESULT fio4=$?"; fi
            grep -E 'err=' /tmp/fio4.txt | head -5 || true
            nz200() { dd if=/dev/nvme0n1 bs=1M skip=200 count=1 iflag=direct status=none | tr -d '\\000' | wc -c; }
            dd if=/tmp/data of=/dev/nvme0n1 bs=1M seek=200 count=1 oflag=direct status=none
            echo "before-discard-nonzero $(nz200)"
            blkdiscard -o 200M -l 1M /dev/nvme0n1 && echo "discard-nonzero $(nz200)"
            nvme disconnect -n %3$s | tee /tmp/disconnect.txt
            nvme connect -t rdma -a %2$s -s 4420 -n %3$s && echo "reconnect-ok"
            for i in $(seq 1 40); do [ -b /dev/nvme0n1 ] && break; sleep 0.5; done
            echo "after-reconnect $(dd if=/dev/nvme0n1 bs=1M count=16 skip=0 iflag=direct status=none | tail -c +65537 | md5sum | cut -c1-32) $(tail -c +65537 /tmp/data | md5sum | cut -c1-32)"
            # A file system on the namespace: make, write, check offline, mount again and read back.
            mkfs.ext4 -q -F /dev/nvme0n1 && echo "mkfs-ok"
            mkdir -p /mnt/ns && mount /dev/nvme0n1 /mnt/ns
            cp /tmp/data /mnt/ns/data.bin && sync
            echo "fs-written $(md5sum < /mnt/ns/data.bin | cut -c1-32)"
            umount /mnt/ns
            if fsck.ext4 -n -f /dev/nvme0n1 > /tmp/fsck.txt 2>&1; then echo "fsck-clean"; else echo "fsck=$?"; cat /tmp/fsck.txt; fi
            mount /dev/nvme0n1 /mnt/ns
            echo "fs-remounted $(md5sum < /mnt/ns/data.bin | cut -c1-32) $(md5sum < /tmp/data | cut -c1-32)"
            umount /mnt/ns
            nvme disconnect -n %3$s
            echo "nvmeof-script-done"
            """.formatted(GUEST_IP, TARGET_IP, NQN);

    /** The second boot, against a new server on the same namespace file: the data of the first is there. */
    static final String SECOND = GuestScripts.rdmaUp(GUEST_IP) + """
            set -e
            trap 'echo "exit-trap"; dmesg | grep -iE "nvme|ionic|rdma" | tail -40' EXIT
            modprobe nvme-rdma
            mkdir -p /etc/nvme
            [ -s /etc/nvme/hostnqn ] || nvme gen-hostnqn > /etc/nvme/hostnqn
            nvme connect -t rdma -a %s -s 4420 -n %s
            for i in $(seq 1 40); do [ -b /dev/nvme0n1 ] && break; sleep 0.5; done
            echo "blockdev-size $(blockdev --getsize64 /dev/nvme0n1)"
            # The first boot's file system, on the same namespace file behind a new server.
            if fsck.ext4 -n -f /dev/nvme0n1 > /tmp/fsck.txt 2>&1; then echo "fsck-clean"; else echo "fsck=$?"; cat /tmp/fsck.txt; fi
            mkdir -p /mnt/ns && mount /dev/nvme0n1 /mnt/ns
            echo "second-boot $(md5sum < /mnt/ns/data.bin | cut -c1-32)"
            umount /mnt/ns
            nvme disconnect -n %s
            echo "second-script-done"
            """.formatted(TARGET_IP, NQN, NQN);


    @Test
    void theStockInitiatorConnectsWritesAndReadsBack() throws Exception {
        Path work = GuestPrerequisites.workDir("nvmeof");
        Path socket = GuestPrerequisites.socketIn(work);
        Path file = work.resolve("namespace.img").toAbsolutePath();
        Files.deleteIfExists(file);
        String firstMd5;
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString())
                .withMesh("nvmeof:size=256M,bs=4096,nqn=" + NQN + ",file=" + file, null))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            Map<String, Long> counters = ServerCounters.read(server,
                    n -> n.startsWith("nvmeof.") || n.startsWith("rdma.target."));
            System.out.println("nvmeof counters: " + counters);
            String out = r.output();
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(60), out)
                    .isZero();
            assertThat(out).contains("nvmeof-script-done")
                    .containsPattern("subnqn\\s+:\\s+" + NQN)
                    .contains("wrong-nqn-refused").doesNotContain("WRONG-NQN-ACCEPTED")
                    .contains("blockdev-size " + SIZE + " lbs 4096")
                    .containsPattern("(?m)^nsze\\s+:\\s+0x10000")
                    .containsPattern("data-ok ([0-9a-f]{32}) \\1")
                    .contains("flush-ok")
                    .contains("2 packets transmitted, 2 received")
                    .containsPattern("neighbour %s lladdr 02:53:c0:a8:c8:01".formatted(TARGET_IP))
                    .contains("zero-bytes-nonzero 0")
                    .contains("RESULT fio=0").contains("RESULT fio4=0")
                    .containsPattern("before-discard-nonzero 10[0-9]{5}\\b").contains("\ndiscard-nonzero 0")
                    .contains("disconnected 1 controller")
                    .contains("reconnect-ok")
                    .containsPattern("after-reconnect ([0-9a-f]{32}) \\1")
                    .contains("mkfs-ok").contains("fsck-clean")
                    .containsPattern("(?s)fs-written ([0-9a-f]{32}).*fs-remounted \\1 \\1");
            assertThat(counters.get("nvmeof.bytes.written")).isGreaterThanOrEqualTo(16L << 20);
            assertThat(counters.get("nvmeof.bytes.read")).isGreaterThanOrEqualTo(16L << 20);
            assertThat(counters.get("nvmeof.cm.rep")).isPositive();
            assertThat(counters.get("nvmeof.file_errors")).isZero();
            firstMd5 = out.replaceAll("(?s).*fs-written ([0-9a-f]{32}).*", "$1");
        }
        // A new server and a new guest on the same file (no size given: the file keeps its own).
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString())
                .withMesh("nvmeof:bs=4096,nqn=" + NQN + ",file=" + file, null))) {
            GuestResult r = new GuestVm(0, work.resolve("vm1"), socket, System.out).run(SECOND);
            System.out.println(r);
            assertThat(r.exitStatus()).as("second guest; console tail:\n%s\noutput:\n%s", r.consoleTail(40),
                    r.output()).isZero();
            assertThat(r.output()).contains("blockdev-size " + SIZE).contains("fsck-clean").contains("second-boot " + firstMd5)
                    .contains("disconnected 1 controller").contains("second-script-done");
        }
    }
}
