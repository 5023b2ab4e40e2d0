package ernic.it.guest;

import ernic.ionic.IonicDevice;
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
 * The stock ionic_rdma driver and rdma-core's libionic in the real guest against our device, both
 * ends in one VM: the RDMA bootstrap and admin queue (the ibdev registers, the MAD agent's GSI QP
 * comes up, no admin time-outs), the port ACTIVE with the netdev's GIDs, then rdma-core's own
 * ping-pong tools over RC (with payload validation and with CQ events), UC and UD, perftest, the
 * rdma_cm tools (ucmatose, rping, udaddy), and 64 processes with a context each at once.
 */
@ExtendWith(GuestPrerequisites.class)
class IonicRdmaGuestTest {
    static final String GUEST_IP = "10.9.0.1";

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            ibv_devices
            ibv_devinfo -v
            echo "gid0 $(cat /sys/class/infiniband/ionic_0/ports/1/gids/0)"
            echo "gid1 $(cat /sys/class/infiniband/ionic_0/ports/1/gids/1)"
            echo "port-state $(cat /sys/class/infiniband/ionic_0/ports/1/state)"
            hwc=/sys/class/infiniband/ionic_0/ports/1/hw_counters
            echo "hwc-list" $(ls $hwc)
            dumphwc() { for f in $hwc/*; do echo "hwc-$1 $(basename $f) $(cat $f)"; done; }
            # The server is ready when it listens: perftest and ibv_*_pingpong on TCP 18515, the
            # rdma_cm tools with a LISTEN cm_id (a REQ before that is rejected: invalid service ID).
            # A loaded host can take longer than a fixed sleep to get there under TCG.
            waitlisten() {
                sleep 1
                for i in $(seq 1 40); do
                    { ss -ltnH 'sport = :18515' | grep -q . || rdma resource show cm_id | grep -q LISTEN; } && return
                    sleep 0.5
                done
            }
            run2() { # name, server command line, client command line
                for attempt in 1 2 3; do
                    timeout 60 stdbuf -oL -eL $2 > /tmp/server-$1.txt 2>&1 &
                    waitlisten
                    if timeout 60 stdbuf -oL -eL $3 > /tmp/client-$1.txt 2>&1; then c=0; else c=$?; fi
                    if wait $!; then s=0; else s=$?; fi
                    cat /tmp/server-$1.txt /tmp/client-$1.txt
                    # perftest measures the TSC frequency at start; under TCG the fit is sometimes too
                    # noisy ("Correlation coefficient r^2 < 0.9", "Can't produce a report", exit 1).
                    # That says nothing about the device: run it again.
                    if [ $c$s != 00 ] && grep -q 'Correlation coefficient' /tmp/server-$1.txt /tmp/client-$1.txt; then
                        echo "RETRY $1 attempt=$attempt client=$c server=$s (perftest clock calibration)"
                        continue
                    fi
                    break
                done
                echo "RESULT $1 client=$c server=$s"
            }
            pair() { # name, then the arguments both ends share; the client adds localhost
                name=$1; shift
                run2 $name "$*" "$* localhost"
            }
            # name, label, an rdma command shown (between LABEL-begin and LABEL-end) while the server of a pair
            # waits, then the arguments both ends share
            meanwhile() {
                name=$1; label=$2; show=$3; shift 3
                timeout 60 "$@" > /tmp/server-$name.txt 2>&1 &
                sleep 2
                echo "$label-begin"; $show; echo "$label-end rc=$?"
                if timeout 60 "$@" localhost > /tmp/client-$name.txt 2>&1; then c=0; else c=$?; fi
                if wait $!; then s=0; else s=$?; fi
                cat /tmp/server-$name.txt /tmp/client-$name.txt
                echo "RESULT $name client=$c server=$s"
            }
            pair rc ibv_rc_pingpong -d ionic_0 -g 0 -n 100
            dumphwc rc
            pair rc-check ibv_rc_pingpong -d ionic_0 -g 1 -n 50 -s 1000 -c
            pair rc-events ibv_rc_pingpong -d ionic_0 -g 1 -n 50 -e
            pair ud ibv_ud_pingpong -d ionic_0 -g 1 -n 50
            # UC (needs the image's ionic_rdma and libionic patches, guest/patches/).
            pair uc ibv_uc_pingpong -d ionic_0 -g 1 -n 100
            pair uc-check ibv_uc_pingpong -d ionic_0 -g 1 -n 50 -s 1000 -c
            pair uc-events ibv_uc_pingpong -d ionic_0 -g 1 -n 50 -e
            pair uc-write-bw ib_write_bw -d ionic_0 -x 1 -c UC -s 65536 -n 100
            pair uc-send-bw ib_send_bw -d ionic_0 -x 1 -c UC -s 4096 -n 100
            # The QP the UC server made is a UC QP as ib_core sees it.
            meanwhile uc-res uc-res "rdma resource show qp link ionic_0/1" ibv_uc_pingpong -d ionic_0 -g 0 -n 20
            pair write-bw ib_write_bw -d ionic_0 -x 1 -s 65536 -n 100
            pair read-bw ib_read_bw -d ionic_0 -x 1 -s 65536 -n 100
            pair atomic-bw ib_atomic_bw -d ionic_0 -x 1 -n 100
            pair send-bw ib_send_bw -d ionic_0 -x 1 -s 65536 -n 100
            pair write-bw-64 ib_write_bw -d ionic_0 -x 1 -s 64 -n 200
            pair write-bw-4m ib_write_bw -d ionic_0 -x 1 -s 4194304 -n 10
            pair read-bw-4m ib_read_bw -d ionic_0 -x 1 -s 4194304 -n 10
            pair send-bw-4m ib_send_bw -d ionic_0 -x 1 -s 4194304 -n 10
            pair write-lat ib_write_lat -d ionic_0 -x 1 -s 64 -n 100
            pair read-lat ib_read_lat -d ionic_0 -x 1 -s 64 -n 100
            pair send-lat ib_send_lat -d ionic_0 -x 1 -s 64 -n 100
            pair atomic-lat ib_atomic_lat -d ionic_0 -x 1 -n 100
            run2 ucmatose "ucmatose -b %1$s" "ucmatose -s %1$s"
            run2 rping "rping -s -a %1$s -C 3 -v" "rping -c -a %1$s -C 3 -v"
            run2 udaddy "udaddy -b %1$s" "udaddy -s %1$s"
            # Per-QP counters: ib_core binds each new QP to a counter; reading it sends QP_STATS_VALS.
            rdma statistic qp set link ionic_0/1 auto type on && echo "qp-auto on"
            meanwhile rc-counted qp-stats "rdma statistic qp show link ionic_0/1" ibv_rc_pingpong -d ionic_0 -g 0 -n 20
            rdma statistic qp set link ionic_0/1 auto off
            # Many contexts at once: 32 ping-pong pairs (64 processes, each its own context, doorbell page
            # and RC QP), in event mode so 64 of them fit on 4 vCPUs; the peak of RC QPs is sampled meanwhile.
            for i in $(seq 0 31); do
                timeout 300 ibv_rc_pingpong -d ionic_0 -g 1 -n 300 -e -p $((19000 + i)) > /tmp/many-s$i.txt 2>&1 &
            done
            for t in $(seq 1 60); do [ "$(ss -ltnH | grep -c ':19[0-9][0-9][0-9] ')" -ge 32 ] && break; sleep 1; done
            for i in $(seq 0 31); do
                timeout 300 ibv_rc_pingpong -d ionic_0 -g 1 -n 300 -e -p $((19000 + i)) localhost > /tmp/many-c$i.txt 2>&1 &
            done
            peak=0
            for t in $(seq 1 30); do
                n=$(rdma resource show qp link ionic_0/1 | grep -c 'type RC')
                [ "$n" -gt "$peak" ] && peak=$n
                [ "$peak" -ge 64 ] && break
                sleep 0.5
            done
            wait
            echo "many-peak-rc-qps $peak"
            echo "many-ok $(grep -l '300 iters in' /tmp/many-*.txt | wc -l)"
            dumphwc end
            dmesg | grep -iE 'ionic|infiniband'
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """.formatted(GUEST_IP);


    @Test
    void ibdevPortGidsAndPingPongInOneVm() throws Exception {
        Path work = GuestPrerequisites.workDir("ionic-rdma");
        Path socket = GuestPrerequisites.socketIn(work);
        Path statsFile = work.resolve("stats.json");
        Files.deleteIfExists(statsFile);
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString())
                .withStatsFile(statsFile.toString()))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40), r.output())
                    .isZero();
            String out = r.output();
            // Milestone 2: the ibdev, its port and GIDs, no admin queue trouble.
            assertThat(out).contains("ionic_0").containsPattern("hca_id:\\s+ionic_0").contains("PORT_ACTIVE")
                    .containsPattern("link_layer:\\s+Ethernet").containsPattern("fw_ver:\\s+1\\.0\\.0-ernic")
                    // GID 0: the link-local EUI-64 of the netdev's MAC; GID 1: the IPv4 address, v4-mapped.
                    .containsPattern("gid0 fe80:0000:0000:0000:[0-9a-f]{4}:[0-9a-f]{2}ff:fe[0-9a-f]{2}:[0-9a-f]{4}")
                    .contains("gid1 0000:0000:0000:0000:0000:ffff:0a09:0001")
                    .contains("port-state 4: ACTIVE")
                    .doesNotContain("DMESG-ERRORS").doesNotContain("admin command timed out");
            // Milestone 3: RC SEND/RECV (with payload validation and with CQ events) and UD, both ends here.
            assertThat(out).contains("RESULT rc client=0 server=0")
                    .contains("RESULT rc-check client=0 server=0")
                    .contains("RESULT rc-events client=0 server=0")
                    .contains("RESULT ud client=0 server=0")
                    .contains("100 iters in");
            // UC (ibv_uc_pingpong, also with payload validation and CQ events; perftest WRITE and SEND over UC).
            assertThat(out).contains("RESULT uc client=0 server=0")
                    .contains("RESULT uc-check client=0 server=0")
                    .contains("RESULT uc-events client=0 server=0")
                    .contains("RESULT uc-write-bw client=0 server=0")
                    .contains("RESULT uc-send-bw client=0 server=0")
                    .containsPattern("Connection type : UC")
                    .containsPattern("(?s)uc-res-begin.*link ionic_0/1 lqpn \\d+ (rqpn \\d+ )?type UC .*uc-res-end rc=0")
                    .contains("RESULT uc-res client=0 server=0");
            // RDMA WRITE, READ and atomics (perftest), and rdma_cm over the GSI QP (CM MADs, AHs).
            assertThat(out).contains("RESULT write-bw client=0 server=0")
                    .contains("RESULT read-bw client=0 server=0")
                    .contains("RESULT atomic-bw client=0 server=0")
                    .contains("RESULT send-bw client=0 server=0")
                    // sizes from 64 B to 4 MiB, and the latency tools
                    .contains("RESULT write-bw-64 client=0 server=0")
                    .contains("RESULT write-bw-4m client=0 server=0")
                    .contains("RESULT read-bw-4m client=0 server=0")
                    .contains("RESULT send-bw-4m client=0 server=0")
                    .contains("RESULT write-lat client=0 server=0")
                    .contains("RESULT read-lat client=0 server=0")
                    .contains("RESULT send-lat client=0 server=0")
                    .contains("RESULT atomic-lat client=0 server=0")
                    .contains("RESULT ucmatose client=0 server=0").contains("data transfers complete")
                    .contains("RESULT rping client=0 server=0").contains("ping data: rdma-ping-2")
                    // udaddy: rdma_cm UD (SIDR over the GSI QP, an AH per peer), server then client output.
                    .containsPattern("(?s)udaddy: starting server.*sending replies.*data transfers complete"
                            + ".*udaddy: starting client.*receiving data transfers.*data transfers complete.*test complete"
                            + ".*RESULT udaddy client=0 server=0");
            // hw_counters: the device's counters by name, read through STATS_HDRS / STATS_VALS.
            assertThat(out).containsPattern("hwc-list .*\\btx_send_reqs\\b")
                    .containsPattern("hwc-list .*\\brx_recv_bytes\\b").containsPattern("hwc-list .*\\bseq_err\\b");
            long sendReqs = hwc(out, "rc", "tx_send_reqs"), sendBytes = hwc(out, "rc", "tx_send_bytes");
            assertThat(sendReqs).as("SENDs after a 100-iteration RC ping-pong").isGreaterThanOrEqualTo(200);
            assertThat(sendBytes).as("SEND bytes (4096-byte messages)").isGreaterThanOrEqualTo(200L * 4096);
            assertThat(hwc(out, "rc", "rx_recv_bytes")).isGreaterThanOrEqualTo(200L * 4096);
            assertThat(hwc(out, "rc", "completion_errors")).isZero();
            assertThat(hwc(out, "rc", "cnp_sent")).isZero();
            // Per-QP counters through ib_core's counter API (QP_STATS_HDRS at registration, QP_STATS_VALS).
            assertThat(out).contains("qp-auto on").contains("RESULT rc-counted client=0 server=0")
                    .containsPattern("qp-stats-begin\\s+link ionic_0/1 cntn \\d+ qp-type RC")
                    .containsPattern("(?m)^\\s+tx_send_reqs \\d+\\s*$").containsPattern("(?m)^\\s+qp_flushes \\d+\\s*$")
                    .contains("qp-stats-end rc=0");
            // 64 processes with a context and an RC QP each at the same time (a LIF has 1,024 doorbell pages).
            assertThat(out).contains("many-ok 64").contains("many-peak-rc-qps 64");
            Map<String, Long> counters = ((IonicDevice) server.device()).lastSessionCounters();
            System.out.println("device counters of the session: " + counters);
            assertThat(counters.get("rdma.admin.commands")).as("admin commands run").isPositive();
            assertThat(counters.get("rdma.admin.errors")).as("admin commands failed").isZero();
            assertThat(counters.get("rdma.sq.wqes")).as("send WQEs executed").isGreaterThan(300);
            assertThat(counters.get("rdma.sq.errors")).as("send WQEs failed").isZero();
            assertThat(counters.get("rdma.events")).as("CQ events").isPositive();
            assertThat(counters.keySet().stream().filter(k -> k.startsWith("refused.rdma")).toList())
                    .as("RDMA refusals").isEmpty();
            assertThat(counters.get("rdma.hw.tx_send_reqs")).isGreaterThanOrEqualTo(sendReqs);
        }
        // The stats file's last snapshot (written at close) keeps the session's counters.
        String stats = Files.readString(statsFile);
        System.out.println("stats file: " + stats.length() + " bytes");
        assertThat(stats).contains("\"hw_counters\"").contains("\"last_session\"")
                .containsPattern("\"rdma.hw.tx_send_reqs\" : [1-9]");
    }

    /** The value of hw counter {@code name} in the dump labelled {@code label}. */
    static long hwc(String out, String label, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("hwc-" + label + " " + name + " (\\d+)").matcher(out);
        assertThat(m.find()).as("hw counter %s in dump %s", name, label).isTrue();
        return Long.parseLong(m.group(1));
    }
}
