package ernic.it.guest;

import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --inject}'s RDMA kinds as an application in the real guest sees them (one boot for every check): a
 * server started with one value of each kind, each on its own QP, and a pyverbs program that takes those QP
 * numbers, posts RC operations on them and prints the work completions it gets. The chosen WQEs complete with
 * IBV_WC_REM_ACCESS_ERR, IBV_WC_RNR_RETRY_EXC_ERR and IBV_WC_RETRY_EXC_ERR, the work behind them with
 * IBV_WC_WR_FLUSH_ERR, and nothing of a chosen WQE lands; the latency-injected QP's operations all succeed, and
 * its round trips (printed, never asserted) are longer by about the time added.
 */
@ExtendWith(GuestPrerequisites.class)
class RdmaFaultInjectionGuestTest {
    static final String GUEST_IP = "10.9.2.1";
    /** QP numbers the stock drivers hand out early in a fresh guest (the program takes QPs until it has them). */
    static final int REM_ACCESS_QP = 4, RNR_QP = 5, RETRY_QP = 6, LATENCY_QP = 7;
    static final int LATENCY_US = 20_000, ROUND_TRIPS = 20;
    static final List<String> INJECT = List.of(
            "rdma-rem-access:seq=2,qp=" + REM_ACCESS_QP,
            "rdma-rnr:seq=1,qp=" + RNR_QP,
            "rdma-retry-exc:seq=2,qp=" + RETRY_QP,
            "rdma-latency:us=" + LATENCY_US + ",qp=" + LATENCY_QP);

    static final String FAULTS_PY = GuestScripts.PYVERBS_WR + """
            REM, RNR, RETRY, LAT, TRIPS = (int(x) for x in sys.argv[1:6])
            ctx = Context(name='ionic_0')
            pd = PD(ctx)
            mr = MR(pd, 1 << 16, ACC)
            gid = ctx.query_gid(1, 1)
            cq = CQ(ctx, 256)
            cap = QPCap(max_send_wr=32, max_recv_wr=32, max_send_sge=1, max_recv_sge=1)
            ia = QPInitAttr(qp_type=e.ibv_qp_type.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)

            # The server's --inject values name QPs by number: take QPs until each of those numbers is ours.
            wanted, got, spare, seen = {REM, RNR, RETRY, LAT}, {}, [], []
            while not wanted <= set(got) and len(seen) < 300:
                q = QP(pd, ia)
                seen.append(q.qp_num)
                if q.qp_num in wanted:
                    got[q.qp_num] = q
                else:
                    spare.append(q)
            print('FAULT qps-created=%s' % ','.join(map(str, seen)), flush=True)
            if not wanted <= set(got):
                print('FAULT missing-qps=%s' % sorted(wanted - set(got)), flush=True)
                sys.exit(3)
            while len(spare) < 6:
                spare.append(QP(pd, ia))
            for q in spare[6:]:
                q.close()
            peer = dict(zip((REM, RNR, RETRY, LAT), spare[:4]))
            plain, plain_peer = spare[4], spare[5]

            def pair(a, b):
                for x, y in ((a, b), (b, a)):
                    connect(x, y.qp_num, GlobalRoute(dgid=gid, sgid_index=1), ACC)

            for n in (REM, RNR, RETRY, LAT):
                pair(got[n], peer[n])
            pair(plain, plain_peer)

            pending = []

            def completions(q, n, secs=5.0):
                start = time.monotonic()
                while True:
                    mine = [w for w in pending if w.qp_num == q.qp_num]
                    if len(mine) >= n or time.monotonic() - start > secs:
                        if len(mine) < n and secs >= 5.0:
                            print('FAULT short qp=%d got=%d of %d after %.1f s' % (q.qp_num, len(mine), n,
                                                                                 time.monotonic() - start), flush=True)
                        for w in mine[:n]:
                            pending.remove(w)
                        return mine[:n]
                    k, wcs = cq.poll(num_entries=8)
                    if k > 0:
                        pending.extend(wcs[:k])
                    else:
                        time.sleep(0.0002)

            def show(case, wcs):
                for w in wcs:
                    print('FAULT case=%s wr=%d status=%s' % (case, w.wr_id, status(w.status)), flush=True)

            def post(q, wr_id, opcode, local, remote=None):
                wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[SGE(mr.buf + local, 8, mr.lkey)],
                            send_flags=SIG)
                if remote is not None:
                    wr.set_wr_rdma(mr.rkey, mr.buf + remote)
                q.post_send(wr)

            def recv(q, wr_id, at):
                q.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(mr.buf + at, 64, mr.lkey)]))

            def landed(data, *offsets):
                return ','.join('yes' if mr.read(8, o) == data else 'no' for o in offsets)

            # rdma-rem-access:seq=2 on REM: WRITEs 1 and 2 and 3; the second fails, the third is flushed.
            q, p = got[REM], peer[REM]
            mr.write(b'AAAAAAAA', 8, 0)
            recv(p, 60, 4096)  # the responder's receive: never touched
            recv(q, 50, 4160)  # the requester's own: flushed with its QP
            post(q, 1, W.IBV_WR_RDMA_WRITE, 0, 1024)
            post(q, 2, W.IBV_WR_RDMA_WRITE, 0, 1032)
            post(q, 3, W.IBV_WR_RDMA_WRITE, 0, 1040)
            show('rem-access', completions(q, 4))
            print('FAULT rem-access landed=%s peer-recv=%d' % (landed(b'AAAAAAAA', 1024, 1032, 1040),
                                                               len(completions(p, 1, 0.5))), flush=True)

            # rdma-rnr:seq=1 on RNR: the first SEND fails though the peer has a receive posted.
            q, p = got[RNR], peer[RNR]
            mr.write(b'RRRRRRRR', 8, 8)
            recv(p, 61, 4224)
            post(q, 1, W.IBV_WR_SEND, 8)
            post(q, 2, W.IBV_WR_SEND, 8)
            show('rnr', completions(q, 2))
            print('FAULT rnr landed=%s peer-recv=%d' % (landed(b'RRRRRRRR', 4224), len(completions(p, 1, 0.5))),
                  flush=True)

            # rdma-retry-exc:seq=2 on RETRY: a WRITE, then a READ that fails, then a WRITE that is flushed.
            q = got[RETRY]
            mr.write(b'TTTTTTTT', 8, 16)
            post(q, 1, W.IBV_WR_RDMA_WRITE, 16, 2048)
            post(q, 2, W.IBV_WR_RDMA_READ, 2056, 16)
            post(q, 3, W.IBV_WR_RDMA_WRITE, 16, 2064)
            show('retry-exc', completions(q, 3))
            print('FAULT retry-exc landed=%s' % landed(b'TTTTTTTT', 2048, 2056, 2064), flush=True)

            # rdma-latency on LAT: every operation waits; the same round trips on a plain QP for comparison.
            def trips(q, n):
                took, sts = 0.0, set()
                for i in range(n):
                    t = time.time()
                    post(q, 100 + i, W.IBV_WR_RDMA_WRITE, 0, 3072)
                    w = completions(q, 1, 10.0)
                    took += time.time() - t
                    sts.add(status(w[0].status) if w else 'NO_COMPLETION')
                return took / n * 1e6, ','.join(sorted(sts))

            lat_us, lat_sts = trips(got[LAT], TRIPS)
            plain_us, plain_sts = trips(plain, TRIPS)
            print('FAULT latency statuses=%s plain-statuses=%s' % (lat_sts, plain_sts), flush=True)
            print('FAULT latency round-trip-us delayed=%.0f plain=%.0f' % (lat_us, plain_us), flush=True)
            print('FAULT leftover=%d' % len(pending), flush=True)
            for w in pending:  # a completion that came too late for its case says which it was
                print('FAULT late qp=%d wr=%d status=%s' % (w.qp_num, w.wr_id, status(w.status)), flush=True)
            print('FAULT done', flush=True)
            """;

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            cat > /tmp/faults.py <<'PYEOF'
            %s
            PYEOF
            if timeout 120 python3 /tmp/faults.py %d %d %d %d %d > /tmp/faults.txt 2>&1; then f=0; else f=$?; fi
            cat /tmp/faults.txt
            echo "FAULT exit=$f"
            echo "hwc completion_errors $(cat /sys/class/infiniband/ionic_0/ports/1/hw_counters/completion_errors)"
            dmesg | grep -iE 'ionic|infiniband' | tail -20
            """.formatted(FAULTS_PY.strip(), REM_ACCESS_QP, RNR_QP, RETRY_QP, LATENCY_QP, ROUND_TRIPS);


    @Test
    void anApplicationSeesEachInjectedErrorAndTheAddedLatency() throws Exception {
        Path work = GuestPrerequisites.workDir("rdma-faults");
        Path socket = GuestPrerequisites.socketIn(work);
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString())
                .withInject(INJECT))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40), r.output())
                    .isZero();
            String out = r.output();
            assertThat(out).as(out).contains("FAULT done").contains("FAULT exit=0").doesNotContain("missing-qps")
                    // rdma-rem-access: the chosen WRITE, then what the QP still had, flushed
                    .containsPattern("FAULT case=rem-access wr=1 status=IBV_WC_SUCCESS\\b")
                    .containsPattern("FAULT case=rem-access wr=2 status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("FAULT case=rem-access wr=3 status=IBV_WC_WR_FLUSH_ERR\\b")
                    .containsPattern("FAULT case=rem-access wr=50 status=IBV_WC_WR_FLUSH_ERR\\b")
                    .contains("FAULT rem-access landed=yes,no,no peer-recv=0")
                    // rdma-rnr
                    .containsPattern("FAULT case=rnr wr=1 status=IBV_WC_RNR_RETRY_EXC_ERR\\b")
                    .containsPattern("FAULT case=rnr wr=2 status=IBV_WC_WR_FLUSH_ERR\\b")
                    .contains("FAULT rnr landed=no peer-recv=0")
                    // rdma-retry-exc
                    .containsPattern("FAULT case=retry-exc wr=1 status=IBV_WC_SUCCESS\\b")
                    .containsPattern("FAULT case=retry-exc wr=2 status=IBV_WC_RETRY_EXC_ERR\\b")
                    .containsPattern("FAULT case=retry-exc wr=3 status=IBV_WC_WR_FLUSH_ERR\\b")
                    .contains("FAULT retry-exc landed=yes,no,no")
                    // rdma-latency: every operation succeeds; the times are information only
                    .contains("FAULT latency statuses=IBV_WC_SUCCESS plain-statuses=IBV_WC_SUCCESS")
                    .containsPattern("FAULT latency round-trip-us delayed=\\d+ plain=\\d+")
                    .contains("FAULT leftover=0")
                    .doesNotContain("admin command timed out");
            out.lines().filter(l -> l.contains("round-trip-us") || l.contains("qps-created"))
                    .forEach(l -> System.out.println("information: " + l.strip()));
            Map<String, Long> counters = ((IonicDevice) server.device()).lastSessionCounters();
            System.out.println("fault counters of the session: " + counters.entrySet().stream()
                    .filter(c -> c.getKey().startsWith("fault.rdma")).toList());
            assertThat(counters).containsEntry("fault.rdma-rem-access.injected", 1L)
                    .containsEntry("fault.rdma-rnr.injected", 1L)
                    .containsEntry("fault.rdma-retry-exc.injected", 1L)
                    .containsEntry("fault.rdma-latency.injected", (long) ROUND_TRIPS);
            assertThat(counters.get("rdma.sq.errors")).as("the three injected errors").isEqualTo(3);
        }
    }
}
