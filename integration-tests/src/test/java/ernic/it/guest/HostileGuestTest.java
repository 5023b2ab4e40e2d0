package ernic.it.guest;

import ernic.vfiouser.server.VfioCounter;
import ernic.ionic.IonicDevice;
import ernic.it.harness.GuestResult;
import ernic.it.harness.GuestVm;
import ernic.server.ErnicServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile process in the guest posts malformed work requests (keys that do not exist, SGEs past
 * their MR, addresses that wrap, inline data larger than the QP allows, receive buffers it may not
 * write) on its own RC QPs while two well-behaved processes keep ping-ponging (with payload
 * validation) and streaming RDMA WRITEs on the same device. The hostile process gets error
 * completions with the statuses hardware gives; the others finish cleanly; the server keeps serving.
 */
@ExtendWith(GuestPrerequisites.class)
class HostileGuestTest {
    static final String GUEST_IP = "10.9.0.1";

    /** pyverbs: one fresh self-connected RC QP pair (and CQ) per case, since an error moves a QP to ERROR. */
    static final String HOSTILE_PY = GuestScripts.PYVERBS_WR + """
            ctx = Context(name='ionic_0')
            pd = PD(ctx)
            mr = MR(pd, 8192, ACC)
            small = MR(pd, 64, ACC)
            gid = ctx.query_gid(1, 1)
            BAD_KEY = 0x00fffe00 | 0x5a  # an index no MR has
            keep = []

            def pair():
                cq = CQ(ctx, 16)
                cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=2, max_recv_sge=2, max_inline_data=32)
                ia = QPInitAttr(qp_type=e.ibv_qp_type.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)
                a, b = QP(pd, ia), QP(pd, ia)
                for x, y in ((a, b), (b, a)):
                    connect(x, y.qp_num, GlobalRoute(dgid=gid, sgid_index=1), ACC)
                keep.append((cq, a, b))
                return cq, a, b

            def completions(cq, want, secs=5.0):
                got, end = [], time.time() + secs
                while len(got) < want and time.time() < end:
                    n, wcs = cq.poll(num_entries=4)
                    got += wcs[:n] if n > 0 else []
                    if n <= 0:
                        time.sleep(0.001)
                return got

            def run(name, op, sge, rkey=None, raddr=None, inline=False, recv_sge=None, atomic=False):
                cq, a, b = pair()
                want = 1
                if recv_sge is not None:
                    b.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[recv_sge]))
                    want = 2
                elif op in (W.IBV_WR_SEND,):
                    b.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[SGE(mr.buf + 4096, 4096, mr.lkey)]))
                flags = SIG | (e.ibv_send_flags.IBV_SEND_INLINE if inline else 0)
                wr = SendWR(wr_id=1, opcode=op, num_sge=1, sg=[sge], send_flags=flags)
                if atomic:
                    wr.set_wr_atomic(rkey, raddr, 1, 0)
                elif rkey is not None:
                    wr.set_wr_rdma(rkey, raddr)
                try:
                    a.post_send(wr)
                except Exception as ex:
                    print('HOSTILE case=%s status=POST_REFUSED errno=%s' % (name, getattr(ex, 'error_code', '?')), flush=True)
                    return
                wcs = completions(cq, want)
                send = [w for w in wcs if w.qp_num == a.qp_num]
                recv = [w for w in wcs if w.qp_num == b.qp_num]
                line = 'HOSTILE case=%s status=%s' % (name, status(send[0].status) if send else 'NO_COMPLETION')
                if send:
                    line += ' vendor_err=%d' % send[0].vendor_err
                if recv_sge is not None:
                    line += ' recv=%s' % (status(recv[0].status) if recv else 'NO_COMPLETION')
                print(line, flush=True)

            top = (1 << 64) - 16
            good = SGE(mr.buf, 64, mr.lkey)
            run('send-bad-lkey', W.IBV_WR_SEND, SGE(mr.buf, 64, BAD_KEY))
            run('write-bad-lkey', W.IBV_WR_RDMA_WRITE, SGE(mr.buf, 64, BAD_KEY), mr.rkey, mr.buf + 4096)
            run('send-sge-past-mr', W.IBV_WR_SEND, SGE(mr.buf + 4096, 8192, mr.lkey))
            run('write-sge-past-mr', W.IBV_WR_RDMA_WRITE, SGE(mr.buf + 8000, 256, mr.lkey), mr.rkey, mr.buf)
            run('write-sge-wraps', W.IBV_WR_RDMA_WRITE, SGE(top, 64, mr.lkey), mr.rkey, mr.buf)
            run('write-bad-rkey', W.IBV_WR_RDMA_WRITE, good, BAD_KEY, mr.buf + 4096)
            run('write-past-remote-mr', W.IBV_WR_RDMA_WRITE, good, mr.rkey, mr.buf + 8192 - 32)
            run('write-remote-wraps', W.IBV_WR_RDMA_WRITE, good, mr.rkey, top)
            run('read-bad-rkey', W.IBV_WR_RDMA_READ, SGE(mr.buf + 4096, 64, mr.lkey), BAD_KEY, mr.buf)
            run('read-remote-wraps', W.IBV_WR_RDMA_READ, SGE(mr.buf + 4096, 64, mr.lkey), mr.rkey, top)
            run('atomic-bad-rkey', W.IBV_WR_ATOMIC_FETCH_AND_ADD, SGE(mr.buf + 4096, 8, mr.lkey), BAD_KEY, mr.buf, atomic=True)
            run('atomic-misaligned', W.IBV_WR_ATOMIC_FETCH_AND_ADD, SGE(mr.buf + 4096, 8, mr.lkey), mr.rkey, mr.buf + 3, atomic=True)
            run('recv-sge-past-mr', W.IBV_WR_SEND, good, recv_sge=SGE(small.buf + 32, 4096, small.lkey))
            run('recv-too-small', W.IBV_WR_SEND, SGE(mr.buf, 256, mr.lkey), recv_sge=SGE(mr.buf + 4096, 16, mr.lkey))
            big = MR(pd, 4096, ACC)
            run('inline-oversize', W.IBV_WR_SEND, SGE(big.buf, 4096, big.lkey), inline=True)
            # A good WRITE on a fresh pair after all that: this process's own traffic still works.
            mr.write(b'hostile-but-fine', 16, 0)
            run('write-good', W.IBV_WR_RDMA_WRITE, SGE(mr.buf, 16, mr.lkey), mr.rkey, mr.buf + 6000)
            print('HOSTILE readback=%s' % mr.read(16, 6000).decode(), flush=True)
            print('HOSTILE done', flush=True)
            """;

    static final String SCRIPT = GuestScripts.rdmaUp(GUEST_IP) + """
            cat > /tmp/hostile.py <<'PYEOF'
            %s
            PYEOF
            # The well-behaved workloads, in the background: a validating RC ping-pong and a timed WRITE stream
            # (60 s: longer than the hostile process takes even on a loaded host, so the two overlap). The
            # ping-pong has no duration option: 30000 round trips last 14 s at the fastest seen (470 us each).
            timeout 250 ibv_rc_pingpong -d ionic_0 -g 1 -n 30000 -s 1000 -c > /tmp/pp-server.txt 2>&1 &
            pps=$!
            timeout 150 ib_write_bw -d ionic_0 -x 1 -s 65536 -D 60 -p 18600 > /tmp/bw-server.txt 2>&1 &
            bws=$!
            sleep 2
            timeout 250 ibv_rc_pingpong -d ionic_0 -g 1 -n 30000 -s 1000 -c localhost > /tmp/pp-client.txt 2>&1 &
            ppc=$!
            timeout 150 ib_write_bw -d ionic_0 -x 1 -s 65536 -D 60 -p 18600 localhost > /tmp/bw-client.txt 2>&1 &
            bwc=$!
            sleep 2
            alive() { for p in "$@"; do kill -0 $p 2>/dev/null || { echo no; return; }; done; echo yes; }
            echo "WORKLOAD before-hostile running=$(alive $pps $ppc $bws $bwc)"
            if timeout 100 python3 /tmp/hostile.py > /tmp/hostile.txt 2>&1; then h=0; else h=$?; fi
            cat /tmp/hostile.txt
            echo "HOSTILE exit=$h"
            echo "WORKLOAD after-hostile bw-running=$(alive $bws $bwc)"
            # (wait in this shell: a $(...) subshell cannot wait for these children)
            if wait $pps; then r1=0; else r1=$?; fi
            if wait $ppc; then r2=0; else r2=$?; fi
            if wait $bws; then r3=0; else r3=$?; fi
            if wait $bwc; then r4=0; else r4=$?; fi
            cat /tmp/pp-server.txt /tmp/pp-client.txt /tmp/bw-server.txt /tmp/bw-client.txt
            echo "RESULT pingpong server=$r1 client=$r2"
            echo "RESULT write-bw server=$r3 client=$r4"
            echo "hwc completion_errors $(cat /sys/class/infiniband/ionic_0/ports/1/hw_counters/completion_errors)"
            dmesg | grep -iE 'ionic|infiniband' | tail -40
            if dmesg | grep -iE 'ionic.*(error|fail|timed out|bad)' | grep -v 'module verification'; then echo "DMESG-ERRORS"; fi
            """.formatted(HOSTILE_PY.strip());


    @Test
    void hostileProcessGetsErrorCompletionsWhileOthersGoOn() throws Exception {
        Path work = GuestPrerequisites.workDir("hostile");
        Path socket = GuestPrerequisites.socketIn(work);
        try (ErnicServer server = ErnicServer.start(ErnicServer.Settings.ionic(socket.toString()))) {
            GuestResult r = new GuestVm(0, work.resolve("vm0"), socket, System.out).run(SCRIPT);
            System.out.println(r);
            assertThat(r.exitStatus()).as("guest script; console tail:\n%s\noutput:\n%s", r.consoleTail(40), r.output())
                    .isZero();
            String out = r.output();
            // The hostile process: one error completion per malformed work request, with hardware's statuses.
            assertThat(out).as(out).contains("HOSTILE done").contains("HOSTILE exit=0")
                    .containsPattern("HOSTILE case=send-bad-lkey status=IBV_WC_LOC_PROT_ERR\\b")
                    .containsPattern("HOSTILE case=write-bad-lkey status=IBV_WC_LOC_PROT_ERR\\b")
                    .containsPattern("HOSTILE case=send-sge-past-mr status=IBV_WC_LOC_PROT_ERR\\b")
                    .containsPattern("HOSTILE case=write-sge-past-mr status=IBV_WC_LOC_PROT_ERR\\b")
                    .containsPattern("HOSTILE case=write-sge-wraps status=IBV_WC_LOC_PROT_ERR\\b")
                    .containsPattern("HOSTILE case=write-bad-rkey status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=write-past-remote-mr status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=write-remote-wraps status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=read-bad-rkey status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=read-remote-wraps status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=atomic-bad-rkey status=IBV_WC_REM_ACCESS_ERR\\b")
                    .containsPattern("HOSTILE case=atomic-misaligned status=IBV_WC_REM_INV_REQ_ERR\\b")
                    // The responder's receive buffer is the fault: it sees a local error, the requester a remote one.
                    .containsPattern("HOSTILE case=recv-sge-past-mr status=IBV_WC_REM_OP_ERR .*recv=IBV_WC_LOC_PROT_ERR")
                    .containsPattern("HOSTILE case=recv-too-small status=IBV_WC_REM_INV_REQ_ERR .*recv=IBV_WC_LOC_LEN_ERR")
                    // libionic refuses inline data beyond the QP's limit at post time (EINVAL): no WQE reaches the device.
                    .contains("HOSTILE case=inline-oversize status=POST_REFUSED errno=22")
                    .containsPattern("HOSTILE case=write-good status=IBV_WC_SUCCESS\\b")
                    .contains("HOSTILE readback=hostile-but-fine");
            // The others: started before the hostile process, still running after it, and finished cleanly.
            assertThat(out).contains("WORKLOAD before-hostile running=yes")
                    .contains("WORKLOAD after-hostile bw-running=yes")
                    .contains("RESULT pingpong server=0 client=0")
                    .contains("RESULT write-bw server=0 client=0")
                    // 16 error completions of work (14 WQEs, 2 receives), each followed by a flush entry of its
                    // QP (docs/rdma.md): 32
                    .contains("hwc completion_errors 32")
                    .contains("30000 iters in")
                    .containsPattern("(?m)^\\s*65536\\s+\\d+\\s+[0-9.]+\\s+[0-9.]+")
                    .doesNotContain("DMESG-ERRORS").doesNotContain("admin command timed out")
                    .doesNotContain("not a child of this shell");
            // The server side: the errors were the WQEs' own, the session never broke.
            Map<String, Long> counters = ((IonicDevice) server.device()).lastSessionCounters();
            System.out.println("device counters of the session: " + counters);
            // Exactly the hostile process's 14 bad WQEs failed (its inline-oversize one never reached the device).
            assertThat(counters.get("rdma.sq.errors")).as("send WQEs failed").isEqualTo(14);
            assertThat(counters.get("rdma.hw.completion_errors")).as("error CQEs: 16 of work, 16 flush entries")
                    .isEqualTo(32);
            assertThat(counters.keySet().stream().filter(k -> k.startsWith("refused.rdma")).toList())
                    .as("RDMA refusals").isEmpty();
            assertThat(counters.get("rdma.admin.errors")).as("admin commands failed").isZero();
            assertThat(counters.get("rdma.sq.wqes")).as("send WQEs executed").isGreaterThan(6000);
            assertThat(server.vfioUser().count(VfioCounter.PROTOCOL_CLOSES)).as("protocol closes").isZero();
        }
    }
}
