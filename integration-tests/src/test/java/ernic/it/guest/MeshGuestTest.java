package ernic.it.guest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two real guests, each with its own server, the servers joined in a mesh ({@code ./ernic guest run --vms 2}
 * makes server 0 the manager): rdma-core's and perftest's tools with the server end in guest 0 and the client in
 * guest 1, so every byte crosses the mesh. The tools exchange their QP details over the guests' Ethernet segment,
 * as on a real fabric; rdma_cm's tools (rping, udaddy) resolve and connect through the GSI QPs, which cross the
 * mesh too.
 */
@ExtendWith(GuestPrerequisites.class)
class MeshGuestTest {
    static final String SCRIPT = GuestScripts.rdmaUp("$ERNIC_GUEST_IP") + GuestScripts.SERVE_AND_CLIENT + """
            srv=192.168.77.1
            peer=192.168.77.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
            for i in $(seq 1 60); do ping -c 1 -W 1 $peer > /dev/null && break; sleep 1; done
            echo "gid1 $(cat /sys/class/infiniband/ionic_0/ports/1/gids/1)"
            if [ "$ERNIC_VM_INDEX" = 0 ]; then
                serve rc ibv_rc_pingpong -d ionic_0 -g 1 -n 100 -s 1000 -c -p 18601
                serve write-bw ib_write_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18602
                serve write-bw-8m ib_write_bw -d ionic_0 -x 1 -s 8388608 -n 20 -p 18607
                serve read-bw ib_read_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18603
                serve send-bw ib_send_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18604
                serve atomic-bw ib_atomic_bw -d ionic_0 -x 1 -n 200 -p 18605
                serve rping rping -s -a $srv -C 10 -V -v -p 18606
                serve udaddy udaddy -b $srv
            else
                client rc ibv_rc_pingpong -d ionic_0 -g 1 -n 100 -s 1000 -c -p 18601 $srv
                client write-bw ib_write_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18602 $srv
                client write-bw-8m ib_write_bw -d ionic_0 -x 1 -s 8388608 -n 20 -p 18607 $srv
                client read-bw ib_read_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18603 $srv
                client send-bw ib_send_bw -d ionic_0 -x 1 -s 65536 -n 200 -p 18604 $srv
                client atomic-bw ib_atomic_bw -d ionic_0 -x 1 -n 200 -p 18605 $srv
                client rping rping -c -a $srv -C 10 -V -v -p 18606
                client udaddy udaddy -s $srv
            fi
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """;


    @Test
    void twoGuestsTalkRdmaAcrossTheMesh() throws Exception {
        String out = GuestRunTest.guestRunScript("mesh-two-vms.sh", SCRIPT, "--vms", "2");
        assertThat(out).contains("vm0| gid1 0000:0000:0000:0000:0000:ffff:c0a8:4d01")
                .contains("vm1| gid1 0000:0000:0000:0000:0000:ffff:c0a8:4d02")
                .doesNotContain("DMESG-ERRORS");
        // write-bw-8m: 8 MiB WRITEs, which cross the mesh in pieces (a 4 MiB piece and the last message).
        for (String tool : new String[]{"rc", "write-bw", "write-bw-8m", "read-bw", "send-bw", "atomic-bw", "rping",
                "udaddy"}) {
            GuestScripts.assertServedAndPassed(out, tool);
        }
        // Payload validation passed (ibv_rc_pingpong -c, rping -V); rping's tenth ping reached both ends.
        assertThat(out).contains("100 iters in")
                .contains("vm0| server ping data: rdma-ping-9").contains("vm1| ping data: rdma-ping-9");
        // udaddy: SIDR over the GSI QPs, an AH per peer, datagrams both ways.
        assertThat(out).containsPattern("vm0\\| .*data transfers complete").containsPattern("vm1\\| .*test complete");
    }
}
