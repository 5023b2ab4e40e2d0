package ernic.it.guest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The emulated NIC against Soft-RoCE over real RoCEv2 ({@code --roce}, docs/roce.md): guest 0's server speaks RoCEv2
 * on its TAP; guest 1 is a Soft-RoCE host (its NIC plain Ethernet, no ionic_rdma, {@code rdma_rxe} on its netdev,
 * its server without {@code --roce}), on one segment, no mesh. rdma-core's and perftest's tools between
 * {@code ionic_0} and {@code rxe0}, each tool with the server end in guest 0 and then in guest 1, so the device is
 * requester and responder of every operation; {@code rping} and {@code udaddy} connect through rdma_cm, whose CM
 * MADs cross as UD datagrams between the GSI QPs. Everything crosses as packets the kernel's rxe checks (ICRC,
 * PSNs, opcodes, lengths) and the device checks in turn.
 */
@ExtendWith(GuestPrerequisites.class)
class RoceGuestTest {
    static final String SCRIPT = """
            if [ "$ERNIC_VM_INDEX" = 0 ]; then
                nd=$(ernic-ionic-up $ERNIC_GUEST_IP)
                dev=ionic_0
            else
                # a Soft-RoCE host: its NIC is plain Ethernet (no ionic_rdma, so rdma_cm finds rxe0 alone)
                echo "blacklist ionic_rdma" > /etc/modprobe.d/ernic-no-ionic-rdma.conf
                modprobe ionic
                for i in $(seq 1 30); do nd=$(ls /sys/bus/pci/drivers/ionic/*/net 2>/dev/null | head -n1); [ -n "$nd" ] && break; sleep 1; done
                ip link set $nd up && ip addr add $ERNIC_GUEST_IP/24 dev $nd
                modprobe rdma_rxe && rdma link add rxe0 type rxe netdev $nd
                dev=rxe0
            fi
            peer=192.168.77.$(( (ERNIC_VM_INDEX + 1) % 2 + 1 ))
            for i in $(seq 1 60); do ping -c 1 -W 1 $peer > /dev/null && break; sleep 1; done
            g=
            for f in /sys/class/infiniband/$dev/ports/1/gids/*; do # the RoCE v2 IPv4 GID
                i=${f##*/}; t=$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i 2>/dev/null)
                case "$(cat $f)" in 0000:0000:0000:0000:0000:ffff:*) [ "$t" = "RoCE v2" ] && { g=$i; break; };; esac
            done
            echo "DEV $dev gid $g $(cat /sys/class/infiniband/$dev/ports/1/gids/$g) devices: $(ls /sys/class/infiniband | tr '\\n' ' ')"
            run() { # NAME SERVER-VM COMMAND...: the server end in guest SERVER-VM, the client end in the other
                name=$1; sv=$2; shift 2
                if [ "$ERNIC_VM_INDEX" = "$sv" ]; then
                    role=server
                    if timeout 180 stdbuf -oL -eL "$@" > /tmp/$name.txt 2>&1; then s=0; else s=$?; fi
                else
                    role=client
                    end=$(( $(date +%s) + 180 ))
                    while :; do # tried until the server listens
                        if timeout 120 stdbuf -oL -eL "$@" > /tmp/$name.txt 2>&1; then s=0; break; else s=$?; fi
                        grep -q "Couldn't connect\\|Unable to init the socket\\|Connection refused\\|REJECTED\\|UNREACHABLE\\|connect error" /tmp/$name.txt || break
                        [ "$(date +%s)" -lt $end ] || break
                        sleep 1
                    done
                fi
                tail -n 8 /tmp/$name.txt
                echo "RESULT $name $role=$s"
            }
            for sv in 0 1; do
                srv=192.168.77.$(( sv + 1 )); to=""
                [ "$ERNIC_VM_INDEX" = "$sv" ] || to=$srv
                if [ "$ERNIC_VM_INDEX" = "$sv" ]; then rp="-s"; ud="-b $srv"; else rp="-c"; ud="-s $srv"; fi
                run rc-$sv $sv ibv_rc_pingpong -d $dev -g $g -n 50 -s 4096 -c -p 1870$sv $to
                run rping-$sv $sv rping $rp -a $srv -C 10 -V -v -p 1871$sv
                run udaddy-$sv $sv udaddy $ud
                run write-bw-$sv $sv ib_write_bw -d $dev -x $g -s 65536 -n 100 -p 1872$sv $to
                run read-bw-$sv $sv ib_read_bw -d $dev -x $g -s 65536 -n 100 -p 1873$sv $to
                run send-bw-$sv $sv ib_send_bw -d $dev -x $g -s 65536 -n 100 -p 1874$sv $to
                run atomic-bw-$sv $sv ib_atomic_bw -d $dev -x $g -n 100 -p 1875$sv $to
            done
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """;

    @Test
    void theEmulatedNicAndSoftRoceTalkRoceV2BothWays() throws Exception {
        Path stats = Files.createDirectories(Path.of("target", "guest")).toAbsolutePath().resolve("roce-srv0.json");
        Files.deleteIfExists(stats);
        String out = GuestRunTest.guestRunScript("roce-rxe.sh", SCRIPT, "--vms", "2", "--no-mesh",
                "--server-args-vm", "0=--roce --stats-file " + stats);
        assertThat(out).contains("vm0| DEV ionic_0 gid 1 0000:0000:0000:0000:0000:ffff:c0a8:4d01")
                .contains("vm1| DEV rxe0 gid 1 0000:0000:0000:0000:0000:ffff:c0a8:4d02 devices: rxe0")
                .doesNotContain("DMESG-ERRORS");
        for (String tool : new String[]{"rc", "rping", "udaddy", "write-bw", "read-bw", "send-bw", "atomic-bw"}) {
            for (int sv = 0; sv < 2; sv++) {
                int client = 1 - sv;
                assertThat(out).as(tool + " with its server end in guest " + sv)
                        .contains("vm" + sv + "| RESULT " + tool + "-" + sv + " server=0")
                        .contains("vm" + client + "| RESULT " + tool + "-" + sv + " client=0");
            }
        }
        // Payloads checked (ibv_rc_pingpong -c, rping -V); rping's tenth ping reached both ends.
        assertThat(out).contains("50 iters in").contains("vm0| server ping data: rdma-ping-9")
                .contains("vm1| server ping data: rdma-ping-9");
        // The device did it on the wire, and refused nothing rxe sent.
        JsonNode session = lastSession(new ObjectMapper().readTree(stats.toFile()));
        assertThat(session.path("roce.qpsPlaced").asLong()).isGreaterThanOrEqualTo(12); // rc, rping and the four perftest tools, each way
        assertThat(session.path("roce.rxFrames").asLong()).isGreaterThan(10_000);
        assertThat(session.path("roce.txFrames").asLong()).isGreaterThan(10_000);
        for (String refused : new String[]{"roce.rxMalformed", "roce.rxWrongSource", "roce.rxNotRc",
                "roce.txUnreadable"}) {
            assertThat(session.path(refused).asLong()).as(refused).isZero();
        }
    }

    /** The device's counters of the session that just ended (the guest shut down), or of the current one. */
    static JsonNode lastSession(JsonNode stats) {
        JsonNode last = stats.path("last_session");
        return last.has("roce.rxFrames") ? last : last.path("device").has("roce.rxFrames") ? last.path("device")
                : stats.path("device");
    }
}
