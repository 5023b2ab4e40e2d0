package ernic.it.guest;

import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.it.harness.NetNamespace;
import ernic.server.ErnicServer;
import ernic.server.TapPort;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stock ionic driver in the real guest against our ionic device, with the Ethernet side on a
 * TAP whose host end lives in a network namespace of the test's own: bring-up, link, ethtool,
 * lspci, ping, a 64 MiB TCP transfer, and the guest's counters against the server's.
 */
@ExtendWith(GuestPrerequisites.class)
class IonicEthernetGuestTest {
    static final String HOST_IP = "192.168.77.1", GUEST_IP = "192.168.77.2";

    /** The part of the script that brings the NIC up; $nd is the netdev afterwards. */
    static final String BRING_UP = """
            set -e
            modprobe ionic
            dev=$(lspci -D -n -d 1dd8:1002 | awk '{print $1}')
            nd=$(ls /sys/bus/pci/devices/$dev/net/)
            echo "netdev $nd"
            ip link set "$nd" up
            ip addr add %s/24 dev "$nd"
            for i in $(seq 1 40); do [ "$(cat /sys/class/net/$nd/carrier)" = 1 ] && break; sleep 0.5; done
            echo "carrier $(cat /sys/class/net/$nd/carrier)"
            """.formatted(GUEST_IP);

    static final String SCRIPT = BRING_UP + """
            dmesg | grep -i ionic
            if dmesg | grep -iE 'ionic.*(error|fail|timeout)'; then echo "DMESG-ERRORS"; fi
            ethtool "$nd"
            ethtool -i "$nd"
            lspci -vv -s "$dev" | grep -E 'LnkCap:|LnkSta:'
            ping -c 3 -W 5 %1$s
            ok=0
            for i in $(seq 1 20); do
                if iperf3 -c %1$s -n 64M -f m; then ok=1; break; fi
                sleep 1
            done
            [ $ok = 1 ]
            sleep 3  # one statistics interval and more
            for c in tx_packets tx_bytes rx_packets rx_bytes; do
                echo "guest-$c $(cat /sys/class/net/$nd/statistics/$c)"
            done
            ip -s link show "$nd"
            ethtool -S "$nd" | grep -E '^ +(tx|rx)_(ucast_)?(packets|bytes|pkts):' || ethtool -S "$nd" | head -30
            """.formatted(HOST_IP);


    /** What a run on a TAP-attached server gave: the guest's result, the TAP and the device's session counters. */
    record Run(GuestResult guest, long tapFramesOut, long tapFramesIn, Map<String, Long> counters) {}

    /** Boots one guest against an ionic server whose TAP's host end is {@link #HOST_IP} in a namespace of ours. */
    static Run runWithTap(String name, ErnicServer.Settings settings, String script) throws Exception {
        long pid = ProcessHandle.current().pid();
        String tap = "ernt" + (pid % 100000);
        Path work = Files.createDirectories(Path.of("target", "guest", name));
        Path socket = Files.createDirectories(work.resolve("server")).resolve("ernic.sock");
        try (ErnicServer server = ErnicServer.start(settings.withTap(tap));
             NetNamespace ns = NetNamespace.create("ernic-test-" + pid)) {
            ns.adopt(tap);
            ns.exec("ip", "addr", "add", HOST_IP + "/24", "dev", tap);
            ns.exec("ip", "link", "set", tap, "up");
            Process iperf = ns.start("iperf3", "-s", "-1", "-B", HOST_IP);
            try {
                GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(script);
                System.out.println(r);
                assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40),
                        r.output()).isZero();
                Map<String, Long> counters = ((IonicDevice) server.device()).lastSessionCounters();
                System.out.println("device counters of the session: " + counters);
                // The TAP counts on the device loop: read there.
                long[] frames = server.vfioUser().eventLoop().submit(() -> new long[] {
                        server.tap().count(TapPort.TapCounter.FRAMES_OUT),
                        server.tap().count(TapPort.TapCounter.FRAMES_IN)}).get();
                return new Run(r, frames[0], frames[1], counters);
            } finally {
                iperf.destroy();
                iperf.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    static ErnicServer.Settings settings(Path socketDir) {
        return ErnicServer.Settings.ionic(socketDir.resolve("ernic.sock").toString());
    }

    @Test
    void bringUpLinkPingTcpTransferAndCounters() throws Exception {
        Path socketDir = Path.of("target", "guest", "ionic-ethernet", "server");
        Run run = runWithTap("ionic-ethernet", settings(socketDir), SCRIPT);
        String out = run.guest().output();
        assertThat(out).contains("carrier 1").doesNotContain("DMESG-ERRORS")
                .contains("Speed: 100000Mb/s").contains("Link detected: yes")
                .contains("driver: ionic").contains("firmware-version: 1.0.0-ernic")
                .contains("3 packets transmitted, 3 received");
        assertThat(out).containsPattern("LnkSta:\\s+Speed 16GT/s.*Width x16");

        long guestTxBytes = counter(out, "guest-tx_bytes");
        long guestRxPackets = counter(out, "guest-rx_packets");
        long guestTxPackets = counter(out, "guest-tx_packets");
        assertThat(guestTxBytes).as("64 MiB went out").isGreaterThan(64L << 20);
        // Every frame the guest counted as sent reached the TAP (a few more may follow after the count).
        assertThat(run.tapFramesOut()).isBetween(guestTxPackets, guestTxPackets + 50);
        assertThat(guestRxPackets).isBetween(run.tapFramesIn() - 50, run.tapFramesIn());
        assertThat(run.counters().get("lif.tx_ucast_packets")).isPositive();
        // ethtool -S reads the same statistics block as ip -s link (read a moment later).
        assertThat(ethtoolStat(out, "tx_packets")).isBetween(guestTxPackets, guestTxPackets + 20);
        assertThat(ethtoolStat(out, "rx_packets")).isBetween(guestRxPackets, guestRxPackets + 20);
    }

    static long ethtoolStat(String out, String name) {
        Matcher m = Pattern.compile("^\\s+" + name + ": (\\d+)$", Pattern.MULTILINE).matcher(out);
        assertThat(m.find()).as("ethtool -S %s in the output", name).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void aTcpStreamSurvivesRxLoss() throws Exception {
        Path socketDir = Path.of("target", "guest", "ionic-rx-loss", "server");
        String script = BRING_UP + """
                ok=0
                for i in $(seq 1 20); do
                    if iperf3 -c %s -n 16M -f m; then ok=1; break; fi
                    sleep 1
                done
                [ $ok = 1 ]
                """.formatted(HOST_IP);
        Run run = runWithTap("ionic-rx-loss", settings(socketDir).withInject(List.of("rx-lost:every=20")), script);
        assertThat(run.guest().output()).contains("receiver");
        assertThat(run.counters().get("fault.rx-lost.injected")).as("frames lost on purpose").isPositive();
        assertThat(run.counters().get("fault.rx-lost.injected"))
                .isEqualTo(run.counters().get("fault.rx-lost.occurrences") / 20);
    }

    static long counter(String out, String name) {
        Matcher m = Pattern.compile("^" + Pattern.quote(name) + " (\\d+)$", Pattern.MULTILINE).matcher(out);
        assertThat(m.find()).as("%s in the output", name).isTrue();
        return Long.parseLong(m.group(1));
    }

}
