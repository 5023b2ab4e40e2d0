package ernic.it.guest;

import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --backend none} as a driver developer uses it: the stock {@code ionic} and {@code ionic_rdma}
 * drivers probe, the RDMA device registers with an active port, and a verbs program (pyverbs) creates a
 * PD, CQ, MR, an RC QP taken through INIT, RTR and RTS, an address handle, and destroys them all; the
 * server answers each resource command as a stub and counts it under {@code rdma.stub.}.
 */
@ExtendWith(GuestPrerequisites.class)
class BackendNoneGuestTest {
    static final String GUEST_IP = "192.168.200.2";

    static final String VERBS = GuestScripts.PYVERBS_RC + """
            from pyverbs.device import Context
            from pyverbs.pd import PD
            from pyverbs.cq import CQ
            from pyverbs.mr import MR
            from pyverbs.addr import AH
            ctx = Context(name='ionic_0')
            route = ipv4_route(ctx)
            pd = PD(ctx)
            cq = CQ(ctx, 16)
            mr = MR(pd, 4096, ACC)
            print('mr lkey', mr.lkey != 0, 'rkey', mr.rkey != 0)
            qp = rc_qp(pd, cq)
            connect(qp, qp.qp_num, route)
            print('qp rts', qp.qp_num)
            ah = AH(pd, attr=AHAttr(gr=route, is_global=1, port_num=1))
            for r in (ah, qp, mr, cq, pd):
                r.close()
            ctx.close()
            print('verbs-stubs-ok')
            """;

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            set -e
            trap 'echo "exit-trap"; dmesg | grep -iE "ionic|rdma" | tail -60' EXIT
            echo "port-state $(cat /sys/class/infiniband/ionic_0/ports/1/state)"
            ibv_devinfo -d ionic_0 | grep -E 'hca_id|state|transport'
            cat > /tmp/verbs.py <<'EOF'
            %sEOF
            python3 /tmp/verbs.py
            # A power-off resets the device and its counters: the test reads them while the guest is up.
            touch /job/verbs-done
            for i in $(seq 1 120); do [ -e /job/counters-read ] && break; sleep 0.5; done
            echo "none-script-done"
            """.formatted(VERBS);


    @Test
    void theStockDriversProbeAndResourceCommandsAreCountedStubs() throws Exception {
        Path work = GuestPrerequisites.workDir("backend-none");
        Path socket = GuestPrerequisites.socketIn(work);
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString())
                .withBackend("none"))) {
            Path job = work.resolve("vm0");
            Files.deleteIfExists(job.resolve("verbs-done"));
            Files.deleteIfExists(job.resolve("counters-read"));
            CompletableFuture<GuestResult> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return new GuestVm(0, job, socket, System.out).run(SCRIPT);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            while (!run.isDone() && !Files.exists(job.resolve("verbs-done"))) {
                Thread.sleep(200);
            }
            Map<String, Long> stubs = ServerCounters.read(server,
                    n -> n.startsWith("rdma.stub.") || n.equals("rdma.qps"));
            Files.writeString(job.resolve("counters-read"), "");
            GuestResult r = run.get();
            System.out.println(r);
            System.out.println("stub counters while the guest was up: " + stubs);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(60), r.output())
                    .isZero();
            assertThat(r.output()).contains("port-state 4: ACTIVE").contains("hca_id:\tionic_0")
                    .contains("mr lkey True rkey True").containsPattern("qp rts \\d+")
                    .contains("verbs-stubs-ok").contains("none-script-done");
            // The kernel's GSI QP and the program's QP, each modified three times, all as stubs: nothing exists.
            assertThat(stubs.get("rdma.stub.create_qp")).isGreaterThanOrEqualTo(2);
            assertThat(stubs.get("rdma.stub.modify_qp")).isGreaterThanOrEqualTo(3);
            assertThat(stubs.get("rdma.stub.create_cq")).isGreaterThanOrEqualTo(2);
            assertThat(stubs.get("rdma.stub.create_mr")).isGreaterThanOrEqualTo(1);
            assertThat(stubs.get("rdma.stub.create_ah")).isGreaterThanOrEqualTo(1);
            assertThat(stubs.get("rdma.stub.destroy_qp")).isGreaterThanOrEqualTo(1);
            assertThat(stubs).containsEntry("rdma.qps", 0L);
        }
    }
}
