package ernic.it.guest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Zero-config GIDs: two real guests, each with its own server, the servers in a mesh
 * ({@code ./ernic guest run --vms 2 --no-declared-gids}), and no GID declared to them (ERNIC_TCP_GUEST_GIDS is not
 * set). Each guest gives itself an address nobody told the servers, 10.78.0.(i + 1), and the tools connect to it
 * with its IPv4 GID: the servers learned the addresses from the frames their guests sent (ARP, ping, the tools'
 * TCP exchange) and from their header templates, and a MODIFY_QP to RTR that came before the peer's address
 * reached the mesh waited for it.
 */
@ExtendWith(GuestPrerequisites.class)
class MeshLearnedGidGuestTest {
    static final String SCRIPT = GuestScripts.rdmaUp("$ERNIC_GUEST_IP") + GuestScripts.SERVE_AND_CLIENT + """
            me=10.78.0.$(( ERNIC_VM_INDEX + 1 ))
            ip addr add $me/24 dev "$nd"
            want=$(printf '0000:0000:0000:0000:0000:ffff:0a4e:%04x' $(( ERNIC_VM_INDEX + 1 )))
            gids=/sys/class/infiniband/ionic_0/ports/1/gids
            idx=
            for i in $(seq 1 40); do
                for f in $gids/*; do
                    n=$(basename $f)
                    type=$(cat /sys/class/infiniband/ionic_0/ports/1/gid_attrs/types/$n 2>/dev/null)
                    if [ "$(cat $f)" = "$want" ] && [ "$type" != "IB/RoCE v1" ]; then idx=$n; break 2; fi
                done
                sleep 0.5
            done
            echo "learned-gid index=$idx gid=$(cat $gids/$idx) type=$(cat /sys/class/infiniband/ionic_0/ports/1/gid_attrs/types/$idx)"
            srv=10.78.0.1
            peer=10.78.0.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
            for i in $(seq 1 60); do ping -c 1 -W 1 $peer > /dev/null && break; sleep 1; done
            if [ "$ERNIC_VM_INDEX" = 0 ]; then
                serve rc ibv_rc_pingpong -d ionic_0 -g $idx -n 100 -s 1000 -c -p 18701
                serve write-bw ib_write_bw -d ionic_0 -x $idx -s 65536 -n 200 -p 18702
                serve rping rping -s -a $srv -C 10 -V -v -p 18703
            else
                client rc ibv_rc_pingpong -d ionic_0 -g $idx -n 100 -s 1000 -c -p 18701 $srv
                client write-bw ib_write_bw -d ionic_0 -x $idx -s 65536 -n 200 -p 18702 $srv
                client rping rping -c -a $srv -C 10 -V -v -p 18703
            fi
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """;


    @Test
    void toolsConnectAcrossTheMeshToAddressesNobodyDeclared() throws Exception {
        String out = GuestRunTest.guestRunScript("mesh-learned-gids.sh", SCRIPT, "--vms", "2", "--no-declared-gids");
        // Each guest found its own 10.78.0.N GID (a RoCE v2 one) and used its index.
        assertThat(out).containsPattern("vm0\\| learned-gid index=\\d+ gid=0000:0000:0000:0000:0000:ffff:0a4e:0001")
                .containsPattern("vm1\\| learned-gid index=\\d+ gid=0000:0000:0000:0000:0000:ffff:0a4e:0002")
                .doesNotContain("DMESG-ERRORS");
        // Each server learned its own guest's address (nobody told it), and owns it in the mesh.
        assertThat(out).containsPattern("srv0\\| .*learned GID 10\\.78\\.0\\.1 from the guest")
                .containsPattern("srv1\\| .*learned GID 10\\.78\\.0\\.2 from the guest")
                .doesNotContainPattern("srv0\\| .*learned GID 10\\.78\\.0\\.2 ")
                .doesNotContainPattern("srv1\\| .*learned GID 10\\.78\\.0\\.1 ")
                .doesNotContain("rdma-qp-unowned-gid");
        for (String tool : new String[]{"rc", "write-bw", "rping"}) {
            GuestScripts.assertServedAndPassed(out, tool);
        }
        // Payload validation passed (ibv_rc_pingpong -c, rping -V); rping's tenth ping reached both ends.
        assertThat(out).contains("100 iters in")
                .contains("vm0| server ping data: rdma-ping-9").contains("vm1| ping data: rdma-ping-9");
    }
}
