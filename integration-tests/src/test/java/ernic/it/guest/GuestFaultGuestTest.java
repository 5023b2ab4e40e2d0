package ernic.it.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.it.harness.ProcessResources;
import ernic.it.harness.ServerProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.testcontainers.DockerClientFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two guest faults against one {@code ernic serve} process, in two boots:
 * <ol>
 * <li>QEMU killed mid-traffic: the first guest's container is SIGKILLed while ib_write_bw streams RDMA WRITEs.
 * The server sees its client gone, returns the device to power-on (no QP, CQ or MR left) and gives back every fd
 * and mapping of that client (its guest RAM memfds, its eventfds, its socket) and the guest pages it touched;</li>
 * <li>the next QEMU is served: the second guest probes the stock drivers and runs ib_write_bw; then it resets
 * its device mid-traffic as a user would ({@code echo 1 > /sys/bus/pci/devices/DEV/reset}, the driver's
 * reset_prepare and reset_done around it; an unbind and bind of ionic where the kernel offers no reset). The
 * traffic's processes end with an error instead of hanging, the driver comes back, and RDMA works again in the
 * same boot.</li>
 * </ol>
 * The server's fds, mappings and resident size are read from {@code /proc/PID} before the first guest, while it
 * runs, after the kill and after the second guest.
 */
@Tag("long") // two boots, about 3 to 6 minutes: run by ./ernic test --long (issue 18 keeps CI within 5 more minutes)
@ExtendWith(GuestPrerequisites.class)
class GuestFaultGuestTest {
    static final String GUEST_IP = "10.9.1.1";
    static final ObjectMapper JSON = new ObjectMapper();
    /** Fds the JVM may open by itself; the kinds a client brings (memfd, eventfd, socket) have no slack. */
    static final int FDS_SLACK = 4;
    /** RssShmem the JVM may have of its own (its perf data file); a client's guest pages must all be gone. */
    static final long SHMEM_SLACK_KIB = 1024;

    /** The IPv4-mapped GID's index of the first RDMA device, and the device's name. */
    static final String GID = """
            ibdev() { ls /sys/class/infiniband 2>/dev/null | head -n1; }
            gidx() {
                for i in $(seq 0 15); do
                    case $(cat /sys/class/infiniband/$(ibdev)/ports/1/gids/$i 2>/dev/null) in
                        0000:0000:0000:0000:0000:ffff:*) echo $i; return;;
                    esac
                done
                echo 1
            }
            writes() { cat /sys/class/infiniband/$(ibdev)/ports/1/hw_counters/tx_rdma_write_reqs 2>/dev/null || echo 0; }
            """;

    /** The first guest: ib_write_bw for ten minutes; the test kills the container while it runs. */
    static final String KILLED = GuestScripts.rdmaUp(GUEST_IP) + GID + """
            x=$(gidx)
            timeout 900 ib_write_bw -d ionic_0 -x $x -s 65536 -D 600 -p 18600 > /tmp/bw-server.txt 2>&1 &
            sleep 2
            timeout 900 ib_write_bw -d ionic_0 -x $x -s 65536 -D 600 -p 18600 localhost > /tmp/bw-client.txt 2>&1 &
            for i in $(seq 1 240); do [ "$(writes)" -gt 100 ] && break; sleep 0.5; done
            echo "TRAFFIC running writes=$(writes)"
            touch /job/traffic-running
            sleep 900
            echo "NOT KILLED"
            """;

    /** The second guest: RDMA on the fresh device, a reset mid-traffic, RDMA again. */
    static final String RESET = GuestScripts.rdmaUp(GUEST_IP) + GID + """
            dev=$(basename "$(readlink -f /sys/class/net/$nd/device)")   # the NIC's PCI address
            alive() { for p in "$@"; do kill -0 $p 2>/dev/null || { echo no; return; }; done; echo yes; }
            bw() {   # one short ib_write_bw, server and client in this guest: bw PORT LABEL
                local x=$(gidx) d=$(ibdev) s c sv
                timeout 300 ib_write_bw -d $d -x $x -s 65536 -n 2000 -p $1 > /tmp/s.txt 2>&1 &
                s=$!
                sleep 2
                if timeout 300 ib_write_bw -d $d -x $x -s 65536 -n 2000 -p $1 localhost > /tmp/c.txt 2>&1; then c=0; else c=$?; fi
                if wait $s; then sv=0; else sv=$?; fi
                cat /tmp/c.txt
                echo "BW $2 server=$sv client=$c"
            }
            bw 18601 fresh
            x=$(gidx)
            timeout 400 ib_write_bw -d ionic_0 -x $x -s 65536 -D 60 -p 18602 > /tmp/rs.txt 2>&1 &
            rs=$!
            sleep 2
            timeout 400 ib_write_bw -d ionic_0 -x $x -s 65536 -D 60 -p 18602 localhost > /tmp/rc.txt 2>&1 &
            rc=$!
            w0=$(writes)
            for i in $(seq 1 240); do [ "$(writes)" -gt $((w0 + 100)) ] && break; sleep 0.5; done
            echo "TRAFFIC before-reset writes=$(($(writes) - w0)) running=$(alive $rs $rc)"
            # What a verbs program is told: the device's async events.
            timeout 300 stdbuf -oL ibv_asyncwatch -d ionic_0 > /tmp/async.txt 2>&1 &
            aw=$!
            sleep 1
            echo "reset-method $(cat /sys/bus/pci/devices/$dev/reset_method 2>/dev/null || echo none)"
            if [ -e /sys/bus/pci/devices/$dev/reset ]; then
                if timeout 300 sh -c "echo 1 > /sys/bus/pci/devices/$dev/reset"; then st=0; else st=$?; fi
                echo "RESET via=sysfs-reset status=$st"
            else
                if timeout 300 sh -c "echo $dev > /sys/bus/pci/drivers/ionic/unbind" \\
                        && timeout 300 sh -c "echo $dev > /sys/bus/pci/drivers/ionic/bind"; then st=0; else st=$?; fi
                echo "RESET via=rebind status=$st"
            fi
            if wait $rs; then r1=0; else r1=$?; fi
            if wait $rc; then r2=0; else r2=$?; fi
            tail -n 5 /tmp/rs.txt /tmp/rc.txt
            echo "TRAFFIC after-reset server=$r1 client=$r2"
            kill $aw 2>/dev/null || true
            wait $aw 2>/dev/null || true
            sed 's/^/ASYNC /' /tmp/async.txt
            # The driver back: the RDMA device registered again, its port active, the netdev up with its address.
            for i in $(seq 1 120); do [ -n "$(ibdev)" ] && grep -q ACTIVE /sys/class/infiniband/$(ibdev)/ports/1/state && break; sleep 0.5; done
            nd=$(ls /sys/bus/pci/devices/$dev/net/)
            ip link set "$nd" up
            ip -4 addr show dev "$nd" | grep -q %s || ip addr add %s/24 dev "$nd"
            for i in $(seq 1 40); do [ -n "$(ibdev)" ] && grep -q ACTIVE /sys/class/infiniband/$(ibdev)/ports/1/state && break; sleep 0.5; done
            echo "after-reset device=$(ibdev) port=$(cat /sys/class/infiniband/$(ibdev)/ports/1/state)"
            bw 18603 after-reset
            dmesg | grep -iE 'ionic|infiniband' | tail -30
            """.formatted(GUEST_IP, GUEST_IP);


    @Test
    void aKilledQemuLeaksNothingAndAResetGuestRecovers() throws Exception {
        Path work = Files.createDirectories(Path.of("target", "guest", "guest-faults")).toAbsolutePath();
        Path stats = work.resolve("stats.json");
        Files.deleteIfExists(stats);
        Path socket = Files.createDirectories(work.resolve("server")).resolve("ernic.sock");
        try (ServerProcess server = ServerProcess.start(socket, List.of("--stats-file", stats.toString()), "srv| ",
                System.out)) {
            long pid = server.process().pid();
            ProcessResources.gc(pid);   // the attach listener's socket, before the first sample
            ProcessResources start = ProcessResources.of(pid);
            System.out.println("guest-faults: before the first guest: " + start);

            // 1. QEMU killed mid-traffic.
            Path job = work.resolve("vm0");
            Files.createDirectories(job);
            Files.deleteIfExists(job.resolve("traffic-running"));
            String container = "ernic-gfault-" + ProcessHandle.current().pid();
            CompletableFuture<GuestResult> first = boot(new GuestVm(0, job, socket, System.out)
                    .withContainerName(container), KILLED);
            while (!first.isDone() && !Files.exists(job.resolve("traffic-running"))) {
                Thread.sleep(200);
            }
            assertThat(first.isDone()).as("the first guest ended before its traffic ran: %s",
                    first.isDone() ? first.get() : "").isFalse();
            JsonNode busy = await(stats, "RDMA WRITEs counted", s -> hw(s, "tx_rdma_write_reqs") > 0);
            long writes = hw(busy, "tx_rdma_write_reqs");
            JsonNode busier = await(stats, "more RDMA WRITEs (progress)", s -> hw(s, "tx_rdma_write_reqs") > writes);
            ProcessResources during = ProcessResources.of(pid);
            System.out.println("guest-faults: mid-traffic: " + during + "; qps " + busier.path("device").path("rdma.qps")
                    + ", RDMA WRITEs " + hw(busier, "tx_rdma_write_reqs"));
            assertThat(busier.path("device").path("rdma.qps").asLong()).as("QPs in use").isGreaterThanOrEqualTo(2);
            assertThat(during.memfdMaps()).as("guest RAM mapped").isPositive();
            assertThat(during.eventfds()).as("the guest's eventfds").isGreaterThan(start.eventfds());

            DockerClientFactory.instance().client().killContainerCmd(container).withSignal("KILL").exec();
            GuestResult killed = first.get(10, TimeUnit.MINUTES);
            System.out.println("guest-faults: killed guest: " + killed);
            assertThat(killed.exitStatus()).as("no status from a killed guest").isEqualTo(125);
            // A killed guest writes no output.log (it is copied at power-off): its console has the script's lines.
            assertThat(Files.readString(killed.consoleLog())).contains("TRAFFIC running").doesNotContain("NOT KILLED");

            JsonNode afterKill = atRest(server, stats, 1);
            ProcessResources s1 = ProcessResources.of(pid);
            System.out.println("guest-faults: after the kill: " + s1);
            assertThat(afterKill.path("last_session").path("rdma.hw.tx_rdma_write_reqs").asLong())
                    .as("the killed session's WRITEs").isGreaterThan(writes);
            backToStart(s1, start, "after the kill");
            afterKill.path("hw_counters").properties().forEach(e ->
                    assertThat(e.getValue().asLong()).as("hw counter %s at power-on", e.getKey()).isZero());
            assertThat(s1.shmemKiB()).as("guest pages the server touched, before the kill: %s", during)
                    .isLessThan(during.shmemKiB());

            // 2. The next QEMU: the stock drivers, RDMA, a reset mid-traffic, RDMA again.
            GuestResult r = boot(new GuestVm(1, work.resolve("vm1"), socket, System.out), RESET).get();
            System.out.println(r);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(60), r.output())
                    .isZero();
            String out = r.output();
            assertThat(out).as(out).contains("BW fresh server=0 client=0")
                    .containsPattern("TRAFFIC before-reset writes=[1-9]\\d* running=yes")
                    .containsPattern("RESET via=\\S+ status=\\d+")
                    .containsPattern("after-reset device=ionic_\\d+ port=4: ACTIVE")
                    .contains("BW after-reset server=0 client=0");
            // The traffic saw the device go: a fatal async event, and it ended by itself (not by the timeout guard).
            assertThat(out).containsPattern("(?i)ASYNC .*(fatal|catastrophic)")
                    .containsPattern("TRAFFIC after-reset server=(\\d+) client=(\\d+)")
                    .doesNotContain("TRAFFIC after-reset server=124").doesNotContainPattern("client=124\\b");
            JsonNode afterReset = atRest(server, stats, 2);
            // The guest's reset reached the server as a DEVICE_RESET, besides the one of QEMU's start.
            assertThat(afterReset.path("vfio_user").path("resets").asLong())
                    .isGreaterThanOrEqualTo(afterKill.path("vfio_user").path("resets").asLong() + 2);
            System.out.println("guest-faults: refusals during the second guest: " + afterReset.path("refusals"));
            ProcessResources s2 = ProcessResources.of(pid);
            System.out.println("guest-faults: after the second guest: " + s2 + "; vfio_user " + afterReset.path("vfio_user"));
            backToStart(s2, start, "after the second guest");
            assertThat(afterReset.path("vfio_user").path("protocol_closes").asLong()).as("protocol closes").isZero();
            assertThat(afterReset.path("last_session").path("rdma.hw.tx_rdma_write_reqs").asLong()).isPositive();
        }
    }

    static CompletableFuture<GuestResult> boot(GuestVm vm, String script) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return vm.run(script);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    static long hw(JsonNode stats, String name) {
        return stats.path("hw_counters").path(name).asLong(0);
    }

    /** Waits for the stats file to satisfy {@code cond}; five minutes mean "hung" (a loaded TCG host). */
    static JsonNode await(Path stats, String what, Predicate<JsonNode> cond) throws Exception {
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        JsonNode s = JSON.createObjectNode();
        while (true) {
            s = ServerProcess.readStats(stats, s);
            if (cond.test(s)) {
                return s;
            }
            assertThat(System.nanoTime()).as("%s; last stats: %s", what, s.path("vfio_user")).isLessThan(end);
            Thread.sleep(200);
        }
    }

    /** No client, {@code connections} seen, the device at power-on, no guest RAM mapped; then a GC in the server. */
    static JsonNode atRest(ServerProcess server, Path stats, int connections) throws Exception {
        long pid = server.process().pid();
        JsonNode s = await(stats, "the server back at power-on after client " + connections, j ->
                j.path("vfio_user").path("connections").asLong() == connections
                        && !j.path("vfio_user").path("client_connected").asBoolean(true)
                        && j.path("device").path("rdma.qps").asLong(-1) == 0
                        && j.path("device").path("rdma.cqs").asLong(-1) == 0
                        && j.path("device").path("rdma.mrs").asLong(-1) == 0
                        && j.path("qps").isEmpty());
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (ProcessResources.of(pid).memfdMaps() > 0) {
            assertThat(System.nanoTime()).as("guest RAM unmapped: %s", ProcessResources.of(pid)).isLessThan(end);
            Thread.sleep(100);
        }
        ProcessResources.gc(pid);
        return s;
    }

    static void backToStart(ProcessResources now, ProcessResources start, String when) {
        String at = when + ": " + now + "; before the first guest: " + start;
        now.assertNothingLeftOver(start, when + ", before the first guest", FDS_SLACK);
        assertThat(now.shmemKiB()).as("shared memory resident " + at).isLessThanOrEqualTo(start.shmemKiB() + SHMEM_SLACK_KIB);
    }
}
